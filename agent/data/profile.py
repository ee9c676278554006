"""Column profiles: what the values of each column look like, for inference and for people.

Profiles are computed from a file's first records (see `ingest.SAMPLE_ROWS`). They say which
kinds of value a column holds (numbers and in which format, timestamps and in which pattern,
currency codes, identifiers), how many are filled and distinct, and a few sample values to show
the person approving the mapping. Sample values are never logged.

The kinds are read from each column's first filled values: `PROFILE_VALUES` of them while the
file's columns fit in `PROFILE_CELLS` values in all (every export of normal width). A wider
file shares that budget across its columns, the columns whose header names a field first
(`profile_depths`), so profiling costs about the same whatever the width.

The helpers at the end read the sampled rows across columns, for inference to settle a choice
by the data: which rows succeeded, whether two amount columns hold the same numbers, whether
two id columns tell the rows apart alike.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from itertools import compress, filterfalse, islice, repeat

from agent.data.currency import CURRENCY_EXPONENTS, CURRENCY_SYMBOLS, is_currency_code
from agent.data.formats import (
    PROFILE_VALUES,
    NumberFormat,
    decimals_used,
    detect_number_format,
    parse_numbers,
)
from agent.data.ingest import CsvSample
from agent.data.timestamp_formats import TimeParts, detect_timestamp_format, link_times, times_of
from agent.data.vocabulary import BUILTIN

_ID_LIKE = re.compile(r"^\s*#?[A-Za-z0-9][A-Za-z0-9_\-./:]*\s*$")
_HAS_DIGIT = re.compile(r"\d")
# An id of capital letters only (PrestaShop's order reference `GWCOYZKHK`): a code, not a word.
LETTER_CODE = re.compile(r"^\s*#?[A-Z][A-Z_\-]{4,}\s*$")
_DECIMAL = re.compile(r"^\s*-?\d+[.,]\d{1,4}\s*$")
_BOOLEAN = frozenset({"true", "false", "yes", "no", "y", "n", "0", "1", "t", "f"})
_SYMBOL = re.compile(f"[{CURRENCY_SYMBOLS}]")
_EDGE_CODE = re.compile(r"^\s*-?\s*([A-Za-z]{3})\b|\b([A-Za-z]{3})\s*$")
_MAY_MARK = re.compile(f"{_SYMBOL.pattern}|{_EDGE_CODE.pattern}")
REF_SPLIT = re.compile(r"[\s,;|/&+]+")
# An order id in a reference: a part (no separator of `REF_SPLIT` before or in it) holding a
# digit, without one leading `#`. Possessive, and tried only where a part starts: linear.
_PART = r"[^\s,;|/&+]"
REF_TOKEN = re.compile(rf"(?<!{_PART})#?([^\s,;|/&+\d]*+\d{_PART}*+)")
MARK_SHARE = 0.9
# Values profiled per file: 20 columns at PROFILE_VALUES each. A wider file's columns share it,
# the columns whose header names a field first, each reading at least MIN_PROFILE_VALUES.
PROFILE_CELLS = 20 * PROFILE_VALUES
MIN_PROFILE_VALUES = 50
# Rows transposed at a time (`transpose`): few enough that their iterators never start a
# collection of the garbage collector's young objects on their own.
_TRANSPOSE_ROWS = 64


def normalize_key(value: str) -> str:
    """An order id or reference as compared across files (as `normalize.key_sql` does).

    Surrounding spaces and one leading `#` go, nothing else: case and inner characters are part
    of the id, so `AB-7` and `ab-7`, or `#10#07` and `1007`, are two ids. Only spaces are padding
    (not a tab or a no-break space), exactly as in SQL: inference must expect the matches the
    engine makes, no more.
    """
    trimmed = value.strip(" ")
    return trimmed[1:].lstrip(" ") if trimmed.startswith("#") else trimmed


def normalize_keys(values: Iterable[str]) -> list[str]:
    """`normalize_key` of each of `values`, in order (the same rule, without a call per value)."""
    return [t[1:].lstrip(" ") if t[:1] == "#" else t for t in map(str.strip, values, repeat(" "))]


def reference_tokens(value: str) -> list[str]:
    """The order ids a payment reference names (`#1042`, ` 1042 `, `#1042, #1043`, `Order 7`).

    The parts between separators (`REF_SPLIT`), each read as `normalize_key` reads an id (a part
    holds no space, so only a leading `#` goes), the ones holding a digit, each once. One
    regular expression finds them (`REF_TOKEN`), with no list of parts.
    """
    found = REF_TOKEN.findall(value)
    return found if len(found) < 2 else list(dict.fromkeys(found))


def references_of(values: Iterable[str]) -> dict[str, list[str]]:
    """`reference_tokens` of each distinct value of `values` (a column read once, in bulk)."""
    distinct = list(set(values))
    return {
        value: found if len(found) < 2 else list(dict.fromkeys(found))
        for value, found in zip(distinct, map(REF_TOKEN.findall, distinct), strict=True)
    }


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
    currency_mark: str | None = None
    # The share of values that are codes of capital letters only (`GWCOYZKHK`): ids without a
    # digit, which `id_like_share` and `reference_share` do not count.
    letter_code_share: float = 0.0
    # How many filled values the kinds were read from (at most PROFILE_VALUES).
    profiled: int = 0
    # Zones and times of day it holds, or (a timestamp's) where they are (`times_of`).
    times: TimeParts | None = None

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


def profile_depths(columns: list[str], named: Collection[str] = ()) -> dict[str, int]:
    """How many filled values of each column its kinds are read from.

    `PROFILE_VALUES` each while all columns fit in `PROFILE_CELLS`. A wider file shares the
    budget: the `named` columns (their header names a field) first, then the other columns
    share what is left; every column reads at least `MIN_PROFILE_VALUES`.
    """
    if len(columns) * PROFILE_VALUES <= PROFILE_CELLS:
        return dict.fromkeys(columns, PROFILE_VALUES)
    first = sum(1 for c in columns if c in named)
    rest = len(columns) - first
    first_depth = max(MIN_PROFILE_VALUES, min(PROFILE_VALUES, PROFILE_CELLS // max(1, first)))
    left = max(0, PROFILE_CELLS - first_depth * first) // max(1, rest)
    rest_depth = max(MIN_PROFILE_VALUES, min(PROFILE_VALUES, left))
    return {c: first_depth if c in named else rest_depth for c in columns}


def profile_sample(
    sample: CsvSample,
    named: Collection[str] = (),
    by_column: Sequence[Sequence[str]] | None = None,
    distinct: Sequence[set[str]] | None = None,
) -> list[ColumnProfile]:
    """A profile per column of the sampled file, in header order.

    `named` are the columns whose header names a field: a file too wide for every column to be
    read to `PROFILE_VALUES` reads them deepest (see `profile_depths`). `by_column` are the
    sampled values of each column, in header order, when the caller has read them already, and
    `distinct` the `set` of each column's values.
    """
    prefer_comma = sample.layout.delimiter == ";"
    names = list(sample.layout.columns)
    depths = profile_depths(names, named)
    if by_column is None:
        by_column = transpose(sample)
    sets: Sequence[set[str] | None] = [None] * len(names) if distinct is None else distinct
    found = [
        _profile(name, values, depth=depths[name], prefer_decimal_comma=prefer_comma, seen=seen)
        for name, values, seen in zip(names, by_column, sets, strict=True)
    ]
    linked = link_times([(p.name, p.timestamp_pattern, p.times) for p in found])
    return [replace(p, times=linked[i]) if i in linked else p for i, p in enumerate(found)]


def _profile(
    name: str,
    values: Sequence[str],
    *,
    depth: int,
    prefer_decimal_comma: bool,
    seen: set[str] | None = None,
) -> ColumnProfile:
    # Filled and distinct counts from the distinct values (`seen`: `set(values)`, when the
    # caller has it): the column is read once, in bulk.
    distinct_values = set(values) if seen is None else seen
    blanks = list(filterfalse(str.strip, distinct_values))
    filled_count = len(values) - sum(values.count(blank) for blank in blanks)
    distinct = len(distinct_values) - len(blanks)
    filled: Iterable[str] = filter(str.strip, values) if blanks else values
    head = list(islice(filled, depth))
    fmt, numeric_share = detect_number_format(head, prefer_decimal_comma=prefer_decimal_comma)
    decimals = decimals_used(head, fmt) if fmt else 0
    pattern, ts_share, guessed = detect_timestamp_format(head) if head else (None, 0.0, False)
    # The first three distinct filled values (fewer when the column has fewer).
    samples: list[str] = []
    wanted = min(3, distinct)
    if wanted:
        for value in values:
            if value not in samples and value.strip():
                samples.append(value)
                if len(samples) == wanted:
                    break
    # Each test once per distinct value, counted as often as the value occurs; the tests run
    # over the distinct values as a whole (`filter`, `map`), not called per value.
    counts = Counter(head)
    kinds = list(counts)
    # A value names an order id when a part holds a digit (`reference_tokens`); only a value
    # with a separator can name several.
    named = list(filter(_HAS_DIGIT.search, kinds))
    parted = filter(REF_SPLIT.search, named)
    many = [value for value in parted if len(set(REF_TOKEN.findall(value))) > 1]
    # `is_currency_code` of each value, and `_is_id_like` as three filters.
    codes = map(CURRENCY_EXPONENTS.__contains__, map(str.upper, map(str.strip, kinds)))
    ids = filterfalse(_DECIMAL.match, filter(_ID_LIKE.match, named))  # `named` hold a digit
    letter_codes = filter(LETTER_CODE.match, kinds)
    total = len(head)
    return ColumnProfile(
        name=name,
        filled=filled_count,
        sampled=len(values),
        distinct=distinct,
        samples=tuple(samples),
        number_format=fmt,
        numeric_share=numeric_share,
        integer_only=decimals == 0,
        decimals=decimals,
        timestamp_pattern=pattern if ts_share > 0 else None,
        timestamp_share=ts_share,
        day_month_guessed=guessed,
        currency_share=_part(sum(compress(counts.values(), codes)), total),
        boolean_share=_boolean_share(counts),
        id_like_share=_part(sum(map(counts.__getitem__, ids)), total),
        multi_reference_share=_part(sum(map(counts.__getitem__, many)), total),
        reference_share=_part(sum(map(counts.__getitem__, named)), total),
        letter_code_share=_part(sum(map(counts.__getitem__, letter_codes)), total),
        currency_mark=_currency_mark(counts) if fmt is not None else None,
        profiled=len(head),
        times=times_of(name, head, counts, pattern, fmt is not None and numeric_share >= 0.9),
    )


def _part(count: int, total: int) -> float:
    """`count` over `total` (0 when there is nothing to count), as `_share` divides."""
    return count / total if total else 0.0


def _boolean_share(counts: Counter[str]) -> float:
    """The share of values that read as booleans, in a column whose every value could be one.

    A column of `0` and `1` is a flag; a column of amounts that are mostly `0` is not. When
    every value could be one, every value is one: the share is all or nothing.
    """
    words = set(map(str.lower, map(str.strip, counts)))
    return 1.0 if counts.total() and words <= _BOOLEAN else 0.0


def _currency_mark(counts: Counter[str]) -> str | None:
    """The one currency symbol or ISO code that (nearly) every value is written with, if any.

    `€89.90`, `-$2.55`, `12,50 €` and `EUR 12.50` carry a mark; a file without a currency column
    can still say its currency this way. `counts` holds each distinct value and its count.
    """
    total = counts.total()
    # Only a value with a symbol or three letters at an edge can carry one: when too few have
    # either, no value is read one by one.
    if sum(map(counts.__getitem__, filter(_MAY_MARK.search, counts))) < MARK_SHARE * total:
        return None
    marks: Counter[str] = Counter()
    for value, count in counts.items():
        symbol = _SYMBOL.search(value)
        if symbol:
            marks[symbol.group()] += count
            continue
        code = _EDGE_CODE.search(value)
        if code and is_currency_code(code.group(1) or code.group(2)):
            marks[(code.group(1) or code.group(2)).upper()] += count
    if not total or marks.total() < MARK_SHARE * total or len(marks) != 1:
        return None
    return next(iter(marks))


def _is_id_like(value: str) -> bool:
    """The identifier rule, one value at a time (`_profile` applies it as three filters)."""
    return bool(_ID_LIKE.match(value) and _HAS_DIGIT.search(value) and not _DECIMAL.match(value))


# --- evidence from the sampled rows -------------------------------------------------------------


def fold(value: str) -> str:
    """`value` as words are compared: lower case, no accents, words separated by one space."""
    text = unicodedata.normalize("NFKD", value.casefold())
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def transpose(sample: CsvSample) -> list[Sequence[str]]:
    """The sampled values of every column, in header order (each column in row order)."""
    columns, rows = sample.layout.columns, sample.rows
    if rows and set(map(len, rows)) == {len(columns)}:
        # A block of rows at a time: `zip(*rows)` of all rows would hold an iterator per row, an
        # object per row for the garbage collector to follow; a block's go with it.
        found: list[list[str]] = [[] for _ in columns]
        for start in range(0, len(rows), _TRANSPOSE_ROWS):
            block = zip(*rows[start : start + _TRANSPOSE_ROWS], strict=True)
            for column, values in zip(found, block, strict=True):
                column.extend(values)
        return list(found)
    return list(zip(*rows, strict=True) if rows else ((),) * len(columns))


def column_values(sample: CsvSample, column: str) -> list[str]:
    """The sampled values of `column`, in row order."""
    index = sample.layout.columns.index(column)
    return [row[index] for row in sample.rows]


def success_rows(statuses: Sequence[str]) -> list[int] | None:
    """The rows whose status says the money moved (a capture, in the vocabulary's words), or
    None when no status says so.

    Used to compare amount columns where they matter: on a failed attempt the amount captured
    is zero while the amount requested is not, and that difference says nothing. Each distinct
    status is read once.
    """
    moved = {status: BUILTIN.payment_meaning(status) == "capture" for status in set(statuses)}
    rows = list(compress(range(len(statuses)), map(moved.__getitem__, statuses)))
    return rows or None


def read_amounts(values: Sequence[str], fmt: NumberFormat | None) -> list[Decimal | None]:
    """Each value as an exact number under `fmt` (None for an empty or unreadable value).

    Each distinct value is read once (`parse_numbers`: the plain ones in bulk).
    """
    if fmt is None:
        return [None] * len(values)
    read = parse_numbers(values, fmt)
    return list(map(read.__getitem__, values))


def same_partition(first: Sequence[str], second: Sequence[str]) -> bool:
    """Whether two id columns group the rows alike: their values correspond one to one.

    Two such columns (a transaction id and a payment id, say) tell the same rows apart, so it
    does not matter which one is read as the payment id.
    """
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for a, b in zip(first, second, strict=True):
        a, b = a.strip(), b.strip()
        if not a or not b:
            return False
        if forward.setdefault(a, b) != b or backward.setdefault(b, a) != a:
            return False
    return True
