-- Set-up of a reconciliation: the currency table the engine joins, the formatting of minor
-- units, and the policy's voided order words as a table (the row ledger reads them with
-- `IN (SELECT status FROM voided_order_statuses)`).
--
-- Parameters: $currency_codes and $currency_exponents (ISO 4217, `agent.data.currency`),
-- $voided_order_statuses (the policy's words).

-- This connection's statements only: others on the process's DuckDB instance (a parse, a load)
-- keep file order.
SET SESSION preserve_insertion_order = false;

CREATE OR REPLACE TABLE currency_exponents AS
SELECT unnest($currency_codes::VARCHAR[]) AS code,
       unnest($currency_exponents::INTEGER[]) AS exponent;

CREATE OR REPLACE MACRO fmt_minor(m, x) AS CASE x
    WHEN 2 THEN CAST(CAST(m AS DECIMAL(18, 0)) * 0.01 AS VARCHAR)
    WHEN 0 THEN CAST(m AS VARCHAR)
    WHEN 3 THEN CAST(CAST(m AS DECIMAL(18, 0)) * 0.001 AS VARCHAR)
    WHEN 4 THEN CAST(CAST(m AS DECIMAL(18, 0)) * 0.0001 AS VARCHAR) END;

CREATE OR REPLACE TABLE voided_order_statuses AS
SELECT unnest($voided_order_statuses::VARCHAR[]) AS status;
