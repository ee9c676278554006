-- Row kinds (docs/design.md §7.5): every data row of both files is a unit to match, a refund, or
-- ignored or unreadable with a reason.
--
-- Parameters: $failed_payment_statuses and $refunded_payment_statuses (the policy's words),
-- $voided_order_statuses, $pending_order_statuses, $refunded_order_statuses,
-- $part_refunded_order_statuses and $paid_order_statuses (the approved meanings of the order statuses), read once per row or
-- order here, and the approved row kinds of the payments file: $kinds_on (whether row kinds
-- are read at all), $kinds_ignore, $kinds_refund, $kinds_known (every listed kind),
-- $kinds_refunded (capture values that say the capture was refunded). Needs
-- `currency_exponents` and the ENUM types (setup.sql), and the macros `order_amount_minor`,
-- `captured_amount_minor`, `refunded_amount_minor` and `reference_tokens`, which read the
-- amounts and references as the approved mapping says, and `no_payment_id`, whether a row
-- lacks its payment id (never where the mapping names each payment by its data row, and then
-- no payment id repeats): engine.py defines them.
--
-- The tables made here hold numbers and words of the ENUM types of setup.sql only: an id or a
-- text that a finding, the export or the ledger shows is read from `orders_rows` or
-- `payments_rows` by row number (rowid), for the rows that show it. Text on every row would
-- cost memory, and at a million rows spill to disk.

-- Every order id (order_key) by its head row (r): the first row of the id that carries an
-- amount, or its first row when none does. The head row stands for the order: its kind ('head',
-- or 'unreadable' with a reason), whether its order status is one of the policy's voided,
-- refunded or paid words, its currency (NULL unless an ISO 4217 code), the currency's exponent,
-- the amount in minor units and the order time in microseconds since the epoch. Every other row
-- of an id on several rows (`order_lines`) is a continuation, unless it carries another amount
-- (`order_conflicts`): that can only happen where several rows of the id carry an amount.
-- Each id's head row and counts are in `order_index`, made with `orders_rows` by every load;
-- the joins on an id's text read it there, so the head rows carry no text.
CREATE OR REPLACE TABLE order_heads AS
SELECT i.r,
       CASE WHEN NOT o.order_amount_filled OR o.order_amount IS NULL OR e.exponent IS NULL
            THEN 'unreadable'::kind_word ELSE 'head'::kind_word END AS kind,
       CASE WHEN NOT o.order_amount_filled THEN 'empty_amount'::reason_word
            WHEN o.order_amount IS NULL THEN 'unreadable_amount'::reason_word
            WHEN o.currency_code IS NULL THEN 'missing_currency'::reason_word
            WHEN e.exponent IS NULL THEN 'unreadable_currency'::reason_word END AS reason,
       list_contains($voided_order_statuses, o.order_status) AS voided,
       list_contains($pending_order_statuses, o.order_status) AS pending,
       list_contains($refunded_order_statuses, o.order_status) AS refunded_status,
       list_contains($part_refunded_order_statuses, o.order_status) AS part_refunded_status,
       list_contains($paid_order_statuses, o.order_status) AS paid_status,
       e.currency, e.exponent,
       order_amount_minor(o.order_amount, e.exponent) AS amount_minor,
       epoch_us(o.order_date) AS order_at
FROM order_index i JOIN orders_rows o ON o.rowid = i.r
LEFT JOIN currency_exponents e ON e.code = o.currency_code;

-- The other rows of the ids on several rows (r), each with its id's head row: a continuation,
-- or a conflict (`order_conflicts`). With the head rows and the rows without an order id, every
-- order row once (the row ledger).
CREATE OR REPLACE TABLE order_lines AS
SELECT o.rowid AS r, h.r AS head, h.several_amounts
FROM orders_rows o
JOIN (SELECT order_key, r, n_filled > 1 AS several_amounts FROM order_index WHERE n_rows > 1) h
  ON h.order_key = o.order_key
WHERE o.rowid <> h.r;

-- Rows that carry another amount than their head row (r), with that head: conflicts, among the
-- ids where several rows carry an amount. A row agrees with its head when both amounts read and
-- are equal, the currencies are the same (or both missing), and its order time, where both
-- rows have one, is the head's: the same total on another day is another order under a reused
-- id, not a line item of this one.
CREATE OR REPLACE TABLE order_conflicts AS
SELECT l.r, l.head
FROM (SELECT r, head FROM order_lines WHERE several_amounts) l
JOIN orders_rows o ON o.rowid = l.r
JOIN orders_rows head_row ON head_row.rowid = l.head
WHERE o.order_amount_filled
  AND NOT coalesce(o.order_amount = head_row.order_amount
                   AND o.currency_code IS NOT DISTINCT FROM head_row.currency_code
                   AND head_row.order_amount IS NOT NULL
                   AND coalesce(o.order_date = head_row.order_date, true), false);

-- Ids whose rows disagree about the order total, or whose head row does not read: each by its
-- head row (r), with the rows of the id that carry an amount (the head row and its conflicts),
-- what the findings show of the head row (the exponent of its currency, its amount), and for
-- the row ledger whether its status is a voided word.
CREATE OR REPLACE TABLE bad_orders AS
WITH bad AS (
    SELECT r FROM order_heads WHERE kind = 'unreadable'
    UNION
    SELECT head FROM order_conflicts
), id_rows AS (
    SELECT r AS head, r FROM bad
    UNION ALL
    SELECT head, r FROM order_conflicts
)
SELECT h.r, h.kind = 'unreadable' AS unreadable, CAST(h.reason AS VARCHAR) AS reason,
       coalesce(h.voided, false) AS voided,
       list(x.r + 1 ORDER BY x.r) AS rows, any_value(h.exponent) AS exponent,
       any_value(h.amount_minor) AS amount_minor
FROM order_heads h JOIN id_rows x ON x.head = h.r
GROUP BY h.r, h.kind, h.reason, h.voided;

-- Payment ids on more than one row: only their rows can be repeated payments.
CREATE OR REPLACE TABLE repeated_payment_ids AS
SELECT payment_id FROM payments_rows WHERE payment_id IS NOT NULL
GROUP BY 1 HAVING count(*) > 1;

-- Every payment row: a payment to match, a refund of one, or ignored or unreadable with a
-- reason. With row kinds approved, the kind column says which rows are captures. Each row
-- carries what `payments` and `refunds` read of it, so that neither joins `payments_rows` back:
-- on payment and refund rows the amounts in minor units (`refunded_minor` NULL when it does not
-- read) and the currency's exponent, and on payment rows the currency, the capture time in
-- microseconds since the epoch, whether the status says refunded, and whether its payment id
-- is on several rows (`payment_copies` counts those).
-- A payment's reference: the first id it names when it names several (`refs` counts them,
-- read only where a reference names several ids: a few rows), and the head row of that
-- order (order_r) only when it names exactly one. A refund's: its reference as written, or
-- where it holds separators the one id it names (`Refund to buyer for Order #3522077086`: a
-- statement's refund, with no payment id to reach its capture by, names its order so).
-- This is the only join of the payments on text; everything after it matches integers.
CREATE OR REPLACE TABLE payment_row_kinds AS
WITH flags AS (
    SELECT p.rowid AS r, p.payment_id, p.order_id, p.several_refs, p.ref_key, p.currency_code,
           e.currency, e.exponent, p.captured_amount_filled, p.captured_amount, p.refunded_amount,
           p.refunded_amount_filled,
           p.captured_at, p.payment_status, p.row_kind,
           list_contains($failed_payment_statuses, p.payment_status) AS failed,
           $kinds_on AND (list_contains($kinds_ignore, p.row_kind)
                          OR list_contains($kinds_ignore, p.payment_status)) AS ignored_kind,
           $kinds_on AND coalesce(NOT list_contains($kinds_known, p.row_kind), true)
               AS unknown_kind,
           list_contains($kinds_refund, p.row_kind) AS refund_kind
    FROM payments_rows p LEFT JOIN currency_exponents e ON e.code = p.currency_code
), kinds AS (
    SELECT *,
      CASE
        WHEN failed THEN 'ignored'::kind_word
        WHEN ignored_kind THEN 'ignored'::kind_word
        WHEN unknown_kind THEN 'unreadable'::kind_word
        -- A refund returns what its captured or refunded amount says (by its size); one whose
        -- currency or amount does not read is unreadable, never a refund of everything.
        WHEN refund_kind AND (exponent IS NULL OR coalesce(captured_amount, refunded_amount) IS NULL)
          THEN 'unreadable'::kind_word
        WHEN refund_kind THEN 'refund'::kind_word
        -- A negative captured amount is money going back: a refund or reversal, by its size.
        WHEN captured_amount < 0 AND exponent IS NOT NULL THEN 'refund'::kind_word
        WHEN no_payment_id(payment_id) OR NOT captured_amount_filled OR captured_amount IS NULL
          OR exponent IS NULL THEN 'unreadable'::kind_word
        WHEN captured_amount = 0 THEN 'ignored'::kind_word
        ELSE 'payment'::kind_word
      END AS kind,
      CASE
        WHEN failed THEN 'failed_attempt'::reason_word
        WHEN ignored_kind THEN 'row_kind'::reason_word
        WHEN unknown_kind THEN 'unknown_row_kind'::reason_word
        WHEN refund_kind AND currency_code IS NULL THEN 'missing_currency'::reason_word
        WHEN refund_kind AND exponent IS NULL THEN 'unreadable_currency'::reason_word
        WHEN refund_kind AND coalesce(captured_amount, refunded_amount) IS NULL
             AND (captured_amount_filled OR refunded_amount_filled)
          THEN 'unreadable_amount'::reason_word
        WHEN refund_kind AND coalesce(captured_amount, refunded_amount) IS NULL
          THEN 'empty_amount'::reason_word
        WHEN refund_kind THEN NULL
        WHEN captured_amount < 0 AND exponent IS NOT NULL THEN NULL
        WHEN no_payment_id(payment_id) THEN 'empty_payment_id'::reason_word
        WHEN NOT captured_amount_filled THEN 'empty_amount'::reason_word
        WHEN captured_amount IS NULL THEN 'unreadable_amount'::reason_word
        WHEN currency_code IS NULL THEN 'missing_currency'::reason_word
        WHEN exponent IS NULL THEN 'unreadable_currency'::reason_word
        WHEN captured_amount = 0 THEN 'zero_capture'::reason_word
      END AS reason
    FROM flags
), linked AS (
    SELECT *, CASE WHEN kind IN ('payment', 'refund') AND several_refs
                   THEN reference_tokens(order_id) END AS tokens
    FROM kinds
), keyed AS (
    SELECT *,
           CASE WHEN kind = 'refund' AND several_refs AND len(tokens) = 1 THEN tokens[1]
                WHEN kind = 'refund' THEN ref_key
                WHEN kind = 'payment' AND several_refs THEN tokens[1]
                WHEN kind = 'payment' THEN ref_key END AS link_key,
           CASE WHEN order_id IS NULL THEN 0
                WHEN several_refs THEN len(tokens)
                ELSE 1 END AS refs
    FROM linked
)
SELECT k.r, k.kind, k.reason,
       k.kind = 'payment' AND rp.payment_id IS NOT NULL AS repeated,
       CASE WHEN k.kind = 'payment' THEN k.currency END AS currency,
       CASE WHEN k.kind IN ('payment', 'refund') THEN k.exponent END AS exponent, k.refs,
       CASE WHEN k.kind = 'refund' OR k.refs = 1 THEN f.r END AS order_r,
       CASE WHEN k.kind IN ('payment', 'refund')
            THEN captured_amount_minor(k.captured_amount, k.exponent) END AS amount_minor,
       CASE WHEN k.kind IN ('payment', 'refund')
            THEN refunded_amount_minor(k.refunded_amount, k.exponent) END AS refunded_minor,
       CASE WHEN k.kind = 'payment' THEN epoch_us(k.captured_at) END AS captured_at,
       -- (false, never NULL, without a status column: `NOT any_refunded` must hold then)
       CASE WHEN k.kind = 'payment'
            THEN coalesce(list_contains($refunded_payment_statuses, k.payment_status), false)
                 OR coalesce(list_contains($kinds_refunded, k.row_kind), false)
                 OR coalesce(list_contains($kinds_refunded, k.payment_status), false) END
           AS refunded_status
FROM keyed k
LEFT JOIN order_index f ON f.order_key = k.link_key
LEFT JOIN repeated_payment_ids rp ON rp.payment_id = k.payment_id;

-- The head row of every id that a payment naming several ids names (a few rows; `multi_links`
-- keeps those of the orders the engine classifies), while the ids' index is there.
CREATE OR REPLACE TABLE multi_tokens AS
SELECT p.r AS payment_r, f.r AS order_r
FROM (SELECT k.r, unnest(reference_tokens(pr.order_id)) AS token
      FROM payment_row_kinds k JOIN payments_rows pr ON pr.rowid = k.r
      WHERE k.kind = 'payment' AND k.refs > 1) p
JOIN order_index f ON f.order_key = p.token;

-- The value that decided an ignored or unknown row kind, for the findings and the export: a
-- few rows, and none unless row kinds are read.
CREATE OR REPLACE TABLE payment_kind_values AS
SELECT k.r,
       CASE WHEN list_contains($kinds_ignore, p.row_kind) OR NOT $kinds_on THEN p.row_kind
            WHEN list_contains($kinds_ignore, p.payment_status) THEN p.payment_status
            ELSE p.row_kind END AS value
FROM payment_row_kinds k JOIN payments_rows p ON p.rowid = k.r
WHERE k.reason IN ('row_kind', 'unknown_row_kind');

-- Payments: one payment id on several rows (its first row, r, stands for them in the finding).
-- Rows of one amount in one currency are one payment delivered again, whatever their
-- reference says: the first of them counts, the others (`copies`) do not. Rows of several
-- amounts (`same` false) are several captures under one id: the first row of each amount
-- counts for the order it names, so that no amount is dropped, and `total_minor` is what those
-- add up to in one currency.
CREATE OR REPLACE TABLE payment_copies AS
WITH variants AS (
    SELECT p.payment_id, k.amount_minor, k.currency, min(k.r) AS first, list(k.r) AS rs
    FROM payment_row_kinds k JOIN payments_rows p ON p.rowid = k.r
    WHERE k.repeated
    GROUP BY ALL
)
SELECT min(first) AS r, list_sort(flatten(list(list_transform(rs, lambda x: x + 1)))) AS rows,
       count(*) = 1 AS same,
       CASE WHEN count(DISTINCT currency) = 1 THEN sum(amount_minor) END AS total_minor,
       flatten(list(list_filter(rs, lambda x: x <> first))) AS copies
FROM variants
GROUP BY payment_id HAVING sum(len(rs)) > 1;
