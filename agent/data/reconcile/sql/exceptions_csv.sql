-- The exceptions CSV at $path: every finding, then every ignored row with its reason (category
-- `ignored`), so the file accounts for every row that did not match. Cells that come from the
-- uploaded files are neutralised so that a spreadsheet never runs them as formulas (a leading
-- `= + - @`, tab or carriage return gets a `'`). Ignored rows of both files at the same row
-- number: the orders row first. An ignored row's id, currency and kind value are read from
-- `order_row_kinds` and `payment_row_kinds`, which carry them. Then the number of lines
-- written.
COPY (
    SELECT category, reason,
           CASE WHEN regexp_matches(array_to_string(order_ids, '; '), '^[=+\-@\t\r]')
                THEN chr(39) || array_to_string(order_ids, '; ')
                ELSE array_to_string(order_ids, '; ') END AS order_ids,
           array_to_string(order_rows, ' ') AS orders_rows,
           CASE WHEN regexp_matches(array_to_string(payment_ids, '; '), '^[=+\-@\t\r]')
                THEN chr(39) || array_to_string(payment_ids, '; ')
                ELSE array_to_string(payment_ids, '; ') END AS payment_ids,
           array_to_string(payment_rows, ' ') AS payments_rows,
           CASE WHEN regexp_matches(coalesce(currency, ''), '^[=+\-@\t\r]')
                THEN chr(39) || coalesce(currency, '')
                ELSE coalesce(currency, '') END AS currency,
           expected, actual, difference
    FROM (
        SELECT category_rank AS rank, sort_row, 0 AS side, category, reason, order_ids, order_rows,
               payment_ids, payment_rows, currency,
               fmt_minor(expected, exponent) AS expected,
               fmt_minor(actual, exponent) AS actual,
               fmt_minor(actual - expected, exponent) AS difference
        FROM findings
        UNION ALL
        SELECT 1000, l.r + 1, 0, 'ignored', l.reason,
               list_filter([k.order_id], lambda x: x IS NOT NULL), [l.r + 1], [], [],
               k.currency_code, NULL, NULL, NULL
        FROM ledger_rows l JOIN order_row_kinds k ON k.r = l.r
        WHERE l.role = 'orders' AND l.bucket = 'ignored'
        UNION ALL
        SELECT 1000, l.r + 1, 1, 'ignored',
               CASE WHEN l.reason = 'row_kind' THEN l.reason || ':' || coalesce(k.value, '')
                    ELSE l.reason END,
               [], [], list_filter([k.payment_id], lambda x: x IS NOT NULL), [l.r + 1],
               k.currency_code, NULL, NULL, NULL
        FROM ledger_rows l JOIN payment_row_kinds k ON k.r = l.r
        WHERE l.role = 'payments' AND l.bucket = 'ignored'
    )
    ORDER BY rank, sort_row, side
) TO $path (HEADER, DELIMITER ',');

SELECT (SELECT count(*) FROM findings)
       + (SELECT count(*) FROM ledger_rows WHERE bucket = 'ignored');
