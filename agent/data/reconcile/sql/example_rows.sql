-- The findings a person should see first, at most $limit, as finding_rows.sql gives them:
-- the largest of each category (by the difference between what was expected and found, in
-- major units of its currency), in category order; then the largest of those left, whatever
-- their category. So a short list names every kind of finding, not many of the first kind.
WITH sized AS (
    -- No size without a currency's exponent (a finding of no or mixed currency): last.
    SELECT *, abs(coalesce(actual, 0) - coalesce(expected, 0)) / pow(10, exponent) AS size
    FROM findings
), ranked AS (
    SELECT *, row_number() OVER (
               PARTITION BY category
               ORDER BY size DESC NULLS LAST, sort_row, finding_side(category, reason, order_rows)
           ) AS place
    FROM sized
)
SELECT category, reason, order_ids, payment_ids, currency,
       fmt_minor(expected, exponent), fmt_minor(actual, exponent), order_rows, payment_rows
FROM ranked
ORDER BY place > 1, CASE WHEN place = 1 THEN category_rank END, size DESC NULLS LAST, category_rank,
         sort_row, finding_side(category, reason, order_rows)
LIMIT $limit
