-- Findings (docs/design.md §7.5): orders reviewed with a multi-order payment, the flagged orders and
-- payments with their evidence rows, and the `findings` table that the summary, the questions
-- and the exceptions CSV read.
--
-- Parameters: $amount_tolerance_minor (the policy's) and $category_order (the categories in
-- the order they apply: `category_rank` is a category's place in it, from 0).

-- Payments naming several orders, and the orders they name.
CREATE OR REPLACE TABLE multi_links AS
SELECT p.r AS payment_r, f.r AS order_r
FROM (SELECT rowid AS r, unnest(reference_tokens(order_id)) AS token
      FROM payments_rows WHERE rowid IN (SELECT r FROM payments WHERE refs > 1)) p
JOIN order_findings f ON f.order_key = p.token;

-- Orders named by a multi-order payment are reviewed with that payment, not on their own.
UPDATE order_findings SET category = NULL
WHERE category IS NOT NULL AND r IN (SELECT order_r FROM multi_links);

CREATE OR REPLACE TABLE flagged_orders AS
SELECT r, category,
       CASE WHEN category = 'unreadable_row' THEN 'unreadable_amount' END AS reason,
       [r + 1] AS rows, captured, currency, exponent,
       amount_minor, order_id, order_key
FROM order_findings WHERE category IS NOT NULL
UNION ALL
-- Ids that cannot be read as one order: every row of them with an amount is evidence,
-- with the payments that name them.
SELECT b.r, CASE WHEN b.unreadable THEN 'unreadable_row' ELSE 'conflicting_duplicate_order' END,
       b.reason, b.rows,
       (SELECT sum(amount_minor) FROM payments p WHERE p.order_r = b.r), o.currency_code,
       o.exponent, CASE WHEN NOT b.unreadable THEN o.amount_minor END, o.order_id, b.order_key
FROM bad_orders b JOIN order_row_kinds o ON o.r = b.r;

-- The payment rows behind each flagged order: its captures, and its refunds (no amount
-- here: a refund never covers an order).
CREATE OR REPLACE TABLE finding_payments AS
SELECT order_r, r, payment_id, amount_minor FROM payments
WHERE order_r IN (SELECT r FROM flagged_orders)
UNION ALL
SELECT order_r, r, payment_id, NULL FROM refunds
WHERE order_r IN (SELECT r FROM flagged_orders);

-- With three or more captures, whether a single one covers the order needs each capture.
UPDATE flagged_orders SET category = CASE WHEN r IN (
        SELECT f.r FROM flagged_orders f JOIN finding_payments p ON p.order_r = f.r
        WHERE f.category = 'duplicate_capture?'
          AND abs(p.amount_minor - f.amount_minor) <= $amount_tolerance_minor)
    THEN 'duplicate_capture'
    WHEN captured < amount_minor THEN 'partial_capture' ELSE 'over_capture' END
WHERE category = 'duplicate_capture?';

CREATE OR REPLACE TABLE payment_findings AS
SELECT r FROM payments
WHERE refs <> 1 OR order_r IS NULL
UNION SELECT r FROM payment_copies;

CREATE OR REPLACE TABLE findings AS
WITH flagged_payments AS (
    SELECT order_r AS r, list(payment_id ORDER BY r) AS payment_ids,
           list(r + 1 ORDER BY r) AS payment_rows
    FROM finding_payments GROUP BY 1
), flagged_copies AS (
    -- The few flagged orders whose payments were repeated get every row of each payment.
    SELECT f.order_r AS r, list(c.row ORDER BY c.row) AS payment_rows
    FROM finding_payments f
    JOIN (SELECT r, unnest(rows) AS row FROM payment_copies) c ON c.r = f.r
    GROUP BY 1
), multi AS (
    SELECT m.payment_r, list(f.order_id ORDER BY m.order_r) AS order_ids,
           list(f.order_key ORDER BY m.order_r) AS order_keys,
           list(m.order_r + 1 ORDER BY m.order_r) AS order_rows,
           sum(f.amount_minor) AS expected
    FROM multi_links m JOIN order_findings f ON f.r = m.order_r
    GROUP BY 1
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
    FROM flagged_orders o LEFT JOIN flagged_payments fp ON fp.r = o.r
    LEFT JOIN flagged_copies fc ON fc.r = o.r
    UNION ALL
    SELECT CASE
             WHEN p.refs > 1 THEN 'multi_order_payment'
             WHEN p.refs = 0 OR p.order_r IS NULL THEN 'capture_without_order'
             ELSE 'duplicate_payment_row'
           END, NULL,
           p.r + 1, coalesce(m.order_ids, []), coalesce(m.order_keys, []),
           coalesce(m.order_rows, []), [p.payment_id], coalesce(pc.rows, [p.r + 1]),
           p.currency, p.exponent, m.expected, p.amount_minor
    FROM payments p SEMI JOIN payment_findings pf ON pf.r = p.r
    LEFT JOIN payment_copies pc ON pc.r = p.r
    LEFT JOIN multi m ON m.payment_r = p.r
    UNION ALL
    -- Refunds of a capture and an order that neither file has: money moved, unexplained.
    SELECT 'capture_without_order', 'refund', rf.r + 1, [], [], [],
           list_filter([rf.payment_id], lambda x: x IS NOT NULL), [rf.r + 1],
           rf.currency, e.exponent, NULL, rf.amount_minor
    FROM refunds rf
    LEFT JOIN currency_exponents e ON e.code = rf.currency
    WHERE rf.order_r IS NULL
    UNION ALL
    -- Refunds of an order that no capture paid: money returned that was never taken.
    SELECT 'order_without_capture', 'refund_without_capture', rf.r + 1,
           list_filter([ok.order_id], lambda x: x IS NOT NULL),
           list_filter([ok.order_key], lambda x: x IS NOT NULL), [rf.order_r + 1],
           list_filter([rf.payment_id], lambda x: x IS NOT NULL), [rf.r + 1],
           rf.currency, e.exponent, NULL, rf.amount_minor
    FROM refunds rf
    JOIN order_row_kinds ok ON ok.r = rf.order_r
    LEFT JOIN currency_exponents e ON e.code = rf.currency
    WHERE rf.order_r IS NOT NULL
      AND rf.order_r NOT IN (SELECT order_r FROM payments WHERE order_r IS NOT NULL)
    UNION ALL
    -- Refunds in another currency than their order's: not added to what it returned.
    SELECT 'currency_mismatch', 'refund', rf.r + 1,
           list_filter([ok.order_id], lambda x: x IS NOT NULL),
           list_filter([ok.order_key], lambda x: x IS NOT NULL), [rf.order_r + 1],
           list_filter([rf.payment_id], lambda x: x IS NOT NULL), [rf.r + 1],
           rf.currency, e.exponent, NULL, rf.amount_minor
    FROM refunds rf JOIN order_row_kinds ok ON ok.r = rf.order_r
    LEFT JOIN currency_exponents e ON e.code = rf.currency
    WHERE rf.order_r IN (SELECT order_r FROM payments WHERE order_r IS NOT NULL)
      AND rf.currency IS DISTINCT FROM ok.currency_code
    UNION ALL
    -- Rows whose required values do not read: findings of their own.
    SELECT 'unreadable_row', k.reason, k.r + 1,
           list_filter([k.order_id], lambda x: x IS NOT NULL), [], [k.r + 1],
           [], [], k.currency_code, NULL, NULL, NULL
    FROM order_row_kinds k
    WHERE k.kind = 'unreadable' AND k.order_key IS NULL
    UNION ALL
    SELECT 'unreadable_row',
           CASE WHEN k.reason = 'unknown_row_kind'
                THEN k.reason || ':' || coalesce(k.value, '') ELSE k.reason END,
           k.r + 1, [], [],
           [], list_filter([k.payment_id], lambda x: x IS NOT NULL), [k.r + 1],
           k.currency_code, NULL, NULL, NULL
    FROM payment_row_kinds k
    WHERE k.kind = 'unreadable'
);
