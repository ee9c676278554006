-- Totals per currency: all orders, all captures, and the orders that matched cleanly.
WITH o AS (
    SELECT CAST(currency AS VARCHAR) AS currency, any_value(exponent) AS exponent,
           count(*) AS orders,
           sum(amount_minor) AS total,
           count(*) FILTER (WHERE category IS NULL AND n IS NOT NULL) AS matched,
           sum(amount_minor) FILTER (WHERE category IS NULL AND n IS NOT NULL) AS matched_total
    FROM order_findings GROUP BY 1
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
