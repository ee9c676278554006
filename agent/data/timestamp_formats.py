"""Timestamp formats: decided once per column from its values, applied to all rows.

As number formats are (`formats`): a strptime pattern is chosen from a sample of a column's
values and applied, unchanged, to every row of the file (in SQL by `sql_timestamp`); values
that do not fit it are counted as unreadable and reported with their rows, never re-guessed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agent.data.formats import PROFILE_VALUES, sql_trim

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
    "",
]
TIMESTAMP_FORMATS = [
    date + time
    for date in _DATE_PARTS_ISO + _DATE_PARTS_DMY + _DATE_PARTS_MDY
    for time in _TIME_PARTS
]


@dataclass(frozen=True)
class TimestampFormat:
    """How a column writes timestamps: a strptime pattern and, for naive values, their zone."""

    pattern: str
    timezone: str | None = None

    @property
    def zoned(self) -> bool:
        """Whether values carry their own offset (or a literal Z), so no zone is needed."""
        return "%z" in self.pattern or self.pattern.endswith("Z")


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
    """
    sample = [v.strip() for v in values[:PROFILE_VALUES] if v.strip()]
    if not sample or sum(1 for v in sample[:50] if _DATE_START.match(v)) < len(sample[:50]) / 2:
        return None, 0.0, False
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
