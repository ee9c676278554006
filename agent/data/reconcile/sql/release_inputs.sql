-- Run after `row_kinds` unless the loaded tables are read again after the reconciliation (one
-- sealed while its request waits, in the workspace an edit goes on from).
--
-- The row kinds are made: what the steps after them read of the loaded rows is each row's ids,
-- its currency code, and (for the row ledger) whether an order row's amount was filled. The
-- ids' index, the parsed amounts, times, statuses and keys go, with their memory (DuckDB drops
-- a column without copying the others; row ids are unchanged), so that matching and the
-- findings work within the process's memory limit instead of spilling.
DROP TABLE IF EXISTS order_index;
ALTER TABLE orders_rows DROP COLUMN IF EXISTS order_amount;
ALTER TABLE orders_rows DROP COLUMN IF EXISTS currency;
ALTER TABLE orders_rows DROP COLUMN IF EXISTS order_date;
ALTER TABLE orders_rows DROP COLUMN IF EXISTS order_date_filled;
ALTER TABLE orders_rows DROP COLUMN IF EXISTS order_date_local;
ALTER TABLE orders_rows DROP COLUMN IF EXISTS order_date_zone;
ALTER TABLE orders_rows DROP COLUMN IF EXISTS order_status;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS captured_amount;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS captured_amount_filled;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS refunded_amount;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS refunded_amount_filled;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS captured_at;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS captured_at_filled;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS captured_at_local;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS captured_at_zone;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS currency;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS payment_status;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS row_kind;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS several_refs;
ALTER TABLE payments_rows DROP COLUMN IF EXISTS ref_key;
