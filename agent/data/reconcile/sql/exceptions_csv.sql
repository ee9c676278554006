-- The exceptions CSV at $path: every finding, then every ignored row with its reason (category
-- `ignored`), so the file accounts for every row that did not match. Cells that come from the
-- uploaded files are neutralised so that a spreadsheet never runs them as formulas
-- (`spreadsheet_safe`: setup.sql). Findings of one category at the same row number of both
-- files: the payments file's first (`finding_side`: setup.sql); ignored rows of both files at
-- the same row number: the orders row first. An ignored row's id and currency are read from
-- `orders_rows` or `payments_rows` (by row number; a payment's as `payment_name` gives it,
-- engine.py), an ignored payment row's kind value from `payment_kind_values`. Then the number
-- of lines written.
COPY (
    SELECT category, reason, spreadsheet_safe(order_ids) AS order_ids, orders_rows,
           spreadsheet_safe(payment_ids) AS payment_ids, payments_rows,
           spreadsheet_safe(currency) AS currency, expected, actual, difference
    FROM (
        -- A finding: its lists written out.
        SELECT category_rank AS rank, sort_row,
               finding_side(category, reason, order_rows) AS side, category, reason,
               array_to_string(order_ids, '; ') AS order_ids,
               array_to_string(order_rows, ' ') AS orders_rows,
               array_to_string(payment_ids, '; ') AS payment_ids,
               array_to_string(payment_rows, ' ') AS payments_rows,
               coalesce(currency, '') AS currency,
               fmt_minor(expected, exponent) AS expected,
               fmt_minor(actual, exponent) AS actual,
               fmt_minor(actual - expected, exponent) AS difference
        FROM findings
        UNION ALL
        -- An ignored row: its one id (none: empty) and its row number.
        SELECT 1000, l.r + 1, 0, 'ignored', CAST(l.reason AS VARCHAR),
               coalesce(o.order_id, ''), CAST(l.r + 1 AS VARCHAR), '', '',
               coalesce(o.currency_code, ''), NULL, NULL, NULL
        FROM ledger_rows l JOIN orders_rows o ON o.rowid = l.r
        WHERE l.role = 'orders' AND l.bucket = 'ignored'
        UNION ALL
        SELECT 1000, l.r + 1, 1, 'ignored',
               CASE WHEN l.reason = 'row_kind' THEN l.reason || ':' || coalesce(k.value, '')
                    ELSE CAST(l.reason AS VARCHAR) END,
               '', '', coalesce(payment_name(p.payment_id, p.rowid), ''), CAST(l.r + 1 AS VARCHAR),
               coalesce(p.currency_code, ''), NULL, NULL, NULL
        FROM ledger_rows l JOIN payments_rows p ON p.rowid = l.r
        LEFT JOIN payment_kind_values k ON k.r = l.r
        WHERE l.role = 'payments' AND l.bucket = 'ignored'
    )
    ORDER BY rank, sort_row, side
) TO $path (HEADER, DELIMITER ',');

SELECT (SELECT count(*) FROM findings)
       + (SELECT count(*) FROM ledger_rows WHERE bucket = 'ignored');
