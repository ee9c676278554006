"""Read a whole file into DuckDB under an approved mapping, and check it (validation).

`load_dataset` reads every row with exactly the approved reading options into a table of
canonical fields (`orders_rows` or `payments_rows`), with exact decimals and the keys that join
the files; with `keep_raw` it keeps the raw text of parsed fields so that `validate` can report,
per field, the share of values that do not read and example rows. `load_both` reads the two
files at once. Minor units are computed by the engine, where a currency table can be joined.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from agent.data.formats import (
    SQL_DECIMAL,
    NumberFormat,
    TimestampFormat,
    known_currency_sql,
    sql_amount,
    sql_timestamp,
    sql_trim,
)
from agent.data.ingest import (
    CsvLayout,
    layout_from_options,
    read_table,
)
from agent.data.schema import SCHEMA, DatasetMapping, IdReading, Mapping, Role
from agent.errors import UnknownColumnError

REQUIRED_SHARE = 0.99


SOURCE = "{source}"


def table_name(role: Role) -> str:
    """The table holding `role`'s rows after loading."""
    return f"{role.value}_rows"


def load_dataset(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    path: Path,
    file_name: str,
    mapping: DatasetMapping,
    workdir: Path | None = None,
    *,
    keep_raw: bool = False,
) -> CsvLayout:
    """Read the file at `path` as `role` into `table_name(role)`, one row per data row.

    With `keep_raw`, the text of every parsed field is kept beside it for `validate`; without,
    only what reconciling needs is read (faster, less memory).

    The row number of data row n (1-based, header excluded) is `rowid + 1` of the table.
    Raises UnknownColumnError for a mapped column the file lacks, and the typed input errors of
    `ingest` for a file DuckDB cannot read as approved.
    """
    options = mapping.options
    layout = layout_from_options(
        path,
        file_name,
        encoding=options.encoding,
        delimiter=options.delimiter,
        header_row=options.header_row,
    )
    select = _select_list(role, layout, mapping, keep_raw=keep_raw)
    derived = _derived_columns(role, mapping)
    query = f"SELECT *, {derived} FROM (SELECT {select} FROM {SOURCE})"
    return read_table(con, table_name(role), query, path, layout, workdir)


def load_both(
    con: duckdb.DuckDBPyConnection,
    files: dict[Role, tuple[Path, str]],
    mapping: Mapping,
    workdir: Path | None = None,
    *,
    keep_raw: bool = False,
) -> dict[Role, CsvLayout]:
    """Load the orders and the payments file at once, each on its own cursor.

    DuckDB interleaves the two scans, which keeps both cores busy through the phases where one
    scan alone would not. `files` maps each role to (path on disk, the uploader's file name).
    Returns each file's layout as read, with its data records counted (`CsvLayout.records`).
    """
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="load") as pool:
        loads = [
            pool.submit(
                load_dataset,
                con.cursor(),
                role,
                files[role][0],
                files[role][1],
                mapping.for_role(role),
                workdir,
                keep_raw=keep_raw,
            )
            for role in Role
        ]
        return {role: load.result() for role, load in zip(Role, loads, strict=True)}


def _select_list(role: Role, layout: CsvLayout, mapping: DatasetMapping, *, keep_raw: bool) -> str:
    columns = {name: f"c{i}" for i, name in enumerate(layout.columns)}
    parts: list[str] = []
    for spec in SCHEMA[role]:
        source = mapping.columns.get(spec.name)
        if spec.kind == "text" and not keep_raw:
            continue
        if source is None:
            kind = {"amount": SQL_DECIMAL, "timestamp": "TIMESTAMPTZ"}.get(spec.kind, "VARCHAR")
            parts.append(f"NULL::{kind} AS {spec.name}")
            if spec.kind == "amount":
                parts.append(f"false AS {spec.name}_filled")
            continue
        if source not in columns:
            raise UnknownColumnError(
                f'{layout.file_name} has no column "{source}" (mapped to {spec.name}); '
                f"its columns are: {', '.join(layout.columns)}"
            )
        column = columns[source]
        # Each kind trims where it matters: a parse expression reads the raw cell itself.
        text = f"NULLIF({sql_trim(column)}, '')"
        if spec.kind == "amount":
            reading = mapping.options.amounts.get(spec.name)
            fmt = NumberFormat(reading.decimal, reading.thousands) if reading else NumberFormat()
            if keep_raw:
                parts.append(f"{text} AS {spec.name}_raw")
            parts.append(f"{text} IS NOT NULL AS {spec.name}_filled")
            parts.append(f"{sql_amount(column, fmt)} AS {spec.name}")
        elif spec.kind == "timestamp":
            stamp = mapping.options.timestamps.get(spec.name)
            if keep_raw:
                parts.append(f"{text} AS {spec.name}_raw")
            if stamp is None:
                parts.append(f"NULL::TIMESTAMPTZ AS {spec.name}")
            else:
                stamp_format = TimestampFormat(stamp.pattern, stamp.timezone)
                parts.append(f"{sql_timestamp(column, stamp_format)} AS {spec.name}")
        elif spec.kind == "currency":
            parts.append(f"upper({text}) AS {spec.name}")
        elif spec.kind == "status":
            parts.append(f"replace(lower({text}), ' ', '_') AS {spec.name}")
        else:
            parts.append(f"{text} AS {spec.name}")
    return ", ".join(parts)


def key_sql(value: str, reading: IdReading | None = None) -> str:
    """A DuckDB expression: an id as compared across files, as `profile.normalize_key` does.

    Surrounding spaces and one leading `#` go; nothing else (case and inner characters are part
    of the id, so `AB-7` and `ab-7`, or `#10#07` and `1007`, stay two ids) unless the approved
    `reading` says more: a prefix or suffix removed, leading zeros removed. (Its pattern is
    applied by the callers, before this.) Empty becomes NULL.
    """
    trimmed = sql_trim(value)
    key = (
        f"CASE WHEN starts_with({trimmed}, '#') THEN ltrim(substr({trimmed}, 2)) ELSE {trimmed} END"
    )
    if reading is not None and reading.prefix:
        prefix = _sql_text(reading.prefix)
        key = (
            f"(CASE WHEN starts_with({key}, {prefix}) "
            f"THEN substr({key}, {len(reading.prefix) + 1}) ELSE {key} END)"
        )
    if reading is not None and reading.suffix:
        suffix = _sql_text(reading.suffix)
        key = (
            f"(CASE WHEN ends_with({key}, {suffix}) "
            f"THEN left({key}, length({key}) - {len(reading.suffix)}) ELSE {key} END)"
        )
    if reading is not None and reading.strip_zeros:
        stripped = f"ltrim({key}, '0')"
        key = f"(CASE WHEN {stripped} = '' AND {key} <> '' THEN '0' ELSE {stripped} END)"
    return f"NULLIF({key}, '')"


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


REFERENCE_SEPARATORS = "[\\s,;|/&+]"


def reference_tokens_sql(value: str, reading: IdReading | None = None) -> str:
    """A DuckDB expression: the distinct order ids a reference names, as `reference_tokens`.

    With a pattern in `reading`, every match's capture is one id; otherwise the reference is
    split at separators and the parts with a digit are ids.
    """
    if reading is not None and reading.pattern:
        found = f"regexp_extract_all(coalesce({value}, ''), {_sql_text(reading.pattern)}, 1)"
        return (
            f"list_distinct(list_filter(list_transform({found}, lambda t: {key_sql('t', reading)}),"
            " lambda t: t IS NOT NULL))"
        )
    split = f"string_split_regex(coalesce({value}, ''), '{REFERENCE_SEPARATORS}+')"
    return (
        f"list_distinct(list_filter(list_transform({split}, lambda t: {key_sql('t', reading)}), "
        "lambda t: t IS NOT NULL AND regexp_matches(t, '[0-9]')))"
    )


def minor_sql(amount: str, unit: str, exponent: str) -> str:
    """A DuckDB expression: `amount` (a parsed decimal) in integer minor units."""
    if unit == "minor":
        return f"CAST(round({amount}) AS BIGINT)"
    # One branch per exponent: a constant factor keeps DuckDB's decimal arithmetic in 64 bits.
    branches = " ".join(
        f"WHEN {e} THEN CAST(round({amount} * {10**e}) AS BIGINT)" for e in (2, 0, 3, 4)
    )
    return f"(CASE {exponent} {branches} END)"


def _derived_columns(role: Role, mapping: DatasetMapping) -> str:
    """Columns computed while reading: the currency code and the keys that join the files.

    Only per-row expressions: anything that DuckDB plans as a join (a long IN list, a lookup
    table) would give up file order, and with it the row numbers of the evidence.
    """
    default = mapping.options.default_currency
    default_sql = "NULL" if default is None else "'" + default.upper().replace("'", "''") + "'"
    code = "currency" if default is None else f"coalesce(currency, {default_sql})"
    columns = [f"{code} AS currency_code"]
    reading = mapping.options.ids
    pattern = _sql_text(reading.pattern) if reading is not None and reading.pattern else None
    if role is Role.ORDERS:
        source = "order_id" if pattern is None else f"regexp_extract(order_id, {pattern}, 1)"
        columns.append(f"{key_sql(source, reading)} AS order_key")
    elif pattern is not None:
        # A pattern was approved: its matches are the ids (a person opted in to the cost).
        columns.append(f"len(regexp_extract_all(order_id, {pattern}, 1)) > 1 AS several_refs")
        first = f"regexp_extract(order_id, {pattern}, 1)"
        columns.append(f"{key_sql(first, reading)} AS ref_key")
    else:
        # A reference naming several orders is split into its tokens later, by the engine,
        # for those rows only: list functions on every row would double the read time.
        columns.append(f"regexp_matches(order_id, '{REFERENCE_SEPARATORS}') AS several_refs")
        columns.append(f"{key_sql('order_id', reading)} AS ref_key")
    return ", ".join(columns)


@dataclass
class FieldCheck:
    """How one mapped field's values read across the whole file."""

    file: str
    field: str
    column: str
    filled: int
    unreadable: int
    example_rows: list[int]
    problem: str = ""

    @property
    def unreadable_share(self) -> float:
        """Unreadable values over filled values."""
        return self.unreadable / self.filled if self.filled else 0.0


@dataclass
class ValidationReport:
    """Whether a mapping reads both files: per-field checks and the blocking problems."""

    rows: dict[str, int] = field(default_factory=dict)
    checks: list[FieldCheck] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing blocks reconciling under this mapping."""
        return not self.errors


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
    return report


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
) -> FieldCheck:
    row = con.execute(
        f"SELECT count(*) FILTER (WHERE {filled}), count(*) FILTER (WHERE {bad}), "
        f"list(rowid + 1 ORDER BY rowid) FILTER (WHERE {bad})[1:5] FROM {table}"
    ).fetchone()
    assert row is not None
    return FieldCheck(file_name, field_name, column, int(row[0]), int(row[1]), list(row[2] or []))


def merge(first: ValidationReport, second: ValidationReport) -> ValidationReport:
    """One report for both files."""
    return ValidationReport(
        rows={**first.rows, **second.rows},
        checks=[*first.checks, *second.checks],
        errors=[*first.errors, *second.errors],
        warnings=[*first.warnings, *second.warnings],
        facts=[*first.facts, *second.facts],
    )
