-- Set-up of a reconciliation: the currency table the engine joins, the formatting of minor
-- units and of the exceptions CSV's cells, the order of findings, and the word types of the
-- engine's tables.
--
-- Parameters: $currency_codes and $currency_exponents (ISO 4217, `agent.data.currency`),
-- $category_order (the finding categories).

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

-- A cell that comes from an uploaded file, as the exceptions CSV writes it: one that a
-- spreadsheet would run as a formula (a leading `= + - @`, tab or carriage return) gets a `'`.
CREATE OR REPLACE MACRO spreadsheet_safe(s) AS
    -- (the code point of its first character: 61 '=', 43 '+', 45 '-', 64 '@', 9 tab, 13 CR)
    CASE WHEN ascii(s) IN (61, 43, 45, 64, 9, 13) THEN chr(39) || s ELSE s END;

-- The file a finding's row number (`sort_row`) is in: 0 for the payments file (a payment's
-- findings, a refund's, an unreadable payment row), 1 for the orders file. Two findings of one
-- category can have the same row number, one in each file: the payments file's comes first,
-- in the exceptions CSV and in the findings as values, so that each has its one place.
CREATE OR REPLACE MACRO finding_side(category, reason, order_rows) AS
    CASE WHEN category IN ('multi_order_payment', 'capture_without_order', 'duplicate_payment_row')
           OR reason IN ('refund', 'refund_without_capture')
           OR (category = 'unreadable_row' AND len(order_rows) = 0)
         THEN 0 ELSE 1 END;

-- The words the engine's tables hold on every row, as ENUM types: one byte a row where a text
-- takes sixteen, so that the tables of a million rows stay in memory. Each is compared and
-- shown as the text it stands for; a word not in its type is an error, never a silent NULL.
-- The currencies of the table above, which holds each code as one (`currency`): a row joined
-- to it on its code has its currency as the ENUM, NULL for any other code (like the exponent).
CREATE OR REPLACE TYPE iso_currency AS ENUM (SELECT code FROM currency_exponents);
CREATE OR REPLACE TABLE currency_exponents AS
SELECT code, exponent, CAST(code AS iso_currency) AS currency FROM currency_exponents;

-- A row's kind (row_kinds.sql): of an order id's head row, or of a payment row.
CREATE OR REPLACE TYPE kind_word AS ENUM ('head', 'payment', 'refund', 'ignored', 'unreadable');

-- Why a row is ignored or unreadable (row_kinds.sql, the row ledger).
CREATE OR REPLACE TYPE reason_word AS ENUM (
    'no_order_id', 'empty_order_id', 'empty_amount', 'unreadable_amount', 'missing_currency',
    'unreadable_currency', 'line_item_continuation', 'another_amount_under_this_id',
    'failed_attempt', 'row_kind', 'unknown_row_kind', 'empty_payment_id', 'zero_capture',
    'voided_without_payment', 'nothing_to_pay', 'credit_note', 'awaiting_payment');

-- An order's category (matching.sql): the finding categories, and `duplicate_capture?` until
-- each capture is compared (findings.sql).
CREATE OR REPLACE TYPE category_word AS ENUM (
    SELECT unnest($category_order::VARCHAR[])
    UNION ALL SELECT unnest(['duplicate_capture?', 'over_refund?', 'part_refund?']));

-- The row ledger's file and bucket (agent/data/ledger.py).
CREATE OR REPLACE TYPE role_word AS ENUM ('orders', 'payments');
CREATE OR REPLACE TYPE bucket_word AS ENUM ('matched', 'finding', 'ignored', 'unreadable');
