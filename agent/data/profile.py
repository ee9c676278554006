"""Column profiles: what the values of each column look like, for inference and for people.

Profiles are computed from a file's first records (see `ingest.SAMPLE_ROWS`). They say which
kinds of value a column holds (numbers and in which format, timestamps and in which pattern,
currency codes, identifiers), how many are filled and distinct, and a few sample values to show
the person approving the mapping. Sample values are never logged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agent.data.currency import is_currency_code
from agent.data.formats import (
    PROFILE_VALUES,
    NumberFormat,
    decimals_used,
    detect_number_format,
    detect_timestamp_format,
)
from agent.data.ingest import CsvSample

_ID_LIKE = re.compile(r"^\s*#?[A-Za-z0-9][A-Za-z0-9_\-./:]*\s*$")
_HAS_DIGIT = re.compile(r"\d")
_DECIMAL = re.compile(r"^\s*-?\d+[.,]\d{1,4}\s*$")
_BOOLEAN = frozenset({"true", "false", "yes", "no", "y", "n", "0", "1", "t", "f"})
REF_SPLIT = re.compile(r"[\s,;|/&+]+")


def normalize_key(value: str) -> str:
    """An order id or reference as compared across files: no `#`, trimmed, lower case."""
    return value.replace("#", "").strip().lower()


def reference_tokens(value: str) -> list[str]:
    """The order ids a payment reference names (`#1042`, ` 1042 `, `#1042, #1043`, `Order 7`)."""
    tokens = (normalize_key(token) for token in REF_SPLIT.split(value))
    return list(dict.fromkeys(t for t in tokens if _HAS_DIGIT.search(t)))


@dataclass(frozen=True)
class ColumnProfile:
    """What one column's sampled values look like."""

    name: str
    filled: int
    sampled: int
    distinct: int
    samples: tuple[str, ...]
    number_format: NumberFormat | None
    numeric_share: float
    integer_only: bool
    decimals: int
    timestamp_pattern: str | None
    timestamp_share: float
    day_month_guessed: bool
    currency_share: float
    boolean_share: float
    id_like_share: float
    multi_reference_share: float
    reference_share: float

    @property
    def fill_share(self) -> float:
        """The share of sampled rows with a value in this column."""
        return self.filled / self.sampled if self.sampled else 0.0

    @property
    def distinct_share(self) -> float:
        """Distinct values over filled values: 1.0 for a column of unique ids."""
        return self.distinct / self.filled if self.filled else 0.0

    def is_numeric(self) -> bool:
        """Whether nearly all values read as numbers under one format."""
        return self.numeric_share >= 0.9 and self.number_format is not None


def profile_sample(sample: CsvSample) -> list[ColumnProfile]:
    """A profile per column of the sampled file, in header order."""
    prefer_comma = sample.layout.delimiter == ";"
    profiles = []
    for index, name in enumerate(sample.layout.columns):
        values = [row[index] for row in sample.rows]
        profiles.append(_profile(name, values, prefer_decimal_comma=prefer_comma))
    return profiles


def _profile(name: str, values: list[str], *, prefer_decimal_comma: bool) -> ColumnProfile:
    filled = [v for v in values if v.strip()]
    head = filled[:PROFILE_VALUES]
    fmt, numeric_share = detect_number_format(head, prefer_decimal_comma=prefer_decimal_comma)
    decimals = decimals_used(head, fmt) if fmt else 0
    pattern, ts_share, guessed = detect_timestamp_format(head) if head else (None, 0.0, False)
    samples: list[str] = []
    for value in filled:
        if value not in samples:
            samples.append(value)
        if len(samples) == 3:
            break

    return ColumnProfile(
        name=name,
        filled=len(filled),
        sampled=len(values),
        distinct=len(set(filled)),
        samples=tuple(samples),
        number_format=fmt,
        numeric_share=numeric_share,
        integer_only=decimals == 0,
        decimals=decimals,
        timestamp_pattern=pattern if ts_share > 0 else None,
        timestamp_share=ts_share,
        day_month_guessed=guessed,
        currency_share=_share(head, is_currency_code),
        boolean_share=_share(head, lambda v: v.strip().lower() in _BOOLEAN),
        id_like_share=_share(head, _is_id_like),
        multi_reference_share=_share(head, lambda v: len(reference_tokens(v)) > 1),
        reference_share=_share(head, lambda v: bool(reference_tokens(v))),
    )


def _is_id_like(value: str) -> bool:
    return bool(_ID_LIKE.match(value) and _HAS_DIGIT.search(value) and not _DECIMAL.match(value))


def _share(values: list[str], test: Callable[[str], bool]) -> float:
    if not values:
        return 0.0
    return sum(1 for v in values if test(v)) / len(values)
