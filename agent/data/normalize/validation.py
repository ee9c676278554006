"""Validation: whether the loaded files read under the mapping, field by field, row by row."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from agent.data.formats import known_currency_sql
from agent.data.normalize.answers import TableAnswers
from agent.data.normalize.codes import Code
from agent.data.normalize.expressions import finer_than_minor_sql, sql_words
from agent.data.normalize.load import table_name
from agent.data.normalize.meanings import (
    check_order_statuses,
    check_payment_statuses,
    check_row_kinds,
)
from agent.data.normalize.report import FieldCheck, ValidationReport
from agent.data.normalize.signs import check_signs
from agent.data.normalize.time_checks import check_times
from agent.data.notes import Note, note
from agent.data.policy import Policy
from agent.data.schema import SCHEMA, DatasetMapping, Role

REQUIRED_SHARE = 0.99


def validate(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    file_name: str,
    mapping: DatasetMapping,
    policy: Policy,
    answers: TableAnswers | None = None,
) -> ValidationReport:
    """Check a loaded dataset under the policy in force: required fields present, values
    readable, keys and currencies, and every status and row-kind value given a meaning.

    Problems in more than 1% of a required field's values are errors; fewer are warnings, and
    those rows are left out of matching (and reported with their rows). With `answers`, a
    field's check already answered on a column read the same way is not made again (an edit
    of one column checks that column).
    """
    report = ValidationReport()
    table = table_name(role)
    keep = _counted_rows(role, mapping, policy)
    wanted: list[_Check] = []
    missing: dict[int, list[Note]] = {}  # unmapped fields' errors, by their place among checks
    for spec in SCHEMA[role]:
        column = mapping.columns.get(spec.name)
        if column is None:
            if spec.by_row:
                report.facts.append(note(Code.BY_ROW, file=file_name, field=spec.name))
            elif spec.required and not (
                spec.kind == "currency" and mapping.options.default_currency
            ):
                unmapped = note(Code.UNMAPPED_FIELD, file=file_name, field=spec.name)
                missing.setdefault(len(wanted), []).append(unmapped)
            continue
        if spec.kind in ("amount", "timestamp"):
            noun = "amounts" if spec.kind == "amount" else "timestamps"
            if spec.kind == "amount":  # an amount naming another currency does not read
                noun += " (or that name a currency other than their row's)"
            wanted.append(
                _Check(
                    spec.name,
                    column,
                    spec.required,
                    f"{spec.name}_filled AND {spec.name} IS NULL",
                    f"{spec.name}_filled",
                    f"values that do not read as {noun}",
                )
            )
        elif spec.kind == "currency":
            wanted.append(
                _Check(
                    spec.name,
                    column,
                    spec.required,
                    f"{spec.name} IS NOT NULL AND {spec.name} NOT IN "
                    f"(SELECT code FROM {known_currency_sql()})",
                    f"{spec.name} IS NOT NULL",
                    "values that are not ISO 4217 currency codes",
                )
            )
        elif spec.kind == "id":  # a chosen id column must name its rows, payment id or not
            wanted.append(
                _Check(
                    spec.name,
                    column,
                    True,
                    f"{spec.name} IS NULL AND NOT ({_blank_row(role, mapping)})",
                    "true",
                    "rows with an empty id",
                )
            )
    total, checks = _run_checks(con, file_name, table, wanted, keep, answers)
    report.rows[role.value] = total
    for place, (want, check) in enumerate(zip(wanted, checks, strict=True)):
        report.errors.extend(missing.pop(place, []))
        report.checks.append(check)
        if check.unreadable:
            if want.required and check.unreadable_share > 1 - REQUIRED_SHARE:
                report.errors.append(_unreadable(Code.UNREADABLE, check))
            else:  # the mapping can be approved: the words say what approving does with them
                report.warnings.append(_unreadable(Code.UNREADABLE_SKIPPED, check))
    report.errors.extend(e for errors in missing.values() for e in errors)  # after the last
    _check_precision(con, report, file_name, role, mapping, keep, policy, answers)
    check_times(con, report, file_name, role, mapping, keep)
    check_signs(con, report, file_name, role, mapping, keep)
    if role is Role.PAYMENTS:
        check_row_kinds(con, report, file_name, mapping, policy, answers)
        check_payment_statuses(con, report, file_name, mapping, policy, answers)
    else:
        check_order_statuses(con, report, file_name, mapping, policy, answers)
    return report


def _check_precision(
    con: duckdb.DuckDBPyConnection,
    report: ValidationReport,
    file_name: str,
    role: Role,
    mapping: DatasetMapping,
    keep: str,
    policy: Policy,
    answers: TableAnswers | None = None,
) -> None:
    """A warning for each amount column with values finer than their currency's minor unit.

    The engine counts money in whole minor units and rounds such a value half away from zero
    (10.005 USD is 10.01): the person is told before approving, with the rows, instead of
    meeting a rounded result unannounced. Rows whose currency does not read are not asked about
    (the currency's own check names them), nor failed attempts and rows the approved row kinds
    ignore. Other rows whose amount the engine does not use (a conflicting total under one id,
    a payment without an id) are named too: the message says "where reconciling uses one".
    Amounts are read to six decimals (`SQL_DECIMAL`) before this sees them.
    """
    fields = [
        (spec.name, column)
        for spec in SCHEMA[role]
        if spec.kind == "amount" and (column := mapping.columns.get(spec.name)) is not None
    ]
    if not fields:
        return
    if role is Role.PAYMENTS:  # a failed attempt's amount is never reconciled
        failed = sql_words(policy.failed_payment_statuses)
        keep = f"({keep}) AND NOT coalesce(payment_status IN {failed}, false)"
    # Joined on the currency's code as the engine joins it (a currency that does not read has
    # no exponent, and its own check names those rows).
    source = (
        f"{table_name(role)} t "
        f"LEFT JOIN {known_currency_sql()} ON currency_exponents.code = t.currency_code "
        f"WHERE {keep}"
    )
    asks = []
    for field, _ in fields:
        finer = finer_than_minor_sql(
            field, mapping.options.unit_of(field), "currency_exponents.exponent"
        )
        asks.append(
            [
                f"count({field})",
                f"count(*) FILTER (WHERE {finer})",
                # The first rows only (`min(x, n)`): never a list of every such row of a file.
                f"min(t.rowid + 1, 5) FILTER (WHERE {finer})",
            ]
        )
    keys = [_answer_key(answers, source, *ask) for ask in asks]
    found = [answers.recall(key) if answers is not None else None for key in keys]
    asked = [i for i, answer in enumerate(found) if answer is None]
    if asked:
        parts = ", ".join(part for i in asked for part in asks[i])
        row = con.execute(f"SELECT {parts} FROM {source}").fetchone()
        assert row is not None
        for place, i in enumerate(asked):
            fresh = tuple(row[3 * place : 3 * place + 3])
            found[i] = fresh
            if answers is not None:
                answers.remember(keys[i], fresh)
    for (field, column), answer in zip(fields, found, strict=True):
        assert answer is not None
        filled, finer_count, rows = answer
        if not finer_count:
            continue
        report.warnings.append(
            note(
                Code.FINER_THAN_MINOR,
                file=file_name,
                count=int(finer_count),
                filled=int(filled),
                column=column,
                field=field,
                rows=list(rows or []),
                minor=mapping.options.unit_of(field) == "minor",
            )
        )


def _counted_rows(role: Role, mapping: DatasetMapping, policy: Policy) -> str:
    """The rows whose values are checked: not those the approved row kinds ignore (a fee or a
    payout row has no payment id or capture), nor failed attempts under the policy."""
    kinds = mapping.options.kinds
    if role is not Role.PAYMENTS or kinds is None:
        return "true"
    skipped = sql_words([*policy.failed_payment_statuses, *kinds.ignore])
    return (
        f"NOT coalesce(row_kind IN {sql_words(kinds.ignore)}, false) "
        f"AND NOT coalesce(payment_status IN {skipped}, false)"
    )


def _blank_row(role: Role, mapping: DatasetMapping) -> str:
    """Rows whose empty id is no problem: an order's continuation rows (line-item detail
    only); refund rows (a refund's kind or a negative amount), which reach their capture by
    either id (a settlement's RETURN row has no capture id of its own); and the rows the
    approved row kinds ignore, by their kind or their status as reconciling reads them (a fee,
    a payout or a deposit names no payment: those rows are never counted here at all, see
    `_counted_rows`, and said so here too, so that this check stands on its own)."""
    if role is Role.ORDERS and "order_amount" in mapping.columns:
        return "NOT order_amount_filled"
    if role is Role.PAYMENTS:
        kinds = mapping.options.kinds
        refund = sql_words(kinds.refund) if kinds is not None else "(NULL)"
        ignore = sql_words(kinds.ignore) if kinds is not None else "(NULL)"
        return (
            f"coalesce(row_kind IN {refund} OR captured_amount < 0, false) "
            f"OR coalesce(row_kind IN {ignore}, false) "
            f"OR coalesce(payment_status IN {ignore}, false)"
        )
    return "false"


def _unreadable(code: Code, check: FieldCheck) -> Note:
    """The note of a field whose values do not read (`code`: an error or a warning), with the
    counts and first rows of `check`; its words add the remedy or what reconciling does."""
    return note(
        code,
        file=check.file,
        unreadable=check.unreadable,
        filled=check.filled,
        problem=check.problem,
        column=check.column,
        field=check.field,
        rows=list(check.example_rows),
    )


@dataclass(frozen=True)
class _Check:
    """One field's check: the rows whose value is there (`filled`) and those of them that do
    not read (`bad`), as SQL conditions on the loaded table, and what such a value is called."""

    field: str
    column: str
    required: bool
    bad: str
    filled: str
    problem: str


def _run_checks(
    con: duckdb.DuckDBPyConnection,
    file_name: str,
    table: str,
    checks: list[_Check],
    keep: str,
    answers: TableAnswers | None = None,
) -> tuple[int, list[FieldCheck]]:
    """The table's rows, and each check's counts and first bad rows, in one scan of it; with
    `answers`, only the checks not answered before on columns read the same way are made."""
    keys = [_answer_key(answers, table, check.filled, check.bad, keep) for check in checks]
    found = [answers.recall(key) if answers is not None else None for key in keys]
    asked = [i for i, answer in enumerate(found) if answer is None]
    parts = ["count(*)"]
    for i in asked:
        filled, bad = f"({checks[i].filled}) AND {keep}", f"({checks[i].bad}) AND {keep}"
        parts += [
            f"count(*) FILTER (WHERE {filled})",
            f"count(*) FILTER (WHERE {bad})",
            # The first rows only (`min(x, n)`): never a list of every bad row of a large file.
            f"min(rowid + 1, 5) FILTER (WHERE {bad})",
        ]
    row = con.execute(f"SELECT {', '.join(parts)} FROM {table}").fetchone()
    assert row is not None
    for place, i in enumerate(asked):
        fresh = tuple(row[1 + 3 * place : 4 + 3 * place])
        found[i] = fresh
        if answers is not None:
            answers.remember(keys[i], fresh)
    results = []
    for check, answer in zip(checks, found, strict=True):
        assert answer is not None
        filled, unreadable, rows = answer
        results.append(
            FieldCheck(
                file_name,
                check.field,
                check.column,
                int(filled),
                int(unreadable),
                list(rows or []),
                problem=check.problem,
            )
        )
    return int(row[0]), results


def _answer_key(answers: TableAnswers | None, *sql: str) -> str | None:
    """The key a check made of `sql` is answered under (None without `answers`)."""
    return answers.key(*sql) if answers is not None else None
