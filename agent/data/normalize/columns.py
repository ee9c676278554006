"""What is read of each file: the canonical columns, parsed, and the keys that join the files.

`select_list` reads every mapped field of the schema from the positional columns of the file
(`c0`, `c1`, ...); `derived_columns` adds, per row, the currency code and the join keys.
"""

from __future__ import annotations

from agent.data.formats import SQL_DECIMAL, NumberFormat, sql_amount, sql_trim
from agent.data.ingest import CsvLayout
from agent.data.normalize.expressions import REFERENCE_SEPARATORS, key_sql, sql_text
from agent.data.schema import SCHEMA, DatasetMapping, Role, TimestampReading
from agent.data.timestamp_formats import (
    ZONE_SUFFIX,
    TimestampFormat,
    sql_timestamp,
    zone_split_sql,
)
from agent.errors import UnknownColumnError


def select_list(role: Role, layout: CsvLayout, mapping: DatasetMapping) -> str:
    """The SELECT list that reads `role`'s schema fields from the file's positional columns
    (`select_columns`, each as `expression AS name`)."""
    return ", ".join(
        f"{expression} AS {name}" for name, expression in select_columns(role, layout, mapping)
    )


def select_columns(role: Role, layout: CsvLayout, mapping: DatasetMapping) -> list[tuple[str, str]]:
    """The columns, as (name, expression) in order, that read `role`'s schema fields from the
    file's positional columns.

    Each mapped field is parsed as its kind says (amounts, timestamps, currency codes, status
    words); an unmapped one is NULL of its type. Beside every amount and timestamp,
    `<field>_filled` says whether the cell holds anything: a filled cell whose value is NULL
    did not read, which validation counts and the ledger reports. Free-text fields (a
    customer's name) are neither checked nor reconciled, so they are not read. Raises
    UnknownColumnError for a mapped column the file lacks.
    """
    columns = {name: f"c{i}" for i, name in enumerate(layout.columns)}
    parts: list[tuple[str, str]] = []
    currency = _row_currency(mapping, columns)
    for spec in SCHEMA[role]:
        source = mapping.columns.get(spec.name)
        if source is not None and source not in columns:
            raise UnknownColumnError(
                f'{layout.file_name} has no column "{source}" (mapped to {spec.name}); '
                f"its columns are: {', '.join(layout.columns)}"
            )
        if spec.kind == "text":
            continue
        if source is None:
            kind = {"amount": SQL_DECIMAL, "timestamp": "TIMESTAMPTZ"}.get(spec.kind, "VARCHAR")
            parts.append((spec.name, f"NULL::{kind}"))
            if spec.kind in ("amount", "timestamp"):
                parts.append((f"{spec.name}_filled", "false"))
            continue
        column = columns[source]
        # Each kind trims where it matters: a parse expression reads the raw cell itself.
        text = f"NULLIF({sql_trim(column)}, '')"
        if spec.kind == "amount":
            reading = mapping.options.amounts.get(spec.name)
            fmt = NumberFormat(reading.decimal, reading.thousands) if reading else NumberFormat()
            parts.append((f"{spec.name}_filled", f"{text} IS NOT NULL"))
            parts.append((spec.name, sql_amount(column, fmt, currency)))
        elif spec.kind == "timestamp":
            stamp = mapping.options.timestamps.get(spec.name)
            if stamp is not None and stamp.time_column is not None:
                # The date in one column, the time of day in another: read them joined.
                time = _column_of(layout, columns, stamp.time_column, "time_column")
                column = f"concat_ws(' ', {text}, NULLIF({sql_trim(time)}, ''))"
                text = f"NULLIF({column}, '')"
            parts.append((f"{spec.name}_filled", f"{text} IS NOT NULL"))
            if stamp is None:
                parts.append((spec.name, "NULL::TIMESTAMPTZ"))
            elif stamp.zone_column is not None or stamp.pattern.endswith(ZONE_SUFFIX):
                # Each row's zone is in another column or after its time: read the local time
                # here, and let `apply_zones` make it a point in time once the zones are known.
                local, zone = _local_and_zone(layout, columns, column, stamp)
                parts.append((f"{spec.name}_local", local))
                parts.append((f"{spec.name}_zone", zone))
                parts.append((spec.name, "NULL::TIMESTAMPTZ"))
            else:
                stamp_format = TimestampFormat(stamp.pattern, stamp.timezone)
                parts.append((spec.name, sql_timestamp(column, stamp_format)))
        elif spec.kind == "currency":
            parts.append((spec.name, f"upper({text})"))
        elif spec.kind == "status":
            parts.append((spec.name, sql_word(column)))
        else:
            parts.append((spec.name, text))
    if role is Role.PAYMENTS:
        parts.append(("row_kind", _row_kind_sql(layout, mapping, columns)))
    return parts


def _local_and_zone(
    layout: CsvLayout, columns: dict[str, str], column: str, stamp: TimestampReading
) -> tuple[str, str]:
    """The SQL of a timestamp's local time (naive, read by the pattern) and of its zone text:
    the zone written after the time (`ZONE_SUFFIX`), else the zone column's cell; NULL when
    neither says one."""
    zones = []
    local_text, pattern = column, stamp.pattern
    if pattern.endswith(ZONE_SUFFIX):
        local_text, written = zone_split_sql(column, pattern)
        pattern = pattern.removesuffix(ZONE_SUFFIX)
        zones.append(written)
    if stamp.zone_column is not None:
        zone = _column_of(layout, columns, stamp.zone_column, "timezone_column")
        zones.append(f"NULLIF({sql_trim(zone)}, '')")
    local = sql_timestamp(local_text, TimestampFormat(pattern, "UTC"))
    return local, zones[0] if len(zones) == 1 else f"coalesce({', '.join(zones)})"


def _row_currency(mapping: DatasetMapping, columns: dict[str, str]) -> str | None:
    """The SQL of a row's currency code as the amounts are checked against it (`sql_amount`):
    the mapped currency column's code, else the default currency; None when neither is known."""
    source = mapping.columns.get("currency")
    code = f"upper(NULLIF({sql_trim(columns[source])}, ''))" if source in columns else None
    default = _default_currency_sql(mapping)
    if default is None:
        return code
    return default if code is None else f"coalesce({code}, {default})"


def _default_currency_sql(mapping: DatasetMapping) -> str | None:
    """The mapping's default currency as an SQL literal (upper case), or None without one."""
    default = mapping.options.default_currency
    return None if default is None else "'" + default.upper().replace("'", "''") + "'"


def _column_of(layout: CsvLayout, columns: dict[str, str], name: str, option: str) -> str:
    """The positional name (`c3`) of a column a reading option names; raises if there is none."""
    if name not in columns:
        raise UnknownColumnError(
            f'{layout.file_name} has no column "{name}" ({option}); '
            f"its columns are: {', '.join(layout.columns)}"
        )
    return columns[name]


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
    return sql_word(columns[source])


# What Python's `str.strip()` strips (`kind_word`), in RE2: ASCII and Unicode spaces (the
# no-break space of a Windows-1252 export, a tab), so `Failed\xa0` is the word `failed`.
_EDGE_SPACE = r"[\s\x{0B}\x{1C}-\x{1F}\x{85}\p{Z}]+"
_EDGE_SPACES = f"'^{_EDGE_SPACE}|{_EDGE_SPACE}$'"


def sql_word(column: str) -> str:
    """A status or row-kind cell as `kind_word` reads it: trimmed of any space, lower case,
    spaces as underscores; NULL when empty. A cell ending in a character outside printable
    ASCII takes the regular expression; the rest a plain `lower`."""
    edges = (
        f"ord({column}) NOT BETWEEN 33 AND 126 OR ord(right({column}, 1)) NOT BETWEEN 33 AND 126"
    )
    stripped = f"regexp_replace({column}, {_EDGE_SPACES}, '', 'g')"
    trimmed = f"CASE WHEN {edges} THEN {stripped} ELSE {column} END"
    return f"replace(lower(NULLIF({trimmed}, '')), ' ', '_')"


def row_name_sql(rowid: str) -> str:
    """A DuckDB expression: the name of the loaded row `rowid` where a file has no column of
    ids for it (`FieldSpec.by_row`), `row N` for its data row N, as the evidence numbers rows
    (`rowid + 1`: the n-th record after the header). Read only for the rows a finding or the
    exceptions CSV shows, never stored on every row."""
    return f"'row ' || CAST({rowid} + 1 AS VARCHAR)"


def derived_columns(role: Role, mapping: DatasetMapping) -> str:
    """Columns computed while reading: the currency code and the keys that join the files.

    Only per-row expressions: anything that DuckDB plans as a join (a long IN list, a lookup
    table) would give up file order, and with it the row numbers of the evidence.
    """
    return ", ".join(f"{expression} AS {name}" for name, expression in derived_pairs(role, mapping))


def derived_pairs(role: Role, mapping: DatasetMapping) -> list[tuple[str, str]]:
    """`derived_columns` as (name, expression) in order: the currency code, then the keys."""
    default = _default_currency_sql(mapping)
    code = "currency" if default is None else f"coalesce(currency, {default})"
    return [("currency_code", code), *key_columns(role, mapping).items()]


def key_columns(role: Role, mapping: DatasetMapping) -> dict[str, str]:
    """The join keys a loaded table carries (name -> per-row expression on its `order_id`)
    under the mapping's id reading: read while loading, or again in place (`load.rekey`)."""
    reading = mapping.options.ids
    pattern = sql_text(reading.pattern) if reading is not None and reading.pattern else None
    if role is Role.ORDERS:
        source = "order_id" if pattern is None else f"regexp_extract(order_id, {pattern}, 1)"
        return {"order_key": key_sql(source, reading)}
    if pattern is not None:
        # A pattern was approved: its matches are the ids (a person opted in to the cost).
        first = f"regexp_extract(order_id, {pattern}, 1)"
        return {
            "several_refs": f"len(regexp_extract_all(order_id, {pattern}, 1)) > 1",
            "ref_key": key_sql(first, reading),
        }
    if reading is not None and reading.whole:  # one id, separators and all
        return {"several_refs": "false", "ref_key": key_sql("order_id", reading)}
    # A reference naming several orders is split into its tokens later, by the engine, for
    # those rows only: list functions on every row would double the read time.
    return {
        "several_refs": f"regexp_matches(order_id, '{REFERENCE_SEPARATORS}')",
        "ref_key": key_sql("order_id", reading),
    }
