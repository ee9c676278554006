-- Row kinds (docs/design.md §7.5): every data row of both files is a unit to match, a refund, or
-- ignored or unreadable with a reason.
--
-- Parameters: $failed_payment_statuses (the policy's words), and the approved row kinds of the
-- payments file: $kinds_on (whether row kinds are read at all), $kinds_ignore, $kinds_refund,
-- $kinds_known (every listed kind). Needs `currency_exponents` (setup.sql).

-- Every order row gets a kind: the head of its order (the first row of the id that carries
-- an amount), a continuation (no amount, or the head's amount again), a conflict (another
-- amount under the same id), ignored or unreadable, each with a reason.
-- One pass: each id's head row (r) with its amount and currency (`head`, NULL when no row
-- of the id has an amount), so that a row is compared with its head without a second join.
CREATE OR REPLACE TABLE order_heads AS
SELECT order_key,
       coalesce(min(rowid) FILTER (WHERE order_amount_filled), min(rowid)) AS r,
       arg_min({'amount': order_amount, 'currency_code': currency_code}, rowid)
           FILTER (WHERE order_amount_filled) AS head
FROM orders_rows WHERE order_key IS NOT NULL GROUP BY 1;

-- `status` is the head row's order status (NULL on other rows), for the row ledger.
CREATE OR REPLACE TABLE order_row_kinds AS
WITH rows AS (
    SELECT o.rowid AS r, o.order_key, h.r AS head, o.order_amount_filled AS filled,
           o.order_amount AS amount, o.currency_code, o.order_status,
           e.exponent IS NOT NULL AS known_currency,
           h.head.amount AS head_amount, h.head.currency_code AS head_currency
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
  CASE WHEN r.r = r.head THEN r.order_status END AS status
FROM rows r;

-- Ids whose rows disagree about the order total, or whose head row does not read.
CREATE OR REPLACE TABLE bad_orders AS
SELECT k.order_key, h.r, h.kind = 'unreadable' AS unreadable, h.reason,
       list(k.r + 1 ORDER BY k.r) FILTER (WHERE k.kind IN ('head', 'unreadable', 'conflict'))
           AS rows
FROM order_row_kinds k JOIN order_heads h0 ON h0.order_key = k.order_key
JOIN order_row_kinds h ON h.r = h0.r
WHERE k.order_key IN (SELECT order_key FROM order_row_kinds WHERE kind = 'conflict')
   OR h.kind = 'unreadable'
GROUP BY k.order_key, h.r, h.kind, h.reason;

-- Orders the engine classifies: one per id, read from its head row.
CREATE OR REPLACE TABLE order_first AS
SELECT order_key, r FROM order_row_kinds
WHERE kind = 'head' AND order_key NOT IN (SELECT order_key FROM bad_orders);

-- Every payment row: a payment to match, a refund of one, or ignored or unreadable with a
-- reason. With row kinds approved, the kind column says which rows are captures. Each row
-- carries its payment id, so that repeated payments are counted from this table alone.
CREATE OR REPLACE TABLE payment_row_kinds AS
SELECT p.rowid AS r,
  CASE
    WHEN list_contains($failed_payment_statuses, p.payment_status) THEN 'ignored'
    WHEN $kinds_on AND (list_contains($kinds_ignore, p.row_kind)
                        OR list_contains($kinds_ignore, p.payment_status))
      THEN 'ignored'
    WHEN $kinds_on AND coalesce(NOT list_contains($kinds_known, p.row_kind), true) THEN 'unreadable'
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
  p.payment_id
FROM payments_rows p LEFT JOIN currency_exponents e ON e.code = p.currency_code;

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
