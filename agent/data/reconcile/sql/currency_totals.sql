-- Totals per currency: all orders, all captures, and the orders that matched cleanly: those
-- the row ledger counts as matched (not evidence of any finding, a refund's included).
WITH matched AS (
    SELECT r FROM ledger_rows WHERE role = 'orders' AND bucket = 'matched'
), o AS (
    SELECT CAST(f.currency AS VARCHAR) AS currency, any_value(f.exponent) AS exponent,
           count(*) AS orders,
           sum(f.amount_minor) AS total,
           count(m.r) AS matched,
           sum(f.amount_minor) FILTER (WHERE m.r IS NOT NULL) AS matched_total
    FROM order_findings f LEFT JOIN matched m ON m.r = f.r GROUP BY 1
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
