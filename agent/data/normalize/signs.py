"""What the signs of amounts mean, said on the request before anyone approves.

A negative captured amount is money going back (a refund or a reversal), counted by its size,
never a negative capture; a negative order total is a credit note, owed to the customer, with
nothing to capture. Reconciling reads them so (`reconcile/sql/row_kinds.sql`, `matching.sql`);
this says how many rows each is, with the first rows, so the person approving knows.
"""

from __future__ import annotations

import duckdb

from agent.data.normalize.load import table_name
from agent.data.normalize.report import ValidationReport
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
    where = ", ".join(str(r) for r in examples)
    if role is Role.PAYMENTS:
        report.facts.append(
            f'{file_name}: {count:,} rows have a negative amount in "{column}" (e.g. rows '
            f"{where}): read as refunds or reversals of the capture or order they name, "
            "counted by their size"
        )
    else:
        report.facts.append(
            f'{file_name}: {count:,} rows have a negative total in "{column}" (e.g. rows '
            f"{where}): read as credit notes, owed to the customer; one no refund names is "
            "ignored (reason credit_note)"
        )
