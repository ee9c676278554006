"""Time zones of rows: a timestamp whose zone is in another column gets its point in time.

A zone cell may be an offset (`+02:00`, `UTC-5`), an abbreviation (`CET`, `PDT`), a dashboard's
name (`Central Time (US & Canada)`) or an IANA name (`Europe/Berlin`).
"""

from __future__ import annotations

import re

import duckdb

from agent.data.normalize.expressions import sql_text

# Time zone abbreviations exports write, as fixed offsets in minutes (a row that says PDT was
# written in daylight time, whatever the date), and the zone names some dashboards write.
ZONE_ABBREVIATIONS = {
    "UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 60, "BST": 60, "CET": 60, "CEST": 120,
    "EET": 120, "EEST": 180, "MSK": 180, "IST": 330, "SGT": 480, "HKT": 480, "JST": 540,
    "KST": 540, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780, "HST": -600, "AKST": -540,
    "AKDT": -480, "PST": -480, "PDT": -420, "MST": -420, "MDT": -360, "CST": -360, "CDT": -300,
    "EST": -300, "EDT": -240, "AST": -240, "ADT": -180, "NST": -210, "NDT": -150,
}  # fmt: skip
# The abbreviations above that other places write for another zone: read as above, and
# warned about (`time_checks`).
AMBIGUOUS_ZONES = {
    "CST": "US Central, UTC-6 (China Standard Time is UTC+8)",
    "IST": "India, UTC+5:30 (Irish and Israel Standard Time are UTC+1 and UTC+2)",
    "AST": "Atlantic, UTC-4 (Arabia Standard Time is UTC+3)",
    "BST": "British Summer Time, UTC+1 (Bangladesh Standard Time is UTC+6)",
}
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
    return f"timezone({sql_text(name)}, {local})"


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
        expr = zone_sql(con, str(zone), local)
        if expr is not None:
            cases.append(f"WHEN {sql_text(str(zone))} THEN {expr}")
    fallback = zone_sql(con, default or "UTC", local) or f"timezone('UTC', {local})"
    switch = f"CASE {name}_zone {' '.join(cases)} END" if cases else "NULL"
    con.execute(
        f"UPDATE {table} SET {name} = "
        f"CASE WHEN {name}_zone IS NULL THEN {fallback} ELSE {switch} END"
    )
