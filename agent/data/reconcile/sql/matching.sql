-- Matching (docs/design.md §7.5): payments and refunds in integer minor units, and the category of
-- every order from what the payments naming exactly that order add up to.
--
-- Parameters, all the policy's: $amount_tolerance_minor, $window_hours_before,
-- $window_days_after, $refunded_payment_statuses, $voided_order_statuses,
-- $refunded_order_statuses, $paid_order_statuses. The macros `order_amount_minor`,
-- `captured_amount_minor`, `refunded_amount_minor` and `reference_tokens` read the amounts and
-- references as the approved mapping says (engine.py defines them).

-- A payment naming exactly one order carries that order's first row (order_r): the only
-- join on text; everything after it matches integers.
CREATE OR REPLACE TABLE payments AS
SELECT p.r, p.payment_id, p.ref_key, p.refs, p.currency, e.exponent,
       captured_amount_minor(p.captured_amount, e.exponent) AS amount_minor,
       coalesce(refunded_amount_minor(p.refunded_amount, e.exponent), 0) AS refunded_minor,
       p.captured_at, p.refunded_status,
       CASE WHEN p.refs = 1 THEN f.r END AS order_r
FROM (SELECT r, payment_id,
             CASE WHEN several_refs THEN tokens[1] ELSE ref_key END AS ref_key,
             CASE WHEN order_id IS NULL THEN 0
                  WHEN several_refs THEN len(tokens)
                  ELSE 1 END AS refs,
             currency, captured_amount, refunded_amount, captured_at, refunded_status
      FROM (SELECT p.rowid AS r, p.payment_id, p.order_id, p.several_refs, p.ref_key,
                   -- Read only where a reference names several ids (a few rows).
                   CASE WHEN p.several_refs THEN reference_tokens(p.order_id) END AS tokens,
                   p.currency_code AS currency, p.captured_amount, p.refunded_amount,
                   epoch_us(p.captured_at) AS captured_at,
                   list_contains($refunded_payment_statuses, p.payment_status)
                       AS refunded_status
            FROM payments_rows p
            SEMI JOIN payment_row_kinds k ON k.r = p.rowid AND k.kind = 'payment'
            ANTI JOIN (SELECT unnest(rows[2:]) - 1 AS r FROM payment_copies) c
                   ON c.r = p.rowid)) p
LEFT JOIN currency_exponents e ON e.code = p.currency
LEFT JOIN order_heads f ON f.order_key = p.ref_key;

-- Refund rows: each returns money of the capture with the same payment id, or else of the
-- order its reference names. Its amount is the captured amount's or the refunded amount's
-- size (exports write refunds negative or positive); none readable: the whole capture.
CREATE OR REPLACE TABLE refunds AS
SELECT p.r, p.payment_id, coalesce(c.order_r, f.r) AS order_r, c.r AS capture_r,
       p.currency_code AS currency,
       abs(coalesce(
           captured_amount_minor(p.captured_amount, e.exponent),
           refunded_amount_minor(p.refunded_amount, e.exponent)))
           AS amount_minor
FROM (SELECT rowid AS r, payment_id, ref_key, currency_code, captured_amount,
             refunded_amount
      FROM payments_rows
      WHERE rowid IN (SELECT r FROM payment_row_kinds WHERE kind = 'refund')) p
LEFT JOIN currency_exponents e ON e.code = p.currency_code
LEFT JOIN (SELECT payment_id, any_value(r) AS r, any_value(order_r) AS order_r
           FROM payments WHERE payment_id IS NOT NULL GROUP BY 1) c
       ON c.payment_id = p.payment_id
LEFT JOIN order_heads f ON f.order_key = p.ref_key;

-- What the refund rows of each order returned (amount unknown: the whole capture). Only
-- refunds in the order's currency count; another currency is a finding of its own.
CREATE OR REPLACE TABLE order_refunds AS
SELECT rf.order_r, coalesce(sum(rf.amount_minor), 0) AS refunded,
       bool_or(rf.amount_minor IS NULL) AS whole
FROM refunds rf JOIN orders_rows o ON o.rowid = rf.order_r
WHERE rf.currency IS NOT DISTINCT FROM o.currency_code GROUP BY 1;

-- Orders that more than one payment names.
CREATE OR REPLACE TABLE shared_orders AS
SELECT order_r FROM payments WHERE order_r IS NOT NULL AND amount_minor IS NOT NULL
GROUP BY 1 HAVING count(*) > 1;

-- Classification of every order: the first category that applies (CATEGORY_ORDER), from
-- what the payments naming exactly that order add up to.
CREATE OR REPLACE TABLE order_findings AS
WITH orders AS (
    SELECT f.r, f.order_key, o.order_id, o.currency_code AS currency, e.exponent,
           order_amount_minor(o.order_amount, e.exponent) AS amount_minor,
           epoch_us(o.order_date) AS order_at, o.order_status
    FROM order_first f JOIN orders_rows o ON o.rowid = f.r
    LEFT JOIN currency_exponents e ON e.code = o.currency_code
), by_payment AS (
    SELECT order_r, 1 AS n, amount_minor AS captured, refunded_minor AS refunded,
           currency AS currency_low, currency AS currency_high,
           captured_at AS first_capture, captured_at AS last_capture,
           amount_minor AS smallest, amount_minor AS largest,
           refunded_minor >= amount_minor OR refunded_status AS all_refunded,
           refunded_status AS any_refunded
    FROM payments
    WHERE order_r IS NOT NULL AND amount_minor IS NOT NULL
      AND order_r NOT IN (SELECT order_r FROM shared_orders)
    UNION ALL
    SELECT order_r, count(*), sum(amount_minor), sum(refunded_minor), min(currency),
           max(currency), min(captured_at), max(captured_at), min(amount_minor),
           max(amount_minor), bool_and(refunded_minor >= amount_minor OR refunded_status),
           bool_or(refunded_status)
    FROM payments
    WHERE order_r IN (SELECT order_r FROM shared_orders) AND amount_minor IS NOT NULL
    GROUP BY 1
), by_order AS (
    -- Refund rows add to what the order's captures say was refunded.
    SELECT b.order_r, b.n, b.captured, b.refunded + coalesce(x.refunded, 0) AS refunded,
           b.currency_low, b.currency_high, b.first_capture, b.last_capture, b.smallest,
           b.largest,
           b.all_refunded OR coalesce(x.whole, false)
               OR (x.order_r IS NOT NULL AND b.refunded + x.refunded >= b.captured)
               AS all_refunded,
           b.any_refunded OR x.order_r IS NOT NULL AS any_refunded
    FROM by_payment b LEFT JOIN order_refunds x ON x.order_r = b.order_r
)
SELECT o.r, o.order_id, o.order_key, o.currency, o.exponent, o.amount_minor, b.n,
       b.captured,
  CASE
    WHEN o.amount_minor IS NULL THEN 'unreadable_row'
    WHEN b.n IS NULL THEN
        CASE WHEN list_contains($voided_order_statuses, o.order_status) THEN NULL
             ELSE 'order_without_capture' END
    WHEN b.currency_low IS DISTINCT FROM o.currency
      OR b.currency_high IS DISTINCT FROM o.currency THEN 'currency_mismatch'
    WHEN (list_contains($voided_order_statuses, o.order_status)
          AND b.captured - b.refunded > $amount_tolerance_minor)
      OR (list_contains($refunded_order_statuses, o.order_status)
          AND b.refunded = 0 AND NOT b.any_refunded)
      OR (b.all_refunded AND list_contains($paid_order_statuses, o.order_status))
      THEN 'status_mismatch'
    WHEN b.n >= 2 AND b.captured > o.amount_minor + $amount_tolerance_minor
         AND (abs(b.smallest - o.amount_minor) <= $amount_tolerance_minor
              OR abs(b.largest - o.amount_minor) <= $amount_tolerance_minor OR b.n >= 3)
      THEN 'duplicate_capture?'
    WHEN abs(b.captured - o.amount_minor) <= $amount_tolerance_minor THEN
        -- Timestamps are compared as microseconds since the epoch (UTC): plain integers.
        CASE WHEN b.first_capture < o.order_at - $window_hours_before * 3600000000
               OR b.last_capture > o.order_at + $window_days_after * 86400000000
             THEN 'capture_outside_window' END
    WHEN b.n = 1 THEN 'amount_mismatch'
    WHEN b.captured < o.amount_minor THEN 'partial_capture'
    ELSE 'over_capture'
  END AS category
FROM orders o LEFT JOIN by_order b ON b.order_r = o.r;
