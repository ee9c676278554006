-- Row kinds (docs/design.md §7.5): every data row of both files is a unit to match, a refund, or
-- ignored or unreadable with a reason.
--
-- Parameters: $failed_payment_statuses and $refunded_payment_statuses (the policy's words), and
-- the approved row kinds of the payments file: $kinds_on (whether row kinds are read at all),
-- $kinds_ignore, $kinds_refund, $kinds_known (every listed kind). Needs `currency_exponents`
-- (setup.sql) and the macros `order_amount_minor`, `captured_amount_minor`,
-- `refunded_amount_minor` and `reference_tokens`, which read the amounts and references as the
-- approved mapping says (engine.py defines them).

-- Every order row gets a kind: the head of its order (the first row of the id that carries
-- an amount), a continuation (no amount, or the head's amount again), a conflict (another
-- amount under the same id), ignored or unreadable, each with a reason.
-- One pass: each id's head row (r) with its amount and currency (`head_amount`,
-- `head_currency`: NULL when no row of the id has an amount), so that a row is compared with
-- its head without a second join. `arg_min_null` keeps a NULL amount or currency of the head
-- row, so both always come from that one row.
CREATE OR REPLACE TABLE order_heads AS
SELECT order_key,
       coalesce(min(rowid) FILTER (WHERE order_amount_filled), min(rowid)) AS r,
       arg_min_null(order_amount, rowid) FILTER (WHERE order_amount_filled) AS head_amount,
       arg_min_null(currency_code, rowid) FILTER (WHERE order_amount_filled) AS head_currency
FROM orders_rows WHERE order_key IS NOT NULL GROUP BY 1;

-- `status` is the head row's order status (NULL on other rows), for the row ledger. Each row
-- carries what later steps read of it, so that none joins `orders_rows` back: its order id and
-- currency (findings, exceptions CSV), and on head rows the currency's exponent, the amount in
-- minor units and the order time in microseconds since the epoch (`order_findings`).
CREATE OR REPLACE TABLE order_row_kinds AS
WITH rows AS (
    SELECT o.rowid AS r, o.order_key, h.r AS head, o.order_amount_filled AS filled,
           o.order_amount AS amount, o.currency_code, o.order_status, o.order_id,
           o.order_date, e.exponent,
           e.exponent IS NOT NULL AS known_currency,
           h.head_amount, h.head_currency
    FROM orders_rows o LEFT JOIN order_heads h ON h.order_key = o.order_key
    LEFT JOIN currency_exponents e ON e.code = o.currency_code
)
SELECT r.r, r.order_key, r.head,
  CASE
    WHEN r.order_key IS NULL THEN CASE WHEN r.filled THEN 'unreadable' ELSE 'ignored' END
    WHEN r.r = r.head THEN
        CASE WHEN NOT r.filled OR r.amount IS NULL OR NOT r.known_currency
             THEN 'unreadable' ELSE 'head' END
    WHEN NOT r.filled THEN 'ignored'
    WHEN r.amount = r.head_amount AND r.currency_code IS NOT DISTINCT FROM r.head_currency
         AND r.head_amount IS NOT NULL THEN 'ignored'
    ELSE 'conflict'
  END AS kind,
  CASE
    WHEN r.order_key IS NULL THEN
        CASE WHEN r.filled THEN 'empty_order_id' ELSE 'no_order_id' END
    WHEN r.r = r.head THEN
        CASE WHEN NOT r.filled THEN 'empty_amount'
             WHEN r.amount IS NULL THEN 'unreadable_amount'
             WHEN r.currency_code IS NULL THEN 'missing_currency'
             WHEN NOT r.known_currency THEN 'unreadable_currency' END
    WHEN NOT r.filled THEN 'line_item_continuation'
    WHEN r.amount = r.head_amount AND r.currency_code IS NOT DISTINCT FROM r.head_currency
         AND r.head_amount IS NOT NULL THEN 'line_item_continuation'
    ELSE 'another_amount_under_this_id'
  END AS reason,
  CASE WHEN r.r = r.head THEN r.order_status END AS status,
  r.order_id, r.currency_code,
  CASE WHEN r.r = r.head THEN r.exponent END AS exponent,
  CASE WHEN r.r = r.head THEN order_amount_minor(r.amount, r.exponent) END AS amount_minor,
  CASE WHEN r.r = r.head THEN epoch_us(r.order_date) END AS order_at
FROM rows r;

-- Ids whose rows disagree about the order total, or whose head row does not read: each by its
-- head row (r), with the rows of the id that carry an amount. Every row of an id names the
-- same head, and only a head row of an id can be unreadable.
CREATE OR REPLACE TABLE bad_orders AS
WITH heads AS (
    SELECT r, order_key, kind, reason FROM order_row_kinds
    WHERE r = head
      AND (kind = 'unreadable' OR r IN (SELECT head FROM order_row_kinds WHERE kind = 'conflict'))
)
SELECT h.order_key, h.r, h.kind = 'unreadable' AS unreadable, h.reason,
       list(k.r + 1 ORDER BY k.r) FILTER (WHERE k.kind IN ('head', 'unreadable', 'conflict'))
           AS rows
FROM heads h JOIN order_row_kinds k ON k.head = h.r
GROUP BY h.order_key, h.r, h.kind, h.reason;

-- Every payment row: a payment to match, a refund of one, or ignored or unreadable with a
-- reason. With row kinds approved, the kind column says which rows are captures. Each row
-- carries its payment id, so that repeated payments are counted from this table alone, and
-- what `payments` and `refunds` read of it, so that neither joins `payments_rows` back: its
-- currency and exponent, and on payment and refund rows the amounts in minor units
-- (`refunded_minor` NULL when it does not read), the capture time in microseconds since the
-- epoch, whether the status says refunded, and the order its reference names.
-- A payment's reference: the first id it names when it names several (`refs` counts them,
-- read only where a reference names several ids: a few rows), and the head row of that
-- order (order_r) only when it names exactly one. A refund's: its reference as written.
-- This is the only join on text; everything after it matches integers.
CREATE OR REPLACE TABLE payment_row_kinds AS
WITH rows AS (
    SELECT p.rowid AS r,
      CASE
        WHEN list_contains($failed_payment_statuses, p.payment_status) THEN 'ignored'
        WHEN $kinds_on AND (list_contains($kinds_ignore, p.row_kind)
                            OR list_contains($kinds_ignore, p.payment_status))
          THEN 'ignored'
        WHEN $kinds_on AND coalesce(NOT list_contains($kinds_known, p.row_kind), true)
          THEN 'unreadable'
        -- A refund whose currency or written amount does not read is not a whole-capture refund.
        WHEN list_contains($kinds_refund, p.row_kind)
             AND (e.exponent IS NULL OR (p.captured_amount_filled AND p.captured_amount IS NULL))
          THEN 'unreadable'
        WHEN list_contains($kinds_refund, p.row_kind) THEN 'refund'
        WHEN p.payment_id IS NULL OR NOT p.captured_amount_filled OR p.captured_amount IS NULL
          OR e.exponent IS NULL THEN 'unreadable'
        WHEN p.captured_amount = 0 THEN 'ignored'
        ELSE 'payment'
      END AS kind,
      CASE
        WHEN list_contains($failed_payment_statuses, p.payment_status) THEN 'failed_attempt'
        WHEN $kinds_on AND (list_contains($kinds_ignore, p.row_kind)
                            OR list_contains($kinds_ignore, p.payment_status))
          THEN 'row_kind'
        WHEN $kinds_on AND coalesce(NOT list_contains($kinds_known, p.row_kind), true)
          THEN 'unknown_row_kind'
        WHEN list_contains($kinds_refund, p.row_kind) AND p.currency_code IS NULL
          THEN 'missing_currency'
        WHEN list_contains($kinds_refund, p.row_kind) AND e.exponent IS NULL
          THEN 'unreadable_currency'
        WHEN list_contains($kinds_refund, p.row_kind)
             AND p.captured_amount_filled AND p.captured_amount IS NULL
          THEN 'unreadable_amount'
        WHEN list_contains($kinds_refund, p.row_kind) THEN NULL
        WHEN p.payment_id IS NULL THEN 'empty_payment_id'
        WHEN NOT p.captured_amount_filled THEN 'empty_amount'
        WHEN p.captured_amount IS NULL THEN 'unreadable_amount'
        WHEN p.currency_code IS NULL THEN 'missing_currency'
        WHEN e.exponent IS NULL THEN 'unreadable_currency'
        WHEN p.captured_amount = 0 THEN 'zero_capture'
      END AS reason,
      -- The value that decided an ignored or unknown kind, for the exceptions CSV.
      CASE WHEN list_contains($kinds_ignore, p.row_kind) OR NOT $kinds_on THEN p.row_kind
           WHEN list_contains($kinds_ignore, p.payment_status) THEN p.payment_status
           ELSE p.row_kind END AS value,
      p.payment_id, p.currency_code, e.exponent, p.order_id, p.several_refs, p.ref_key,
      p.captured_amount, p.refunded_amount, p.captured_at, p.payment_status
    FROM payments_rows p LEFT JOIN currency_exponents e ON e.code = p.currency_code
), linked AS (
    SELECT *, CASE WHEN kind = 'payment' AND several_refs THEN reference_tokens(order_id) END
                  AS tokens
    FROM rows
), keyed AS (
    SELECT *,
           CASE WHEN kind = 'refund' THEN ref_key
                WHEN kind = 'payment' AND several_refs THEN tokens[1]
                WHEN kind = 'payment' THEN ref_key END AS link_key,
           CASE WHEN order_id IS NULL THEN 0
                WHEN several_refs THEN len(tokens)
                ELSE 1 END AS refs
    FROM linked
)
SELECT k.r, k.kind, k.reason, k.value, k.payment_id, k.currency_code, k.exponent,
       k.link_key AS ref_key, k.refs,
       CASE WHEN k.kind = 'refund' OR k.refs = 1 THEN f.r END AS order_r,
       CASE WHEN k.kind IN ('payment', 'refund')
            THEN captured_amount_minor(k.captured_amount, k.exponent) END AS amount_minor,
       CASE WHEN k.kind IN ('payment', 'refund')
            THEN refunded_amount_minor(k.refunded_amount, k.exponent) END AS refunded_minor,
       CASE WHEN k.kind = 'payment' THEN epoch_us(k.captured_at) END AS captured_at,
       CASE WHEN k.kind = 'payment'
            THEN list_contains($refunded_payment_statuses, k.payment_status) END
           AS refunded_status
FROM keyed k LEFT JOIN order_heads f ON f.order_key = k.link_key;

-- Payments: repeated rows of one payment id counted once.
CREATE OR REPLACE TABLE payment_copies AS
WITH matchable AS (
    SELECT r, payment_id FROM payment_row_kinds WHERE kind = 'payment'
), repeated AS (
    SELECT payment_id FROM matchable GROUP BY 1 HAVING count(*) > 1
)
SELECT min(r) AS r, list(r + 1 ORDER BY r) AS rows
FROM matchable WHERE payment_id IN (SELECT payment_id FROM repeated)
GROUP BY payment_id;
