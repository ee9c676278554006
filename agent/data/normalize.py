"""Read a whole file into DuckDB under an approved mapping, and check it (validation).

`load_dataset` reads every row with exactly the approved reading options into a table of
canonical fields (`orders_rows` or `payments_rows`), with exact decimals and the keys that join
the files; with `keep_raw` it keeps the raw text of parsed fields so that `validate` can report,
per field, the share of values that do not read and example rows. `load_both` reads the two
files at once. Minor units are computed by the engine, where a currency table can be joined.
"""

from __future__ import annotations

import re
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
from agent.data.policy import Policy
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
    read = read_table(con, table_name(role), query, path, layout, workdir)
    for name, stamp in options.timestamps.items():
        if stamp.zone_column is not None and name in mapping.columns:
            _apply_zones(con, table_name(role), name, stamp.timezone)
    return read


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
            if stamp is not None and stamp.time_column is not None:
                # The date in one column, the time of day in another: read them joined.
                time = _column_of(layout, columns, stamp.time_column, "time_column")
                column = f"concat_ws(' ', {text}, NULLIF({sql_trim(time)}, ''))"
                text = f"NULLIF({column}, '')"
            if keep_raw:
                parts.append(f"{text} AS {spec.name}_raw")
            if stamp is None:
                parts.append(f"NULL::TIMESTAMPTZ AS {spec.name}")
            elif stamp.zone_column is not None:
                # Each row's zone is in another column: read the local time here, and let
                # `_apply_zones` turn it into a point in time once the zones are known.
                zone = _column_of(layout, columns, stamp.zone_column, "timezone_column")
                local = sql_timestamp(column, TimestampFormat(stamp.pattern, "UTC"))
                parts.append(f"{local} AS {spec.name}_local")
                parts.append(f"NULLIF({sql_trim(zone)}, '') AS {spec.name}_zone")
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
    if role is Role.PAYMENTS:
        parts.append(f"{_row_kind_sql(layout, mapping, columns)} AS row_kind")
    return ", ".join(parts)


def _column_of(layout: CsvLayout, columns: dict[str, str], name: str, option: str) -> str:
    """The positional name (`c3`) of a column a reading option names; raises if there is none."""
    if name not in columns:
        raise UnknownColumnError(
            f'{layout.file_name} has no column "{name}" ({option}); '
            f"its columns are: {', '.join(layout.columns)}"
        )
    return columns[name]


# Time zone abbreviations exports write, as fixed offsets in minutes (a row that says PDT was
# written in daylight time, whatever the date), and the zone names some dashboards write.
ZONE_ABBREVIATIONS = {
    "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 60, "BST": 60, "CET": 60, "CEST": 120,
    "EET": 120, "EEST": 180, "MSK": 180, "IST": 330, "SGT": 480, "HKT": 480, "JST": 540,
    "KST": 540, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780, "HST": -600, "AKST": -540,
    "AKDT": -480, "PST": -480, "PDT": -420, "MST": -420, "MDT": -360, "CST": -360, "CDT": -300,
    "EST": -300, "EDT": -240, "AST": -240, "ADT": -180, "NST": -210, "NDT": -150,
}  # fmt: skip
ZONE_NAMES = {
    "pacific time (us & canada)": "America/Los_Angeles",
    "mountain time (us & canada)": "America/Denver",
    "central time (us & canada)": "America/Chicago",
    "eastern time (us & canada)": "America/New_York",
    "atlantic time (canada)": "America/Halifax",
    "alaska": "America/Anchorage",
    "hawaii": "Pacific/Honolulu",
    "london": "Europe/London",
    "berlin": "Europe/Berlin",
    "paris": "Europe/Paris",
    "amsterdam": "Europe/Amsterdam",
}
_OFFSET = re.compile(r"^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
MAX_ZONES = 1000


def zone_sql(con: duckdb.DuckDBPyConnection, value: str, local: str) -> str | None:
    """A DuckDB expression: the naive timestamp `local` written in the zone `value`, as a point
    in time; None for a value that names no zone (an offset such as `+02:00` or `UTC-5`, an
    abbreviation such as `CET` or `PDT`, a dashboard name such as `Central Time (US &
    Canada)`, or an IANA name such as `Europe/Berlin`)."""
    text = value.strip()
    minutes: int | None = None
    if match := _OFFSET.match(text):
        sign = -1 if match.group(1) == "-" else 1
        minutes = sign * (int(match.group(2)) * 60 + int(match.group(3) or 0))
    elif text.upper() in ZONE_ABBREVIATIONS:
        minutes = ZONE_ABBREVIATIONS[text.upper()]
    if minutes is not None:
        return f"timezone('UTC', {local} - INTERVAL ({minutes}) MINUTE)"
    name = ZONE_NAMES.get(text.lower(), text)
    try:
        con.execute("SELECT timezone(?, TIMESTAMP '2000-01-01')", [name]).fetchone()
    except duckdb.Error:
        return None
    return f"timezone({_sql_text(name)}, {local})"


def _apply_zones(
    con: duckdb.DuckDBPyConnection, table: str, name: str, default: str | None
) -> None:
    """Give `name` its point in time from `name_local` and the row's zone `name_zone`.

    Rows whose zone cell is empty take the mapping's `default` zone (UTC when none); rows whose
    zone names nothing stay empty, so validation reports them as unreadable with their rows.
    Only the distinct zones are looked at (at most MAX_ZONES), and rows keep their order.
    """
    local = f"{name}_local"
    zones = con.execute(
        f"SELECT DISTINCT {name}_zone FROM {table} WHERE {name}_zone IS NOT NULL LIMIT {MAX_ZONES}"
    ).fetchall()
    cases = []
    for (zone,) in zones:
        expr = zone_sql(con, str(zone), local)
        if expr is not None:
            cases.append(f"WHEN {_sql_text(str(zone))} THEN {expr}")
    fallback = zone_sql(con, default or "UTC", local) or f"timezone('UTC', {local})"
    switch = f"CASE {name}_zone {' '.join(cases)} END" if cases else "NULL"
    con.execute(
        f"UPDATE {table} SET {name} = "
        f"CASE WHEN {name}_zone IS NULL THEN {fallback} ELSE {switch} END"
    )


def kinds_column(mapping: DatasetMapping) -> str | None:
    """The column whose values say each payment row's kind, when the mapping reads row kinds."""
    kinds = mapping.options.kinds
    if kinds is None:
        return None
    return kinds.column or mapping.columns.get("payment_status")


def _row_kind_sql(layout: CsvLayout, mapping: DatasetMapping, columns: dict[str, str]) -> str:
    """The row-kind value of a payment row, read as status words are (`kind_word`)."""
    source = kinds_column(mapping)
    if source is None:
        if mapping.options.kinds is not None:
            raise UnknownColumnError(
                f"{layout.file_name}: row kinds are set but no column says them; map "
                "payment_status or set kinds_column"
            )
        return "NULL::VARCHAR"
    if source not in columns:
        raise UnknownColumnError(
            f'{layout.file_name} has no column "{source}" (kinds_column); '
            f"its columns are: {', '.join(layout.columns)}"
        )
    column = columns[source]
    return f"replace(lower(NULLIF({sql_trim(column)}, '')), ' ', '_')"


def sql_words(words: tuple[str, ...] | list[str]) -> str:
    """A DuckDB list literal of words for `x IN ...`; `(NULL)` when empty (nothing is in it)."""
    if not words:
        return "(NULL)"
    return "(" + ", ".join(_sql_text(w) for w in words) + ")"


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
        f"SELECT coalesce(row_kind, ''), count(*), list(rowid + 1 ORDER BY rowid)[1:3] "
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
