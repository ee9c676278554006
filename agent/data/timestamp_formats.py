"""Timestamp formats: decided once per column from its values, applied to all rows.

As number formats are (`formats`): a strptime pattern is chosen from a sample of a column's
values and applied, unchanged, to every row of the file (in SQL by `sql_timestamp`); values
that do not fit it are counted as unreadable and reported with their rows, never re-guessed.

A value may end in its time zone (`2026-03-29 01:30:00 CET`, `3/8/2026 1:59:59 AM MST`): its
pattern ends in `ZONE_SUFFIX`, the zone is split off (`split_zone`; `zone_split_sql` in SQL)
and read as a zone column's cells are (`time_zones`).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agent.data.formats import PROFILE_VALUES, sql_trim
from agent.data.time_zones import zone_of

_DATE_PARTS_ISO = ["%Y-%m-%d", "%Y/%m/%d"]
_DATE_PARTS_DMY = ["%d/%m/%Y", "%d.%m.%Y", "%d-%m-%Y"]
_DATE_PARTS_MDY = ["%m/%d/%Y", "%m-%d-%Y"]
_TIME_PARTS = [
    " %H:%M:%S %z",
    " %H:%M:%S%z",
    "T%H:%M:%S%z",
    "T%H:%M:%S.%f%z",
    "T%H:%M:%SZ",
    "T%H:%M:%S.%fZ",
    " %H:%M:%S",
    "T%H:%M:%S",
    " %H:%M:%S.%f",
    " %H:%M",
    "T%H:%M",
    " %I:%M:%S %p",
    " %I:%M %p",
    "",
]
TIMESTAMP_FORMATS = [
    date + time
    for date in _DATE_PARTS_ISO + _DATE_PARTS_DMY + _DATE_PARTS_MDY
    for time in _TIME_PARTS
]
TIME_OF_DAY_PATTERNS = ("%H:%M:%S", "%H:%M", "%I:%M:%S %p", "%I:%M %p", "%H:%M:%S.%f")
"""The patterns of a column holding only the time of day (beside a column of dates)."""


@dataclass(frozen=True)
class TimestampFormat:
    """How a column writes timestamps: a strptime pattern and, for naive values, their zone."""

    pattern: str
    timezone: str | None = None

    @property
    def zoned(self) -> bool:
        """Whether values carry their own offset (or a literal Z, or a zone after the time), so
        no zone is needed."""
        return "%z" in self.pattern or self.pattern.endswith("Z")


def has_time_of_day(pattern: str) -> bool:
    """Whether `pattern` reads a time of day, not only a date."""
    return "%H" in pattern or "%I" in pattern


_DATE_START = re.compile(r"^\s*\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")


def timestamp_hits(pattern: str, values: Sequence[str]) -> int:
    """How many of `values` read under the strptime `pattern`."""
    return _hits(pattern, values)


# Each strptime directive of the known patterns as a regular expression that accepts at least
# every text strptime accepts for it (`_strptime.TimeRE`, read case-insensitively): a value
# this shape rejects cannot read, so strptime is only tried on the values it accepts.
_SHAPE_DIRECTIVES = {
    "Y": r"\d{4}",
    "y": r"\d\d",
    "m": r" ?\d\d?",
    "d": r" ?\d\d?",
    "H": r" ?\d\d?",
    "M": r" ?\d\d?",
    "S": r" ?\d\d?",
    "f": r"\d{1,6}",
    "I": r" ?\d\d?",
    "p": r"(?:am|pm)",
    "z": r"(?:[+-]\d\d:?\d\d(?::?\d\d(?:\.\d{1,6})?)?|z)",
    "%": "%",
}
_SHAPE_PART = re.compile(r"%(.)|(\s+)|(.)", re.DOTALL)


@functools.lru_cache(maxsize=256)
def _shape(pattern: str) -> re.Pattern[str] | None:
    """A regex every value that reads under `pattern` fully matches (None: not known, try all)."""
    parts: list[str] = []
    for directive, space, literal in _SHAPE_PART.findall(pattern):
        if directive:
            if directive not in _SHAPE_DIRECTIVES:
                return None
            parts.append(_SHAPE_DIRECTIVES[directive])
        elif space:
            parts.append(r"\s+")
        elif literal == "%":
            return None  # a stray % at the end: strptime says what it makes of it
        else:
            parts.append(re.escape(literal))
    return re.compile("".join(parts), re.IGNORECASE)


# Each directive of the known patterns as texts that always read (fields in range, a day every
# month has, an offset under a day): a value this shape accepts reads, strptime runs on the rest.
_SURE_DIRECTIVES = {
    "Y": "[1-9][0-9]{3}",
    "m": "0[1-9]|1[0-2]",
    "d": "0[1-9]|1[0-9]|2[0-8]",
    "H": "[01][0-9]|2[0-3]",
    "M": "[0-5][0-9]",
    "S": "[0-5][0-9]",
    "f": "[0-9]{6}",
    "I": "0[1-9]|1[0-2]",
    "p": "AM|PM",
    "z": "[+-](?:[01][0-9]|2[0-3])[0-5][0-9]",
}
_SURE_LITERALS = frozenset("-/.:TZ ")


@functools.lru_cache(maxsize=256)
def _sure(pattern: str) -> re.Pattern[str] | None:
    """A regex only values that read under `pattern` fully match (None: none known)."""
    parts: list[str] = []
    for directive, space, literal in _SHAPE_PART.findall(pattern):
        if directive in _SURE_DIRECTIVES:
            parts.append(f"(?:{_SURE_DIRECTIVES[directive]})")
        elif literal in _SURE_LITERALS or space == " ":
            parts.append(re.escape(literal or space))
        else:
            return None
    return re.compile("".join(parts))


def _hits(pattern: str, values: Sequence[str]) -> int:
    if pattern.endswith(ZONE_SUFFIX):
        # The local time under the rest of the pattern, and a zone (when one is written) that
        # names one: what loading reads.
        parts = [split_zone(v, pattern) for v in values]
        named = [local for local, zone in parts if not zone or zone_of(zone, cities=True)]
        return _hits(pattern.removesuffix(ZONE_SUFFIX), named)
    shape, sure = _shape(pattern), _sure(pattern)
    hits = 0
    for value in values:
        if sure is not None and sure.fullmatch(value):
            hits += 1
            continue
        if shape is not None and not shape.fullmatch(value):
            continue
        try:
            datetime.strptime(value, pattern)
        except ValueError:
            continue
        hits += 1
    return hits


def detect_timestamp_format(values: Sequence[str]) -> tuple[str | None, float, bool]:
    """The timestamp pattern that reads most of `values`, the share it reads, and whether the
    day/month order was a guess (every date fits both day-first and month-first).

    Values that mostly end in a time zone (`… 01:30:00 CET`) and read no other way take a
    pattern ending in `ZONE_SUFFIX`.
    """
    sample = [v.strip() for v in values[:PROFILE_VALUES] if v.strip()]
    if not sample or sum(1 for v in sample[:50] if _DATE_START.match(v)) < len(sample[:50]) / 2:
        return None, 0.0, False
    found = _detect(sample)
    if found[1] < 0.9:
        parts = [split_zone(v) for v in sample]
        if sum(1 for _, zone in parts[:50] if zone) >= len(parts[:50]) / 2:
            local, _, guessed = _detect([local for local, _ in parts])
            if local is not None and not TimestampFormat(local).zoned:
                pattern = local + ZONE_SUFFIX
                share = _hits(pattern, sample) / len(sample)
                if share > found[1]:
                    return pattern, share, guessed
    return found


def _detect(sample: list[str]) -> tuple[str | None, float, bool]:
    """`detect_timestamp_format` of stripped, filled values, by the known patterns."""
    probe = sample[:50]
    probe_hits = {p: _hits(p, probe) for p in TIMESTAMP_FORMATS}
    ranked = sorted(TIMESTAMP_FORMATS, key=lambda p: -probe_hits[p])
    top = [p for p in ranked[:4] if probe_hits[p]]
    if not top:
        return None, 0.0, False
    scores = {p: _hits(p, sample) for p in top}
    best = max(top, key=lambda p: scores[p])
    rivals = [p for p in top if p != best and scores[p] == scores[best]]
    guessed = any("%d" in p and "%m" in p and p.index("%d") != best.index("%d") for p in rivals)
    return best, scores[best] / len(sample), guessed


def sql_timestamp(column: str, fmt: TimestampFormat) -> str:
    """A DuckDB expression turning text `column` into a point in time under `fmt`, NULL if unfit.

    Values with an offset become TIMESTAMPTZ; values in UTC (a literal Z, or naive values whose
    zone is UTC) stay plain TIMESTAMP, which DuckDB already counts in UTC: `epoch_us` of either
    is microseconds since 1970-01-01 UTC, and the zone conversion is only paid for other zones.
    """
    pattern = fmt.pattern.replace("'", "''")
    text = sql_trim(column)
    if "%z" in fmt.pattern:  # DuckDB's %z takes +00:00 but not the Z that Python's takes
        utc = f"substr({text}, 1, length({text}) - 1) || '+00:00'"
        text = f"(CASE WHEN suffix({text}, 'Z') OR suffix({text}, 'z') THEN {utc} ELSE {text} END)"
    parsed = f"try_strptime({text}, '{pattern}')"
    if "%Y" in fmt.pattern:  # DuckDB's %Y takes `25` as the year 25: a two-digit year misread
        parsed = f"(CASE WHEN year({parsed}) >= 1000 THEN {parsed} END)"
    if "%z" in fmt.pattern or fmt.pattern.endswith("Z") or fmt.timezone in (None, "UTC", "Etc/UTC"):
        return parsed
    zone = fmt.timezone.replace("'", "''")
    return f"timezone('{zone}', {parsed})"


# --- a zone written after the time -----------------------------------------------------------

ZONE_SUFFIX = " %Z"
"""How a pattern ends whose values end in their zone (`… 01:30:00 CET`, `… 10:00 UTC+1`)."""
# A value as its local time (up to the time of day and its AM/PM) and the zone written after
# it, beginning with a letter: how a zone is found before the pattern is known.
_ZONE_AFTER_TIME = re.compile(
    r"^\s*(.*?\d:\d\d(?::\d\d(?:\.\d+)?)?(?:\s*[AaPp]\.?[Mm]\.?)?)(?:\s+([A-Za-z].*?))?\s*$"
)


def split_zone(value: str, pattern: str | None = None) -> tuple[str, str]:
    """A value's local time and the zone written after it ("" when none). Under `pattern` (one
    ending in `ZONE_SUFFIX`) the zone is what follows as many words as the rest of the pattern
    has, as loading splits it (`zone_split_sql`); without, what follows the time of day."""
    if pattern is not None:
        words = value.strip().split(" ")
        count = _local_words(pattern)
        return " ".join(words[:count]), " ".join(words[count:]).strip()
    match = _ZONE_AFTER_TIME.match(value)
    if match is None:
        return value.strip(), ""
    return match.group(1), match.group(2) or ""


def zone_split_sql(column: str, pattern: str) -> tuple[str, str]:
    """The SQL of a value's local time and of its zone (NULL when none) under `pattern`, one
    ending in `ZONE_SUFFIX`, as `split_zone` splits it: by words, a third of what a regular
    expression costs a row."""
    words, count = f"string_split(trim({column}), ' ')", _local_words(pattern)
    local = f"array_to_string({words}[1:{count}], ' ')"
    return local, f"NULLIF(trim(array_to_string({words}[{count + 1}:], ' ')), '')"


def _local_words(pattern: str) -> int:
    """How many words of a value the local time of `pattern` (ending in ZONE_SUFFIX) takes."""
    return pattern.removesuffix(ZONE_SUFFIX).count(" ") + 1


# --- the time of day and the zone in other columns --------------------------------------------

MAX_ZONE_VALUES = 64
"""A column of zones has few distinct values: one with more is not read as zones."""
# A header that says its column holds zones (`TimeZone`, `Time Zone`, `tz`, `UTC offset`,
# `Zeitzone`, `Zona horaria`, `Fuseau horaire`, `Fuso orario`, `Tidszon`).
_ZONE_HEADER = re.compile(r"zon|fuseau|fuso|(?:^|[^a-z])tz(?:$|[^a-z])|offset", re.IGNORECASE)
_TIME_START = re.compile(r"^\s*\d{1,2}:\d\d")


@dataclass(frozen=True)
class TimeParts:
    """What a column says of times and zones. Of a column of zones (`TimeZone`: `PDT`,
    `Pacific Time (US & Canada)`): the share of values that name one (`named_share`: by
    themselves, not as a bare offset or city) and its distinct values (`zones`). Of a column of
    times of day: the pattern that reads them (`time_of_day`). Of a timestamp column whose values
    lack them: the columns beside it holding each row's time of day (`time_column`, read by
    `time_pattern`) and zone (`zone_column`, its values as `zones`), or the distinct zones
    written after its times."""

    zone_share: float = 0.0
    named_share: float = 0.0
    zones: tuple[str, ...] = ()
    time_of_day: str | None = None
    time_column: str | None = None
    time_pattern: str | None = None
    zone_column: str | None = None


def times_of(
    name: str, head: Sequence[str], counts: Counter[str], pattern: str | None, numeric: bool
) -> TimeParts | None:
    """What column `name` says of times and zones (None: nothing), from its first filled values
    (`head`), their counts, its timestamp pattern and whether it holds numbers. Each distinct
    value is read once (`zone_of`); a column of numbers or of many values holds no zones."""
    written: Counter[str] = Counter()
    if pattern is not None and pattern.endswith(ZONE_SUFFIX):
        for value, count in counts.items():
            written[split_zone(value, pattern)[1]] += count
        written.pop("", None)
    elif pattern is None and not numeric and len(counts) <= MAX_ZONE_VALUES:
        for value, count in counts.items():
            written[" ".join(value.split())] += count
    cities = pattern is not None or _ZONE_HEADER.search(name) is not None
    found = {text: zone_of(text, cities=cities) for text in written}
    named = sum(written[t] for t, zone in found.items() if zone is not None)
    alone = sum(written[t] for t, zone in found.items() if zone is not None and zone.named)
    time = _time_of_day(head) if pattern is None and not numeric else None
    if not named and time is None:
        return None
    total = counts.total()
    return TimeParts(named / total, alone / total, tuple(written) if named else (), time)


def _time_of_day(head: Sequence[str]) -> str | None:
    """The pattern that reads (nearly) every value of a column of times of day, if it is one."""
    probe = [value.strip() for value in head[:50]]
    if not probe or not _TIME_START.match(probe[0]):
        return None
    best = max(TIME_OF_DAY_PATTERNS, key=lambda p: _hits(p, probe))
    return best if _hits(best, probe) >= 0.9 * len(probe) else None


def link_times(
    columns: Sequence[tuple[str, str | None, TimeParts | None]],
) -> dict[int, TimeParts]:
    """Of a file's columns (name, timestamp pattern, `times_of`), each timestamp column whose
    values lack their zone (or time of day) -> where they are: the nearest column of zones (the
    first after it, else before), and a column of times of day next to a column of dates
    (PayPal's and Square's `Date`, `Time`, `Time Zone`; Adyen's `Creation Date`, `TimeZone`)."""
    zone_columns = [i for i, column in enumerate(columns) if _holds_zones(*column)]
    times = [i for i, (_, _, parts) in enumerate(columns) if parts and parts.time_of_day]
    linked: dict[int, TimeParts] = {}
    if not zone_columns and not times:
        return linked
    for i, (_, pattern, _) in enumerate(columns):
        if pattern is None or TimestampFormat(pattern).zoned:
            continue
        time = None
        if not has_time_of_day(pattern):
            time = _nearest(i, [j for j in times if abs(j - i) <= 2])
        zone = _nearest(i, zone_columns)
        if time is None and zone is None:
            continue
        of_time = columns[time][2] if time is not None else None
        of_zone = columns[zone][2] if zone is not None else None
        linked[i] = TimeParts(
            zones=of_zone.zones if of_zone else (),
            time_column=None if time is None else columns[time][0],
            time_pattern=of_time.time_of_day if of_time else None,
            zone_column=None if zone is None else columns[zone][0],
        )
    return linked


def _holds_zones(name: str, pattern: str | None, parts: TimeParts | None) -> bool:
    """Whether a column holds each row's zone: (nearly) every value names one by itself, or its
    header says zones and most values name one."""
    if pattern is not None or parts is None or not parts.zones:
        return False
    said = _ZONE_HEADER.search(name) is not None
    return parts.named_share >= 0.9 or (said and parts.zone_share >= 0.5)


def _nearest(i: int, columns: list[int]) -> int | None:
    """Of `columns`, the nearest to column `i`: after it first, else before it."""
    return min(columns, key=lambda j: (j < i, abs(j - i)), default=None)
