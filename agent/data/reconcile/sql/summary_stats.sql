-- The counts of a reconciliation: orders and order rows, payments and payment rows, failed
-- attempts, and the 1-based rows of each file that do not read.
SELECT (SELECT count(*) FROM order_findings), (SELECT count(*) FROM orders_rows),
       (SELECT count(*) FROM payments), (SELECT count(*) FROM payments_rows),
       (SELECT count(*) FROM payment_row_kinds WHERE reason = 'failed_attempt'),
       (SELECT list(r + 1 ORDER BY r) FROM ledger_rows
        WHERE role = 'orders' AND bucket = 'unreadable'),
       (SELECT list(r + 1 ORDER BY r) FROM ledger_rows
        WHERE role = 'payments' AND bucket = 'unreadable')
