-- Matching (docs/design.md §7.5): payments and refunds in integer minor units, and the category of
-- every order from what the payments naming exactly that order add up to.
--
-- Parameters, all the policy's: $amount_tolerance_minor, $window_hours_before,
-- $window_days_after. Amounts, times, references and the order statuses were read in minor
-- units, microseconds, head rows and flags by row_kinds.sql (`order_heads`,
-- `payment_row_kinds`, and `multi_tokens` for the references that name several orders); no
-- text is joined here but the few payment ids that refunds name.

-- Payments: the payment rows, a payment id's rows of one amount counted once (the first row
-- stands for them; `payment_copies`). A payment naming exactly one order carries that order's head row
-- (order_r), from `payment_row_kinds`. Its payment id is read from `payments_rows` (by r)
-- where it is shown.
CREATE OR REPLACE TABLE payments AS
SELECT k.r, k.refs, k.currency, k.exponent, k.amount_minor,
       -- Refunded amounts by their size: ledgers write them negative as often as positive.
       coalesce(abs(k.refunded_minor), 0) AS refunded_minor, k.captured_at, k.refunded_status,
       k.order_r
FROM payment_row_kinds k
ANTI JOIN (SELECT unnest(copies) AS r FROM payment_copies) c ON c.r = k.r
WHERE k.kind = 'payment';

-- Refund rows: each returns money of the capture with the same payment id (`capture_r`), or
-- else of the order its reference names. Its amount is the captured amount's or the refunded
-- amount's size (exports write refunds negative or positive); a refund row whose amount does
-- not read is unreadable (row_kinds.sql), never a refund of the whole capture.
CREATE OR REPLACE TABLE refunds AS
WITH rows AS (
    SELECT k.r, p.payment_id, k.order_r, p.currency_code, k.amount_minor, k.refunded_minor
    FROM payment_row_kinds k JOIN payments_rows p ON p.rowid = k.r
    WHERE k.kind = 'refund'
), captures AS (
    -- The payments whose payment id a refund row carries (one payment per id).
    SELECT p.payment_id, any_value(c.r) AS r, any_value(c.order_r) AS order_r
    FROM payments_rows p JOIN payments c ON c.r = p.rowid
    WHERE p.payment_id IN (SELECT payment_id FROM rows WHERE payment_id IS NOT NULL)
    GROUP BY 1
)
SELECT p.r, p.payment_id, coalesce(c.order_r, p.order_r) AS order_r,
       p.currency_code AS currency,
       abs(coalesce(p.amount_minor, p.refunded_minor)) AS amount_minor,
       c.r AS capture_r
FROM rows p LEFT JOIN captures c ON c.payment_id = p.payment_id;

-- What `payments` and `refunds` read of the payment rows is in them now: `payment_row_kinds`
-- keeps what the row ledger and the findings read of every row (r, kind, reason, order_r), and
-- gives back the memory of the rest (DuckDB drops a column without copying the others: at 1M
-- rows 6 ms against 25 ms for a copy of the four kept).
ALTER TABLE payment_row_kinds DROP COLUMN repeated;
ALTER TABLE payment_row_kinds DROP COLUMN currency;
ALTER TABLE payment_row_kinds DROP COLUMN exponent;
ALTER TABLE payment_row_kinds DROP COLUMN refs;
ALTER TABLE payment_row_kinds DROP COLUMN amount_minor;
ALTER TABLE payment_row_kinds DROP COLUMN refunded_minor;
ALTER TABLE payment_row_kinds DROP COLUMN captured_at;
ALTER TABLE payment_row_kinds DROP COLUMN refunded_status;

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

-- Payments naming several orders, and the orders they name: of those the engine classifies
-- (one per id, read from its head row, but not the ids of `bad_orders`). Those orders are
-- reviewed with that payment, not on their own (`order_findings`).
CREATE OR REPLACE TABLE multi_links AS
SELECT t.payment_r, t.order_r
FROM multi_tokens t JOIN order_heads f ON f.r = t.order_r
WHERE f.kind = 'head' AND f.r NOT IN (SELECT r FROM bad_orders)
  AND t.payment_r IN (SELECT r FROM payments WHERE refs > 1);

-- Classification of every order the engine classifies (one per id, read from its head row;
-- not the ids of `bad_orders`): the first category that applies (CATEGORY_ORDER), from what
-- the payments naming exactly that order add up to; none for an order that a payment naming
-- several orders names (`multi_links`). With it, for the row ledger, whether the order's status
-- is a voided word (a voided order nobody paid is ignored, not a finding).
CREATE OR REPLACE TABLE order_findings AS
WITH orders AS (
    SELECT h.r, h.currency, h.exponent, h.amount_minor, h.order_at, h.voided, h.pending,
           h.refunded_status, h.part_refunded_status, h.paid_status
    FROM order_heads h ANTI JOIN bad_orders b ON b.r = h.r
    WHERE h.kind = 'head'
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
    -- Refund rows add to what the order's captures say was refunded, unless the captures'
    -- refunded amounts say it too: a refund written both in a capture's refunded column and
    -- as a row of its own is counted once (the larger of the two).
    -- A refunded status says every capture was refunded only where no amount refunded is
    -- known or the amounts say so too: PayPal's `Partially Refunded` beside a refund row of
    -- 30.00 of 100.00 is not all of it.
    SELECT b.order_r, b.n, b.captured,
           CASE WHEN b.refunded > 0 AND x.refunded > 0 THEN greatest(b.refunded, x.refunded)
                ELSE b.refunded + coalesce(x.refunded, 0) END AS refunded,
           b.currency_low, b.currency_high, b.first_capture, b.last_capture, b.smallest,
           b.largest,
           (b.all_refunded AND (b.refunded + coalesce(x.refunded, 0) = 0
                                OR b.refunded + coalesce(x.refunded, 0) >= b.captured))
               OR coalesce(x.whole, false)
               OR (x.order_r IS NOT NULL AND b.refunded + x.refunded >= b.captured)
               AS all_refunded,
           b.any_refunded OR x.order_r IS NOT NULL AS any_refunded,
           coalesce(x.whole, false) AS whole_refund
    FROM by_payment b LEFT JOIN order_refunds x ON x.order_r = b.order_r
)
SELECT o.r, o.currency, o.exponent, o.amount_minor, b.n, b.captured,
  coalesce(o.voided, false) AS voided,
  coalesce(o.pending, false) AS pending,
  CAST(CASE
    WHEN o.r IN (SELECT order_r FROM multi_links) THEN NULL
    WHEN o.amount_minor IS NULL THEN 'unreadable_row'
    WHEN b.n IS NULL THEN  -- nobody paid: as expected for a voided order, or one of 0.00
        -- (a credit note, a negative total, owes the customer: nothing to capture either; an
        -- order whose status says it is not paid yet agrees with no payment)
        CASE WHEN o.voided OR o.pending OR o.amount_minor <= 0 THEN NULL
             ELSE 'order_without_capture' END
    WHEN b.currency_low IS DISTINCT FROM o.currency
      OR b.currency_high IS DISTINCT FROM o.currency THEN 'currency_mismatch'
    -- More returned than captured (`status_mismatch`, reason `refunded_more_than_captured`);
    -- an order that says refunded while a known refund returned only part of the capture
    -- (reason `refunded_in_part`). Words of their own until `findings.sql` gives the reason.
    WHEN b.refunded > 0 AND b.refunded > b.captured + $amount_tolerance_minor THEN 'over_refund?'
    WHEN o.refunded_status AND b.refunded > 0 AND NOT b.whole_refund
         AND b.captured - b.refunded > $amount_tolerance_minor THEN 'part_refund?'
    WHEN (o.voided AND b.captured - b.refunded > $amount_tolerance_minor)
      OR ((o.refunded_status OR o.part_refunded_status) AND b.refunded = 0
          AND NOT b.any_refunded)
      OR (b.all_refunded AND (o.paid_status OR o.part_refunded_status))
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
  END AS category_word) AS category
FROM orders o LEFT JOIN by_order b ON b.order_r = o.r;

-- Every order is classified: what later steps read of a head row is in `order_findings` (the
-- orders the engine classifies) or `bad_orders` (the others), so the table of every id goes,
-- with the memory it takes.
DROP TABLE order_heads;
