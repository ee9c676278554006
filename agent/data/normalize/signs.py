"""What the signs of amounts mean, said on the request before anyone approves.

A negative captured amount is money going back (a refund or a reversal), counted by its size,
never a negative capture; a negative order total is a credit note, owed to the customer, with
nothing to capture. Reconciling reads them so (`reconcile/sql/row_kinds.sql`, `matching.sql`);
this says how many rows each is, with the first rows, so the person approving knows.
"""

from __future__ import annotations

import duckdb

from agent.data.normalize.codes import Code
from agent.data.normalize.load import table_name
from agent.data.normalize.report import ValidationReport
from agent.data.notes import note
from agent.data.schema import DatasetMapping, Role


def check_signs(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    role: Role,
    mapping: DatasetMapping,
    keep: str,
) -> None:
    """A fact for the negative amounts of the rows reconciling reads (`keep`): payments read
    as refunds, orders read as credit notes."""
    field = "captured_amount" if role is Role.PAYMENTS else "order_amount"
    column = mapping.columns.get(field)
    if column is None:
        return
    row = con.execute(
        f"SELECT count(*), min(rowid + 1, 3) FROM {table_name(role)} WHERE {field} < 0 AND ({keep})"
    ).fetchone()
    assert row is not None
    count, examples = int(row[0]), list(row[1] or [])
    if not count:
        return
    code = Code.NEGATIVE_PAYMENTS if role is Role.PAYMENTS else Code.NEGATIVE_ORDERS
    report.facts.append(note(code, file=file_name, count=count, column=column, rows=examples))
