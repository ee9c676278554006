-- The money a category concerns, per currency: the gap between expected and found (for a
-- currency mismatch the two amounts are in different currencies, so no gap is given).
SELECT category, currency, count(*),
       CASE WHEN category <> 'currency_mismatch'
             AND sum(abs(coalesce(actual, 0) - coalesce(expected, 0))) <> 0
            THEN fmt_minor(sum(abs(coalesce(actual, 0) - coalesce(expected, 0))),
                           any_value(exponent)) END
FROM findings GROUP BY category, currency
