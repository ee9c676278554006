-- Findings as values, in category order then file order (of two at the same row number of
-- both files, the payments file's first: `finding_side`, setup.sql): those of one $category
-- (NULL: every category) that concern the id $key (NULL: any; matched in lower case), at most
-- $limit of them (NULL: all).
SELECT category, reason, order_ids, payment_ids, currency,
       fmt_minor(expected, exponent), fmt_minor(actual, exponent), order_rows, payment_rows
FROM findings
WHERE ($category IS NULL OR category = $category)
  AND ($key IS NULL
       OR list_contains(list_transform(order_keys, lambda x: lower(x)), $key)
       OR list_contains(payment_keys, $key))
ORDER BY category_rank, sort_row, finding_side(category, reason, order_rows)
LIMIT $limit
