-- Findings (docs/design.md §7.5): the flagged orders and payments with their evidence rows, and
-- the `findings` table that the summary, the questions and the exceptions CSV read.
--
-- Parameters: $amount_tolerance_minor (the policy's) and $category_order (the categories in
-- the order they apply: `category_rank` is a category's place in it, from 0).
-- Ids are read from `orders_rows` and `payments_rows` by row number (rowid), for the rows of
-- findings only; a payment's as `payment_name` (engine.py) gives it: its id, or `row N` where
-- the mapping names each payment by its data row.

-- Flagged orders: the classified orders with a category, and the ids that cannot be read as
-- one order (every row of them with an amount is evidence, with the payments that name them).
-- With three or more captures, whether a single one covers the order (`duplicate_capture?`)
-- needs each capture: a duplicate capture when one does, else a partial or an over-capture.
-- Their ids and currencies are read with the findings.
CREATE OR REPLACE TABLE flagged_orders AS
WITH classified AS (
    SELECT r, CAST(category AS VARCHAR) AS category, captured, exponent, amount_minor
    FROM order_findings WHERE category IS NOT NULL
), covered AS (
    SELECT f.r FROM classified f JOIN payments p ON p.order_r = f.r
    WHERE f.category = 'duplicate_capture?'
      AND abs(p.amount_minor - f.amount_minor) <= $amount_tolerance_minor
), bad_captured AS (
    SELECT order_r, sum(amount_minor) AS captured FROM payments
    WHERE order_r IN (SELECT r FROM bad_orders) GROUP BY 1
)
SELECT r,
       CASE WHEN category IN ('over_refund?', 'part_refund?') THEN 'status_mismatch'
            WHEN category <> 'duplicate_capture?' THEN category
            WHEN r IN (SELECT r FROM covered) THEN 'duplicate_capture'
            WHEN captured < amount_minor THEN 'partial_capture'
            ELSE 'over_capture' END AS category,
       CASE category WHEN 'unreadable_row' THEN 'unreadable_amount'
                     WHEN 'over_refund?' THEN 'refunded_more_than_captured'
                     WHEN 'part_refund?' THEN 'refunded_in_part' END AS reason,
       [r + 1] AS rows, captured, exponent, amount_minor
FROM classified
UNION ALL
SELECT b.r, CASE WHEN b.unreadable THEN 'unreadable_row' ELSE 'conflicting_duplicate_order' END,
       b.reason, b.rows, c.captured, b.exponent,
       CASE WHEN NOT b.unreadable THEN b.amount_minor END
FROM bad_orders b LEFT JOIN bad_captured c ON c.order_r = b.r;

CREATE OR REPLACE TABLE findings AS
WITH finding_payments AS MATERIALIZED (
    -- The payment rows behind each flagged order: its captures, and its refunds.
    SELECT x.order_r, x.r, payment_name(p.payment_id, p.rowid) AS payment_id
    FROM (SELECT order_r, r FROM payments WHERE order_r IN (SELECT r FROM flagged_orders)
          UNION ALL
          SELECT order_r, r FROM refunds WHERE order_r IN (SELECT r FROM flagged_orders)) x
    JOIN payments_rows p ON p.rowid = x.r
), flagged_payments AS (
    -- Each order's payment rows in file order (sorted by row number, then split).
    SELECT r, list_transform(payments, lambda x: x.payment_id) AS payment_ids,
           list_transform(payments, lambda x: x.r + 1) AS payment_rows
    FROM (SELECT order_r AS r, list_sort(list({'r': r, 'payment_id': payment_id})) AS payments
          FROM finding_payments GROUP BY 1)
), flagged_copies AS (
    -- The few flagged orders whose payments were repeated get every row of each payment.
    SELECT f.order_r AS r, list(c.row ORDER BY c.row) AS payment_rows
    FROM finding_payments f
    JOIN (SELECT r, unnest(rows) AS row FROM payment_copies) c ON c.r = f.r
    GROUP BY 1
), multi AS (
    SELECT m.payment_r, list(o.order_id ORDER BY m.order_r) AS order_ids,
           list(o.order_key ORDER BY m.order_r) AS order_keys,
           list(m.order_r + 1 ORDER BY m.order_r) AS order_rows,
           sum(f.amount_minor) AS expected,
           -- What payments naming exactly one of these orders captured besides (an order
           -- paid twice over): it adds to what the payment found.
           sum(coalesce(f.captured, 0)) AS besides,
           -- An order another payment naming several orders names too: paid in both, maybe.
           bool_or(m.order_r IN (SELECT order_r FROM multi_links GROUP BY 1 HAVING count(*) > 1))
               AS shared
    FROM multi_links m JOIN order_findings f ON f.r = m.order_r
    JOIN orders_rows o ON o.rowid = m.order_r
    GROUP BY 1
), multi_besides AS (
    -- Those payments, reviewed with the payment naming several orders (their rows and ids).
    SELECT m.payment_r AS r, list(p.r + 1 ORDER BY p.r) AS rows,
           list(payment_name(pr.payment_id, pr.rowid) ORDER BY p.r) AS ids
    FROM multi_links m
    JOIN (SELECT r FROM order_findings WHERE n IS NOT NULL) f ON f.r = m.order_r
    JOIN payments p ON p.order_r = m.order_r
    JOIN payments_rows pr ON pr.rowid = p.r
    GROUP BY 1
), multi_refunds AS (
    -- Refunds of a capture that names several orders: reviewed with that payment.
    -- What they returned is taken from what the payment captured (`actual`).
    SELECT rf.capture_r AS r, list(rf.r + 1) AS rows,
           list(payment_name(rf.payment_id, rf.r)) AS payment_ids,
           sum(rf.amount_minor) AS amount_minor, bool_or(rf.amount_minor IS NULL) AS whole
    FROM refunds rf JOIN payments p ON p.r = rf.capture_r
    WHERE rf.order_r IS NULL AND p.refs > 1
    GROUP BY 1
), flagged_payment_rows AS (
    -- Payments that are findings of their own: naming several orders, none, or an order no
    -- file has; and repeated payments.
    SELECT p.* FROM payments p
    SEMI JOIN (SELECT r FROM payments WHERE refs <> 1 OR order_r IS NULL
               UNION SELECT r FROM payment_copies) pf ON pf.r = p.r
)
SELECT category, list_position($category_order, category) - 1 AS category_rank, reason,
       sort_row, order_ids, order_keys, order_rows, payment_ids,
       list_transform(payment_ids, lambda x: lower(x)) AS payment_keys,
       payment_rows, currency, exponent, expected, actual
FROM (
    SELECT category, reason, o.r + 1 AS sort_row, [order_id] AS order_ids,
           [order_key] AS order_keys, o.rows AS order_rows,
           coalesce(fp.payment_ids, []) AS payment_ids,
           coalesce(
               CASE WHEN fc.r IS NULL THEN fp.payment_rows
                    ELSE list_sort(list_distinct(fp.payment_rows || fc.payment_rows)) END,
               []) AS payment_rows,
           currency, exponent,
           amount_minor AS expected,
           CASE WHEN category = 'order_without_capture' THEN 0 ELSE captured END AS actual
    FROM (SELECT f.*, o.currency_code AS currency, o.order_id, o.order_key
          FROM flagged_orders f JOIN orders_rows o ON o.rowid = f.r) o
    LEFT JOIN flagged_payments fp ON fp.r = o.r
    LEFT JOIN flagged_copies fc ON fc.r = o.r
    UNION ALL
    SELECT CASE
             WHEN p.refs > 1 THEN 'multi_order_payment'
             WHEN p.refs = 0 OR p.order_r IS NULL THEN 'capture_without_order'
             ELSE 'duplicate_payment_row'
           END,
           -- Rows of one payment id that differ: each counts for its order, and together here.
           CASE WHEN NOT pc.same THEN 'rows_differ'
                WHEN m.shared THEN 'order_in_another_multi_order_payment' END,
           p.r + 1, coalesce(m.order_ids, []), coalesce(m.order_keys, []),
           coalesce(m.order_rows, []),
           [payment_name(pr.payment_id, pr.rowid)] || coalesce(mr.payment_ids, [])
               || coalesce(mb.ids, []),
           list_sort(coalesce(pc.rows, [p.r + 1]) || coalesce(mr.rows, []) || coalesce(mb.rows, [])),
           pr.currency_code, p.exponent, m.expected,
           CASE WHEN p.refs = 1 AND p.order_r IS NOT NULL AND NOT pc.same
                     AND pc.total_minor IS NOT NULL THEN pc.total_minor
                WHEN p.refs > 1 AND mr.whole THEN coalesce(m.besides, 0)
                WHEN p.refs > 1
                     THEN p.amount_minor - coalesce(mr.amount_minor, 0) + coalesce(m.besides, 0)
                ELSE p.amount_minor END
    FROM flagged_payment_rows p
    JOIN payments_rows pr ON pr.rowid = p.r
    LEFT JOIN payment_copies pc ON pc.r = p.r
    LEFT JOIN multi m ON m.payment_r = p.r
    LEFT JOIN multi_refunds mr ON mr.r = p.r
    LEFT JOIN multi_besides mb ON mb.r = p.r
    UNION ALL
    -- Refunds of a capture and an order that neither file has: money moved, unexplained.
    SELECT 'capture_without_order', 'refund', rf.r + 1, [], [], [],
           list_filter([payment_name(rf.payment_id, rf.r)], lambda x: x IS NOT NULL), [rf.r + 1],
           rf.currency, e.exponent, NULL, rf.amount_minor
    FROM refunds rf
    LEFT JOIN currency_exponents e ON e.code = rf.currency
    WHERE rf.order_r IS NULL AND rf.r NOT IN (SELECT unnest(rows) - 1 FROM multi_refunds)
    UNION ALL
    -- Refunds of an order that no capture paid: money returned that was never taken. And
    -- refunds in another currency than their order's: not added to what it returned. One
    -- finding per order, its refund rows its evidence, and only for an order with no finding
    -- of its own (a voided order, one of 0.00, a credit note, or one whose captures agree):
    -- a flagged order already shows its refunds (`finding_payments`), and an order is in at
    -- most one finding. A credit note (a negative total) paid out by refunds of its size is
    -- settled: no finding; refunds of another size are an amount mismatch (reason
    -- `credit_note`).
    SELECT CASE WHEN any_value(x.captured) THEN 'currency_mismatch'
                WHEN any_value(x.credit) THEN 'amount_mismatch'
                ELSE 'order_without_capture' END,
           CASE WHEN any_value(x.captured) THEN 'refund'
                WHEN any_value(x.credit) THEN 'credit_note'
                ELSE 'refund_without_capture' END,
           min(x.r) + 1,
           list_filter([any_value(x.order_id)], lambda v: v IS NOT NULL),
           list_filter([any_value(x.order_key)], lambda v: v IS NOT NULL), [x.order_r + 1],
           list_filter(list(x.payment_id ORDER BY x.r), lambda v: v IS NOT NULL),
           list(x.r + 1 ORDER BY x.r),
           CASE WHEN count(DISTINCT x.currency) = 1 THEN any_value(x.currency) END,
           CASE WHEN count(DISTINCT x.currency) = 1 THEN any_value(x.exponent) END,
           CASE WHEN any_value(x.credit) THEN abs(any_value(x.order_amount)) END,
           CASE WHEN count(DISTINCT x.currency) = 1 THEN sum(x.amount_minor) END
    FROM (
        SELECT rf.r, rf.order_r, payment_name(rf.payment_id, rf.r) AS payment_id, rf.currency,
               rf.amount_minor, e.exponent,
               o.order_id, o.order_key, f.amount_minor AS order_amount,
               rf.order_r IN (SELECT order_r FROM payments WHERE order_r IS NOT NULL) AS captured,
               coalesce(f.amount_minor < 0, false) AS credit,
               rf.currency IS DISTINCT FROM o.currency_code AS other_currency
        FROM refunds rf JOIN orders_rows o ON o.rowid = rf.order_r
        LEFT JOIN order_findings f ON f.r = rf.order_r
        LEFT JOIN currency_exponents e ON e.code = rf.currency
        WHERE rf.order_r IS NOT NULL AND rf.order_r NOT IN (SELECT r FROM flagged_orders)
    ) x
    GROUP BY x.order_r
    HAVING (NOT any_value(x.captured) OR bool_or(x.other_currency))
       AND NOT (any_value(x.credit) AND NOT any_value(x.captured)
                AND NOT bool_or(x.other_currency)
                AND abs(sum(x.amount_minor) + any_value(x.order_amount))
                    <= $amount_tolerance_minor)
    UNION ALL
    -- Rows whose required values do not read: findings of their own. An order row with an
    -- amount but no order id; a payment row (its kind value beside an unknown row kind).
    SELECT 'unreadable_row', 'empty_order_id', o.rowid + 1,
           list_filter([o.order_id], lambda x: x IS NOT NULL), [], [o.rowid + 1],
           [], [], o.currency_code, NULL, NULL, NULL
    FROM orders_rows o
    WHERE o.order_key IS NULL AND o.order_amount_filled
    UNION ALL
    SELECT 'unreadable_row',
           CASE WHEN k.reason = 'unknown_row_kind'
                THEN k.reason || ':' || coalesce(v.value, '') ELSE CAST(k.reason AS VARCHAR) END,
           k.r + 1, [], [],
           [], list_filter([payment_name(p.payment_id, p.rowid)], lambda x: x IS NOT NULL),
           [k.r + 1],
           p.currency_code, NULL, NULL, NULL
    FROM payment_row_kinds k JOIN payments_rows p ON p.rowid = k.r
    LEFT JOIN payment_kind_values v ON v.r = k.r
    WHERE k.kind = 'unreadable'
);

-- The findings are made: what the row ledger and the summary read of `payments` and
-- `order_findings` stays (each payment's currency and amount; each order's category, captures,
-- amount and voided status), and the memory of the rest goes before the ledger and the
-- export (columns dropped, not the kept ones copied).
ALTER TABLE payments DROP COLUMN r;
ALTER TABLE payments DROP COLUMN refs;
ALTER TABLE payments DROP COLUMN refunded_minor;
ALTER TABLE payments DROP COLUMN captured_at;
ALTER TABLE payments DROP COLUMN refunded_status;
ALTER TABLE payments DROP COLUMN order_r;
ALTER TABLE order_findings DROP COLUMN captured;
