"""Validation: whether the loaded files read under the mapping, field by field, row by row."""

from __future__ import annotations

import duckdb

from agent.data.formats import known_currency_sql
from agent.data.normalize.columns import kinds_column
from agent.data.normalize.expressions import sql_words
from agent.data.normalize.load import table_name
from agent.data.normalize.report import FieldCheck, ValidationReport
from agent.data.policy import Policy
from agent.data.schema import SCHEMA, DatasetMapping, Role

REQUIRED_SHARE = 0.99


def validate(
    con: duckdb.DuckDBPyConnection, role: Role, file_name: str, mapping: DatasetMapping
) -> ValidationReport:
    """Check a loaded dataset: required fields present, values readable, keys and currencies.

    Problems in more than 1% of a required field's values are errors; fewer are warnings, and
    those rows are left out of matching (and reported with their rows).
    """
    report = ValidationReport()
    table = table_name(role)
    total_row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    total = int(total_row[0]) if total_row else 0
    report.rows[role.value] = total
    keep = _counted_rows(role, mapping)
    for spec in SCHEMA[role]:
        column = mapping.columns.get(spec.name)
        if column is None:
            if spec.required and not (spec.kind == "currency" and mapping.options.default_currency):
                report.errors.append(f"{file_name}: no column is mapped to {spec.name}")
            continue
        if spec.kind in ("amount", "timestamp"):
            check = _unreadable(
                con,
                file_name,
                table,
                spec.name,
                f"{spec.name}_raw IS NOT NULL AND {spec.name} IS NULL",
                f"{spec.name}_raw IS NOT NULL",
                column,
                keep,
            )
            check.problem = "values that do not read as " + (
                "amounts" if spec.kind == "amount" else "timestamps"
            )
        elif spec.kind == "currency":
            check = _unreadable(
                con,
                file_name,
                table,
                spec.name,
                f"{spec.name} IS NOT NULL AND {spec.name} NOT IN "
                f"(SELECT code FROM {known_currency_sql()})",
                f"{spec.name} IS NOT NULL",
                column,
                keep,
            )
            check.problem = "values that are not ISO 4217 currency codes"
        elif spec.kind == "id" and spec.required:
            check = _unreadable(
                con,
                file_name,
                table,
                spec.name,
                f"{spec.name} IS NULL AND NOT ({_blank_row(role, mapping)})",
                "true",
                column,
                keep,
            )
            check.problem = "rows with an empty id"
        else:
            continue
        report.checks.append(check)
        if check.unreadable:
            where = ", ".join(str(r) for r in check.example_rows)
            message = (
                f"{file_name}: {check.unreadable} of {check.filled} {check.problem} in column "
                f'"{column}" ({spec.name}), e.g. rows {where}'
            )
            severe = spec.required and check.unreadable_share > 1 - REQUIRED_SHARE
            (report.errors if severe else report.warnings).append(message)
    if role is Role.PAYMENTS:
        _check_kinds(con, report, file_name, mapping)
    return report


def _check_kinds(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    mapping: DatasetMapping,
) -> None:
    """An error naming every row-kind value in no list, with the edit that classifies them.

    Rows whose status is a failed attempt (the default policy's words) or a value to ignore
    are not asked about: they are ignored whatever their kind.
    """
    kinds = mapping.options.kinds
    column = kinds_column(mapping)
    if kinds is None or column is None:
        return
    known = sql_words([*kinds.capture, *kinds.refund, *kinds.ignore])
    skipped = sql_words([*Policy().failed_payment_statuses, *kinds.ignore])
    rows = con.execute(
        f"SELECT coalesce(row_kind, ''), count(*), min(rowid + 1, 3) "
        f"FROM {table_name(Role.PAYMENTS)} "
        f"WHERE (row_kind IS NULL OR row_kind NOT IN {known}) "
        f"AND coalesce(payment_status NOT IN {skipped}, true) "
        "GROUP BY 1 ORDER BY 2 DESC, 1"
    ).fetchall()
    if not rows:
        return
    total = sum(int(count) for _, count, _ in rows)
    listed = ", ".join(
        f'"{value or "(empty)"}" ({count:,}, e.g. rows {", ".join(str(r) for r in examples)})'
        for value, count, examples in rows
    )
    values = [value for value, _, _ in rows if value]
    suggestion = ", ".join([*kinds.ignore, *values])
    report.errors.append(
        f'{file_name}: {total:,} rows have a row kind in column "{column}" that is in no list: '
        f"{listed}. Say what they are, e.g. "
        f'edit payments.kinds_ignore="{suggestion}" (or kinds_capture / kinds_refund)'
    )


def _counted_rows(role: Role, mapping: DatasetMapping) -> str:
    """The rows whose values are checked: not those the approved row kinds ignore (a fee or a
    payout row has no payment id or capture), nor failed attempts under the default policy."""
    kinds = mapping.options.kinds
    if role is not Role.PAYMENTS or kinds is None:
        return "true"
    skipped = sql_words([*Policy().failed_payment_statuses, *kinds.ignore])
    return (
        f"NOT coalesce(row_kind IN {sql_words(kinds.ignore)}, false) "
        f"AND NOT coalesce(payment_status IN {skipped}, false)"
    )


def _blank_row(role: Role, mapping: DatasetMapping) -> str:
    """Rows that carry nothing but line-item detail (continuation rows of an order)."""
    if role is Role.ORDERS and "order_amount" in mapping.columns:
        return "order_amount_raw IS NULL"
    return "false"


def _unreadable(
    con: duckdb.DuckDBPyConnection,
    file_name: str,
    table: str,
    field_name: str,
    bad: str,
    filled: str,
    column: str,
    keep: str = "true",
) -> FieldCheck:
    filled, bad = f"({filled}) AND {keep}", f"({bad}) AND {keep}"
    row = con.execute(
        f"SELECT count(*) FILTER (WHERE {filled}), count(*) FILTER (WHERE {bad}), "
        # The first rows only (`min(x, n)`): never a list of every bad row of a large file.
        f"min(rowid + 1, 5) FILTER (WHERE {bad}) FROM {table}"
    ).fetchone()
    assert row is not None
    return FieldCheck(file_name, field_name, column, int(row[0]), int(row[1]), list(row[2] or []))
