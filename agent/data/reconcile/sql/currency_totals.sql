-- Totals per currency: all orders, all captures, and the orders that matched cleanly: as the
-- row ledger counts them, paid, of no category, and evidence of no finding (a refund's, a
-- payment's naming several orders).
WITH evidence AS (
    SELECT DISTINCT unnest(order_rows) - 1 AS r FROM findings
), o AS (
    SELECT CAST(f.currency AS VARCHAR) AS currency, any_value(f.exponent) AS exponent,
           count(*) AS orders,
           sum(f.amount_minor) AS total,
           count(*) FILTER (WHERE f.category IS NULL AND f.n IS NOT NULL AND e.r IS NULL)
               AS matched,
           sum(f.amount_minor) FILTER (WHERE f.category IS NULL AND f.n IS NOT NULL
                                         AND e.r IS NULL) AS matched_total
    FROM order_findings f LEFT JOIN evidence e ON e.r = f.r GROUP BY 1
), p AS (
    SELECT CAST(currency AS VARCHAR) AS currency, any_value(exponent) AS exponent,
           count(*) AS captures,
           sum(amount_minor) AS total
    FROM payments GROUP BY 1
)
SELECT coalesce(o.currency, p.currency, '?') AS currency, coalesce(o.orders, 0),
       coalesce(fmt_minor(o.total, coalesce(o.exponent, p.exponent)), '0'),
       coalesce(p.captures, 0), coalesce(fmt_minor(p.total, coalesce(p.exponent, o.exponent)), '0'),
       coalesce(o.matched, 0), coalesce(fmt_minor(o.matched_total, o.exponent), '0')
FROM o FULL OUTER JOIN p USING (currency)
ORDER BY 1
