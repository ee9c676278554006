"""The engine: builds the `findings` table from the loaded `orders_rows` and `payments_rows`.

The SQL is in `sql/` (setup, row kinds, matching, findings, in that order). What it depends on
reaches it in two ways:

- values, as bound parameters (`engine_parameters`): the policy's tolerance, windows and
  status words, the approved row kinds of the payments file, the currency table and the order
  of the categories;
- how the approved mapping reads amounts and references, as SQL macros (`define_readings`),
  the one place where SQL is composed: the expressions come from `agent.data.normalize`, the
  same builders that load the files, so ids and amounts are read here exactly as there.
"""

from __future__ import annotations

from typing import Any

import duckdb

from agent.data.currency import CURRENCY_EXPONENTS
from agent.data.normalize import minor_sql, reference_tokens_sql
from agent.data.normalize.columns import row_name_sql
from agent.data.normalize.meanings import order_statuses_of
from agent.data.policy import Policy
from agent.data.reconcile.runner import run_sql
from agent.data.reconcile.values import FINDING_CATEGORIES
from agent.data.schema import Mapping

ENGINE_SCRIPTS = ("setup", "row_kinds", "matching", "findings")


def run_engine(
    con: duckdb.DuckDBPyConnection, mapping: Mapping, policy: Policy, *, keep_inputs: bool = False
) -> None:
    """Build the `findings` table from the loaded `orders_rows` and `payments_rows` tables.

    Each unit gets at most one category, the first that applies in `FINDING_CATEGORIES`, with
    the policy's values bound as parameters (never written into the SQL). Once the row kinds
    are made, the loaded tables' parsed columns are dropped for memory (`release_inputs`),
    unless `keep_inputs`: the tables are then left exactly as they were loaded, for the steps
    that read them again (an edit after a reconciliation sealed while its request waits).
    """
    define_readings(con, mapping)
    params = engine_parameters(mapping, policy)
    for script in ENGINE_SCRIPTS:
        run_sql(con, script, params)
        if script == "row_kinds" and not keep_inputs:
            run_sql(con, "release_inputs", params)


def engine_parameters(mapping: Mapping, policy: Policy) -> dict[str, Any]:
    """The values the engine's SQL binds, by parameter name.

    The policy's rules under their own names; the approved meanings of the order statuses
    (`order_statuses_of`: the mapping's, else the policy's words); the payments file's approved
    row kinds (when the mapping reads none, `kinds_on` is false and the lists are empty); the
    ISO 4217 currency
    exponents; the categories in the order they apply.
    """
    kinds = mapping.payments.options.kinds
    statuses = order_statuses_of(mapping.orders, policy)
    ignore = list(kinds.ignore) if kinds else []
    refund = list(kinds.refund) if kinds else []
    known = [*kinds.capture, *kinds.refund, *kinds.ignore] if kinds else []
    currencies = sorted(CURRENCY_EXPONENTS.items())
    return {
        "amount_tolerance_minor": int(policy.amount_tolerance_minor),
        "window_hours_before": int(policy.window_hours_before),
        "window_days_after": int(policy.window_days_after),
        "failed_payment_statuses": list(policy.failed_payment_statuses),
        "refunded_payment_statuses": list(policy.refunded_payment_statuses),
        "voided_order_statuses": list(statuses.voided),
        "pending_order_statuses": list(statuses.pending),
        "refunded_order_statuses": list(statuses.refunded),
        "part_refunded_order_statuses": list(statuses.partially_refunded),
        "paid_order_statuses": list(statuses.paid),
        "kinds_refunded": list(kinds.refunded) if kinds else [],
        "kinds_on": kinds is not None,
        "kinds_ignore": ignore,
        "kinds_refund": refund,
        "kinds_known": known,
        "currency_codes": [code for code, _ in currencies],
        "currency_exponents": [exponent for _, exponent in currencies],
        "category_order": list(FINDING_CATEGORIES),
    }


def define_readings(con: duckdb.DuckDBPyConnection, mapping: Mapping) -> None:
    """Define the macros that read amounts and references as `mapping` approved them.

    `order_amount_minor`, `captured_amount_minor` and `refunded_amount_minor` turn a parsed
    amount into integer minor units of its currency (the approved unit of each amount column:
    major by default, refunds as captures); `reference_tokens` gives the order ids that a
    payment's reference names, under the approved id reading. `payment_name(id, r)` is the
    payment id a finding and the exceptions CSV show for the payment row `r` (its rowid), and
    `no_payment_id(id)` whether a row lacks one: a mapping with no payment id column names
    each payment by its data row (`row 12`) and lacks none, so no payment id repeats and
    refunds reach their payment by its order reference. DuckDB expands a macro where it is
    called, so the engine runs the same plan as with the expressions written out.
    """
    units = {
        "order_amount": mapping.orders.options.unit_of("order_amount"),
        "captured_amount": mapping.payments.options.unit_of("captured_amount"),
        "refunded_amount": mapping.payments.options.unit_of("refunded_amount"),
    }
    for name in ("order_amount", "captured_amount", "refunded_amount"):
        con.execute(
            f"CREATE OR REPLACE MACRO {name}_minor(amount, exponent) AS "
            + minor_sql("amount", units[name], "exponent")
        )
    tokens = reference_tokens_sql("reference", mapping.payments.options.ids)
    con.execute(f"CREATE OR REPLACE MACRO reference_tokens(reference) AS {tokens}")
    by_row = "payment_id" not in mapping.payments.columns
    name = row_name_sql("r") if by_row else "id"
    con.execute(f"CREATE OR REPLACE MACRO payment_name(id, r) AS {name}")
    missing = "false" if by_row else "id IS NULL"
    con.execute(f"CREATE OR REPLACE MACRO no_payment_id(id) AS {missing}")
