"""Time zones of rows: a timestamp whose zone is in another column, or written after its time,
gets its point in time.

A zone cell may be an offset (`+02:00`, `UTC-5`), an abbreviation (`CET`, `PDT`), a Windows or
dashboard's name (`W. Europe Standard Time`, `Central Time (US & Canada)`) or an IANA name
(`Europe/Berlin`): `time_zones.zone_of` says which zone, once per distinct cell, as inference
does. Abbreviations are fixed offsets; names take their zone's rules in DuckDB (`timezone()`,
ICU), so a daylight-saving change inside a file reads right.
"""

from __future__ import annotations

import duckdb

from agent.data.normalize.expressions import sql_text
from agent.data.time_zones import ZONE_ABBREVIATIONS as ZONE_ABBREVIATIONS
from agent.data.time_zones import ZONE_NAMES as ZONE_NAMES
from agent.data.time_zones import resolve_zone

# The abbreviations that other places write for another zone, with how they are read when the
# mapping's zone does not say (`time_checks` warns with these words).
AMBIGUOUS_ZONES = {
    "CST": "US Central, UTC-6 (China Standard Time is UTC+8)",
    "IST": "India, UTC+5:30 (Irish and Israel Standard Time are UTC+1 and UTC+2)",
    "AST": "Atlantic, UTC-4 (Arabia Standard Time is UTC+3)",
    "BST": "British Summer Time, UTC+1 (Bangladesh Standard Time is UTC+6)",
}
MAX_ZONES = 1000


def zone_sql(
    con: duckdb.DuckDBPyConnection, value: str, local: str, default: str | None = None
) -> str | None:
    """A DuckDB expression: the naive timestamp `local` written in the zone `value`, as a point
    in time; None for a value that names no zone (see `time_zones.zone_of`). An abbreviation
    that names several zones is read as the one the mapping's zone `default` has
    (`time_zones.resolve_zone`)."""
    zone = resolve_zone(value, default)
    if zone is None:
        return None
    if zone.name is None:  # a fixed offset
        return f"timezone('UTC', {local} - INTERVAL ({zone.minutes or 0}) MINUTE)"
    try:  # Python's and DuckDB's lists of zones could differ: DuckDB must know it too
        con.execute("SELECT timezone(?, TIMESTAMP '2000-01-01')", [zone.name]).fetchone()
    except duckdb.Error:
        return None
    return f"timezone({sql_text(zone.name)}, {local})"


def apply_zones(con: duckdb.DuckDBPyConnection, table: str, name: str, default: str | None) -> None:
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
        expr = zone_sql(con, str(zone), local, default)
        if expr is not None:
            cases.append(f"WHEN {sql_text(str(zone))} THEN {expr}")
    fallback = zone_sql(con, default or "UTC", local) or f"timezone('UTC', {local})"
    switch = f"CASE {name}_zone {' '.join(cases)} END" if cases else "NULL"
    con.execute(
        f"UPDATE {table} SET {name} = "
        f"CASE WHEN {name}_zone IS NULL THEN {fallback} ELSE {switch} END"
    )
