"""How timestamps are read: date/time pattern, day/month order, time zone, and answers about them.

A column's pattern comes from its sampled values (its profile); a timestamp without a zone is
read as UTC, with a note unless the header says `UTC`/`GMT`, and a note when every sampled date
fits both day-first and month-first. A person may answer the date order, the pattern, the time
zone, a column holding each row's zone, or a separate column holding the time of day (see
`schema.TIME_OPTIONS`).
"""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent.data.ingest import CsvSample
from agent.data.mapping.headers import normalize_header
from agent.data.profile import ColumnProfile, column_values
from agent.data.schema import TIME_FIELD, TIME_OPTIONS, Role, TimestampReading
from agent.data.timestamp_formats import TIMESTAMP_FORMATS, timestamp_hits
from agent.errors import MappingError, UnknownColumnError

_DATE_PART = re.compile(r"^(%[dmYy])([-/.])(%[dmYy])\2(%[dmYy])")
_TIME_PATTERNS = ("%H:%M:%S", "%H:%M", "%I:%M:%S %p", "%I:%M %p", "%H:%M:%S.%f")


def timestamp_reading(
    column: str, profile: ColumnProfile, notes: list[str]
) -> TimestampReading | None:
    """How to read a timestamp column, from its values' pattern; `notes` get what was assumed."""
    if profile.timestamp_pattern is None:
        return None
    pattern = profile.timestamp_pattern
    zoned = "%z" in pattern or pattern.endswith("Z")
    zone = None if zoned else "UTC"
    if not zoned and not {"utc", "gmt"} & set(normalize_header(column).split()):
        notes.append(
            f'"{column}" has no time zone: read as UTC; edit the mapping if the '
            "export uses local time"
        )
    if profile.day_month_guessed:
        notes.append(
            f'"{column}": every sampled date fits both day-first and month-first; read as {pattern}'
        )
    return TimestampReading(pattern=pattern, timezone=zone)


def answered_timestamps(
    role: Role,
    timestamps: dict[str, TimestampReading],
    columns: dict[str, str],
    sample: CsvSample,
    answers: dict[str, str],
) -> dict[str, TimestampReading]:
    """`timestamps` with a person's time answers applied to the timestamp field of `role`.

    Raises MappingError, in words, for a value that cannot work, and UnknownColumnError for a
    column the file does not have.
    """
    timestamps = dict(timestamps)
    field = TIME_FIELD[role]
    asked = {name: answers[name] for name in TIME_OPTIONS if name in answers}
    if asked:
        column = columns.get(field)
        if column is None:
            raise MappingError(
                f"{sample.layout.file_name} has no column mapped to {field}: map it first "
                f"(edit {role.value}.{field}=COLUMN)"
            )
        timestamps[field] = _timestamp_answers(
            sample, column, timestamps.get(field), asked, f"{role.value}.{field}"
        )
    return timestamps


def _check_column(sample: CsvSample, name: str, option: str) -> str:
    column = name.strip()
    if column not in sample.layout.columns:
        raise UnknownColumnError(
            f'{sample.layout.file_name} has no column "{column}" ({option}); '
            f"its columns are: {', '.join(sample.layout.columns)}"
        )
    return column


def _timestamp_answers(
    sample: CsvSample,
    column: str,
    base: TimestampReading | None,
    asked: dict[str, str],
    where: str,
) -> TimestampReading:
    """The reading of a timestamp column after a person's answers (see `TIME_OPTIONS`)."""
    values = [v.strip() for v in column_values(sample, column) if v.strip()]
    update: dict[str, str | None] = {}
    time_column = base.time_column if base else None
    if "time_column" in asked:
        time_column = (
            _check_column(sample, asked["time_column"], "time_column")
            if asked["time_column"].strip()
            else None
        )
        update["time_column"] = time_column
    base_pattern = base.pattern if base else None
    pattern = _answered_pattern(sample, values, base_pattern, time_column, asked, where)
    if pattern is None:
        raise MappingError(
            f'no value of "{column}" reads as a timestamp: give timestamp_pattern or date_order'
        )
    update["pattern"] = pattern
    if "timezone" in asked:
        update["timezone"] = _zone(asked["timezone"])
    if "timezone_column" in asked:
        text = asked["timezone_column"].strip()
        update["zone_column"] = _check_column(sample, text, "timezone_column") if text else None
    zone = update.get("timezone", base.timezone if base else "UTC")
    return TimestampReading(
        pattern=pattern,
        timezone=zone,
        zone_column=update.get("zone_column", base.zone_column if base else None),
        time_column=update.get("time_column", time_column),
    )


def _answered_pattern(
    sample: CsvSample,
    values: list[str],
    pattern: str | None,
    time_column: str | None,
    asked: dict[str, str],
    where: str,
) -> str | None:
    """The pattern after a person's `timestamp_pattern`, `date_order` or `time_column` answer.

    A date order (answered, or kept from `pattern` when only a time column was given) picks
    the known pattern that reads most values; a time column adds its time-of-day pattern.
    """
    if "timestamp_pattern" in asked:
        pattern = asked["timestamp_pattern"].strip()
        if "%" not in pattern:
            raise MappingError(
                f'timestamp_pattern "{pattern}" has no %-directive; write it like %d.%m.%Y %H:%M'
            )
    elif "date_order" in asked or (time_column and (pattern is None or "%H" not in pattern)):
        order = asked.get("date_order", "").strip().upper() or _date_order_of(pattern)
        if order not in ("DMY", "MDY", "YMD"):
            raise MappingError(f'date_order is DMY, MDY or YMD, not "{asked["date_order"]}"')
        dates = [v.split()[0] for v in values] if time_column else values
        pattern = _pattern_for_order(dates, order, where)
        if time_column:
            pattern = f"{pattern} {_time_pattern(sample, time_column)}"
    return pattern


def _time_pattern(sample: CsvSample, time_column: str) -> str:
    """The time-of-day pattern that reads most values of `time_column`."""
    times = [v.strip() for v in column_values(sample, time_column) if v.strip()]
    best = max(_TIME_PATTERNS, key=lambda p: timestamp_hits(p, times[:50]))
    if not timestamp_hits(best, times[:50]):
        raise MappingError(
            f'no value of "{time_column}" (time_column) reads as a time of day, e.g. 14:03:00'
        )
    return best


def _zone(text: str) -> str:
    """An IANA time zone name as a person typed it; raises MappingError for one that is not."""
    name = text.strip()
    if name.upper() in ("UTC", "GMT", "Z"):
        return "UTC"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise MappingError(
            f'"{text}" is not an IANA time zone; write it like Europe/Berlin or America/New_York'
        ) from None
    return name


def _date_order_of(pattern: str | None) -> str:
    """DMY, MDY or YMD: the order of the date part of a strptime pattern ("" if none)."""
    match = _DATE_PART.match(pattern or "")
    if not match:
        return ""
    parts = (match.group(1), match.group(3), match.group(4))
    return "".join({"%d": "D", "%m": "M", "%Y": "Y", "%y": "Y"}[p] for p in parts)


def _pattern_for_order(values: list[str], order: str, where: str) -> str:
    """The timestamp pattern with dates in `order` that reads most of `values`."""
    tokens = {"D": "%d", "M": "%m"}
    candidates = []
    for fmt in (*TIMESTAMP_FORMATS, *(f.replace("%Y", "%y") for f in TIMESTAMP_FORMATS)):
        if _date_order_of(fmt) == order:
            candidates.append(fmt)
    probe = values[:200]
    best = max(candidates, key=lambda p: timestamp_hits(p, probe), default=None)
    if best is None or not timestamp_hits(best, probe):
        example = "".join(tokens.get(c, "%Y") for c in order)
        raise MappingError(
            f"no value of {where} reads as a {order} date ({example}); give timestamp_pattern"
        )
    return best
