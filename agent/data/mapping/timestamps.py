"""How timestamps are read: date/time pattern, day/month order, time zone, and answers about them.

A column's pattern comes from its sampled values (its profile). Where the export gives the zone,
it is proposed without a question: a zone written after each time (`… 01:30:00 CET`: a
pattern ending in `ZONE_SUFFIX`), or a column of zones beside the timestamp, with a column of
times of day beside a column of dates (PayPal's and Square's `Date`, `Time`, `TimeZone`), as
the profile found them (`TimeParts`); a note says what each sampled zone is read as. An
abbreviation that names several zones (CST: US Central or China) is asked (a MappingError
naming the edit) unless the file's `timezone` settles it. A timestamp with no zone anywhere is
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
from agent.data.mapping.proposal import Clarification
from agent.data.mapping.wording import ProposalCode
from agent.data.notes import Note, note
from agent.data.profile import ColumnProfile, column_values
from agent.data.schema import TIME_FIELD, TIME_OPTIONS, Role, TimestampReading
from agent.data.time_zones import ZONE_PLACES, utc_offset, zone_place
from agent.data.timestamp_formats import (
    TIME_OF_DAY_PATTERNS,
    TIMESTAMP_FORMATS,
    ZONE_SUFFIX,
    TimeParts,
    split_zone,
    timestamp_hits,
)
from agent.errors import MappingError, UnknownColumnError

_DATE_PART = re.compile(r"^(%[dmYy])([-/.])(%[dmYy])\2(%[dmYy])")


def timestamp_reading(
    column: str, profile: ColumnProfile, notes: list[Note]
) -> TimestampReading | None:
    """How to read a timestamp column, from its values' pattern and the columns the profile
    found holding its time of day and zone; `notes` get what was assumed and how each sampled
    zone is read."""
    if profile.timestamp_pattern is None:
        return None
    pattern = profile.timestamp_pattern
    zoned = "%z" in pattern or pattern.endswith("Z")  # an offset, a Z, or a zone after the time
    in_utc = bool({"utc", "gmt"} & set(normalize_header(column).split()))
    parts = profile.times if not zoned or pattern.endswith(ZONE_SUFFIX) else None
    time_column = parts.time_column if parts is not None and parts.time_pattern else None
    # A header that says UTC is taken at its word, whatever zone column is beside it.
    zone_column = parts.zone_column if parts is not None and not in_utc else None
    if parts is not None and time_column is not None:
        pattern = f"{pattern} {parts.time_pattern}"
    notes.extend(_zone_notes(column, pattern, parts, time_column, zone_column, zoned or in_utc))
    if profile.day_month_guessed:
        notes.append(note(ProposalCode.DAY_MONTH_GUESSED, column=column, pattern=pattern))
    return TimestampReading(
        pattern=pattern,
        timezone=None if zoned else "UTC",
        zone_column=zone_column,
        time_column=time_column,
    )


def _zone_notes(
    column: str,
    pattern: str,
    parts: TimeParts | None,
    time_column: str | None,
    zone_column: str | None,
    said: bool,
) -> list[Note]:
    """What the reading of `column` assumes about its zone: the zone written after each time,
    each row's zone from `zone_column`, or UTC for times with no zone the export did not give
    (`said`: an offset, a Z, or a header saying UTC)."""
    if parts is not None and pattern.endswith(ZONE_SUFFIX):
        return [note(ProposalCode.ZONE_AFTER_TIME, column=column, zones=list(parts.zones))]
    if parts is not None and zone_column is not None:
        code, zones = ProposalCode.ZONE_COLUMN, list(parts.zones)
        return [
            note(code, column=column, time_column=time_column, zone_column=zone_column, zones=zones)
        ]
    if not said:
        return [note(ProposalCode.NO_TIME_ZONE, column=column, time_column=time_column)]
    return []


def answered_timestamps(
    role: Role,
    timestamps: dict[str, TimestampReading],
    columns: dict[str, str],
    sample: CsvSample,
    answers: dict[str, str],
    questions: list[Clarification] | None = None,
) -> dict[str, TimestampReading]:
    """`timestamps` with a person's time answers applied to the timestamp field of `role`.

    A zone abbreviation that names several zones (CST) and that nobody answered joins
    `questions`, offering the zones, so the rest of the reading is still proposed; without
    `questions`, or when a person's `timezone` answer does not settle it, MappingError says so.
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
    reading, column = timestamps.get(field), columns.get(field)
    if reading is not None and column is not None and "timezone_column" not in answers:
        question = _ambiguous_zones(sample, column, reading, role)
        if question is not None and (questions is None or "timezone" in answers):
            raise MappingError(question.question)  # a person's answer that does not settle it
        if question is not None and questions is not None:
            questions.append(question)
    return timestamps


def _ambiguous_zones(
    sample: CsvSample, column: str, reading: TimestampReading, role: Role
) -> Clarification | None:
    """The question, naming the edit and offering the zones, when the zones read with `column`
    (its zone column's, or those written after its times) hold an abbreviation that names
    several zones (CST: US Central or China) and the reading's `timezone` does not say which.
    A zone column a person chose is read as `ZONE_ABBREVIATIONS` says, with a warning
    (`time_checks`)."""
    if reading.zone_column is not None and reading.zone_column in sample.layout.columns:
        source = reading.zone_column
        written = {v.strip().upper() for v in set(column_values(sample, source))}
    elif reading.pattern.endswith(ZONE_SUFFIX):
        source = column
        values = set(column_values(sample, column))
        written = {split_zone(v, reading.pattern)[1].upper() for v in values}
    else:
        return None
    open_ = sorted(
        z for z in written & ZONE_PLACES.keys() if zone_place(z, reading.timezone) is None
    )
    if not open_:
        return None
    places = ZONE_PLACES[open_[0]]
    meanings = "; ".join(f"{where}, {utc_offset(minutes)}" for where, minutes, _ in places)
    edits = " or ".join(f"{role.value}.timezone={zone}" for _, _, zone in places)
    return Clarification(
        role=role,
        field="timezone",
        question=(
            f'{sample.layout.file_name}: "{source}" writes {", ".join(open_)}, and {open_[0]} '
            f"names more than one zone ({meanings}): say which zone the export is in, edit "
            f"{edits}"
        ),
        choices=[zone for _, _, zone in places],
    )


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
    base_pattern = base.pattern if base else None
    if "time_column" in asked:
        time_column = (
            _check_column(sample, asked["time_column"], "time_column")
            if asked["time_column"].strip()
            else None
        )
        update["time_column"] = time_column
        if base_pattern and base and base.time_column and time_column is None:
            base_pattern = base_pattern.split(" ")[0]  # the date only, as the column holds
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
        suffix = ZONE_SUFFIX if pattern and pattern.endswith(ZONE_SUFFIX) else ""
        pattern = _pattern_for_order(dates, order, where, suffix)
        if time_column:
            pattern = f"{pattern} {_time_pattern(sample, time_column)}"
    return pattern


def _time_pattern(sample: CsvSample, time_column: str) -> str:
    """The time-of-day pattern that reads most values of `time_column`."""
    times = [v.strip() for v in column_values(sample, time_column) if v.strip()]
    best = max(TIME_OF_DAY_PATTERNS, key=lambda p: timestamp_hits(p, times[:50]))
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


def _pattern_for_order(values: list[str], order: str, where: str, suffix: str = "") -> str:
    """The timestamp pattern with dates in `order` that reads most of `values` (each pattern
    ending in `suffix`: `ZONE_SUFFIX` for values that end in their zone)."""
    tokens = {"D": "%d", "M": "%m"}
    candidates = []
    for fmt in (*TIMESTAMP_FORMATS, *(f.replace("%Y", "%y") for f in TIMESTAMP_FORMATS)):
        if _date_order_of(fmt) == order:
            candidates.append(fmt + suffix)
    probe = values[:200]
    best = max(candidates, key=lambda p: timestamp_hits(p, probe), default=None)
    if best is None or not timestamp_hits(best, probe):
        example = "".join(tokens.get(c, "%Y") for c in order)
        raise MappingError(
            f"no value of {where} reads as a {order} date ({example}); give timestamp_pattern"
        )
    return best
