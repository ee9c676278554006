"""Number formats: decided once per column from its values, applied to all rows.

A format is chosen from a sample of a column's values and then applied, unchanged, to every row
of the file (in SQL by `sql_amount`; timestamps alike: `timestamp_formats`). Values that do not
fit the chosen format are not re-guessed one by one: they are counted as unreadable and
reported with their rows.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from itertools import compress, filterfalse, repeat
from typing import Literal

from agent.data.currency import CURRENCY_EXPONENTS, CURRENCY_SYMBOLS, SYMBOL_CODES

PROFILE_VALUES = 1000
SQL_DECIMAL = "DECIMAL(18,6)"

DecimalSeparator = Literal[".", ","]
ThousandsSeparator = Literal["", ",", ".", "'", " "]


@dataclass(frozen=True)
class NumberFormat:
    """How a column writes numbers: its decimal and thousands separators."""

    decimal: DecimalSeparator = "."
    thousands: ThousandsSeparator = ""


# Tried in this order; on a tie the earlier one wins (after the delimiter preference below).
NUMBER_FORMATS = [
    NumberFormat(".", ""),
    NumberFormat(".", ","),
    NumberFormat(",", ""),
    NumberFormat(",", "."),
    NumberFormat(".", "'"),
    NumberFormat(".", " "),
    NumberFormat(",", " "),
]
_REMOVE_CLASS = f"()\\s\u00a0\u202f{CURRENCY_SYMBOLS}+\\-\u2212"
_REMOVE = re.compile(f"[{_REMOVE_CLASS}]")
_CODE = re.compile(r"^[A-Za-z]{3}|[A-Za-z]{3}$")


def _sql_list(words: Iterable[str]) -> str:
    """A DuckDB list literal of `words` (letters and symbols only: nothing to escape)."""
    return "[" + ", ".join(f"'{word}'" for word in words) + "]"


_CODES = "|".join(sorted(CURRENCY_EXPONENTS))
_CODE_ENDS = f"^(?:{_CODES})|(?:{_CODES})$"
"""An ISO 4217 code at either end of an amount (matched ignoring case)."""
_SYMBOLS_SQL = _sql_list(SYMBOL_CODES)
_SYMBOL_NAMES_SQL = _sql_list(SYMBOL_CODES.values())
# Any character no number format reads (after `_core`): such a text fits no format.
_NOT_NUMBER = re.compile(r"[^\d.,']")
# A character `_core` neither keeps as a digit or separator nor takes off (spaces, signs,
# symbols, letters of a code): a value holding one cannot read as a number.
_NEVER_NUMBER = re.compile(f"[^\\d.,'A-Za-z{_REMOVE_CLASS}]")


def _number_pattern(fmt: NumberFormat) -> re.Pattern[str]:
    d = re.escape(fmt.decimal)
    if fmt.thousands and fmt.thousands != " ":
        t = re.escape(fmt.thousands)
        body = rf"(?:\d{{1,3}}(?:{t}\d{{3}})+|\d+)"
    else:  # spaces are removed with the symbols before matching
        body = r"\d+"
    return re.compile(rf"^(?:{body}(?:{d}\d+)?|{d}\d+)$")


class _Patterns(dict[NumberFormat, re.Pattern[str]]):
    """The pattern of each number format, built on first use for formats a person names."""

    def __missing__(self, fmt: NumberFormat) -> re.Pattern[str]:
        pattern = self[fmt] = _number_pattern(fmt)
        return pattern


_PATTERNS = _Patterns({fmt: _number_pattern(fmt) for fmt in NUMBER_FORMATS})


def _core(value: str) -> tuple[str, bool]:
    """The digits and separators of `value`, and whether it is negative.

    Mirrors `sql_amount`: parentheses, a minus anywhere, spaces, currency symbols and a
    three-letter code at either end are taken off before the format is applied.
    """
    text = value.strip()
    negative = (text.startswith("(") and text.endswith(")")) or "-" in text or "\u2212" in text
    return _CODE.sub(_known_code, _REMOVE.sub("", text)), negative


def _known_code(found: re.Match[str]) -> str:
    """Three letters at either end of an amount go only when they are a currency code: any
    other letters leave the value unreadable (`ABC12.00` is not 12.00)."""
    code = found.group()
    return "" if code.upper() in CURRENCY_EXPONENTS else code


def detect_number_format(
    values: Sequence[str], *, prefer_decimal_comma: bool = False
) -> tuple[NumberFormat | None, float]:
    """The number format that reads most of `values`, and the share of values it reads.

    Ambiguous values such as `1,250` fit two formats; the other values of the column decide, and
    a semicolon-delimited file (where a decimal comma is usual) breaks a remaining tie. Each
    distinct value is cleaned and tried once, counted as often as it occurs.
    """
    counts = Counter(values[:PROFILE_VALUES])
    filled = list(filter(str.strip, counts))
    total = sum(map(counts.__getitem__, filled))
    if not total:
        return None, 0.0
    cleaned: Counter[str] = Counter()
    for value, text in _number_texts(filled):
        cleaned[text] += counts[value]
    # A text holding anything but digits and separators fits no format: try only the others.
    texts = [t for t in cleaned if t and not _NOT_NUMBER.search(t)]
    found = list(map(cleaned.__getitem__, texts))
    order = sorted(NUMBER_FORMATS, key=lambda f: f.decimal != "," if prefer_decimal_comma else 0)
    best: NumberFormat | None = None
    best_hits = 0
    for fmt in order:
        hits = sum(compress(found, map(_PATTERNS[fmt].match, texts)))
        if hits > best_hits:
            best, best_hits = fmt, hits
    return best, best_hits / total


def rival_format(values: Sequence[str], chosen: NumberFormat) -> NumberFormat | None:
    """Another format that reads every value `chosen` reads, one of them as another number.

    `250.000` is 250 with a decimal point and 250000 with a thousands dot; when every value
    of a column reads both ways (all amounts in thousands of VND, say), the values cannot
    tell which is meant. None when the values decide (a `1.5` or a `1.234,50` among them).
    """
    distinct = {v for v in values[:PROFILE_VALUES] if v.strip()}
    read = {v: n for v, n in parse_numbers(distinct, chosen).items() if n is not None}
    if not read:
        return None
    for fmt in NUMBER_FORMATS:
        if fmt == chosen:
            continue
        other = parse_numbers(read, fmt)
        if None not in other.values() and any(other[v] != n for v, n in read.items()):
            return fmt
    return None


def _number_texts(values: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Each of `values` that could read as a number, with its text as `_core` cleans it.

    A value holding a character `_core` keeps and no format reads is left out (it fits no
    format); a value of digits and separators alone is its own text (nothing to clean).
    """
    maybe = list(filterfalse(_NEVER_NUMBER.search, values))
    pure = list(filterfalse(_NOT_NUMBER.search, maybe))
    yield from zip(pure, pure, strict=True)
    yield from ((value, _core(value)[0]) for value in set(maybe).difference(pure))


def parse_number(value: str, fmt: NumberFormat) -> Decimal | None:
    """`value` as an exact Decimal under `fmt`, or None when it does not fit the format."""
    text, negative = _core(value)
    if not text or not _PATTERNS[fmt].match(text):
        return None
    if fmt.thousands and fmt.thousands != " ":
        text = text.replace(fmt.thousands, "")
    try:
        number = Decimal(text.replace(fmt.decimal, "."))
    except InvalidOperation:
        return None
    return -number if negative else number


def parse_numbers(values: Iterable[str], fmt: NumberFormat) -> dict[str, Decimal | None]:
    """`parse_number` of each distinct value of `values`, the plain ones read in bulk.

    A value of ASCII digits and the format's separators alone is its own core (`_core` takes
    nothing off it, it is not negative): when it fits, its separators are read, with no cleaning.
    """
    distinct = set(values)
    plain = list(filter(_ascii_pattern(fmt).fullmatch, distinct))
    texts: Iterable[str] = plain
    if fmt.thousands and fmt.thousands != " ":
        texts = map(str.replace, texts, repeat(fmt.thousands), repeat(""))
    if fmt.decimal != ".":
        texts = map(str.replace, texts, repeat(fmt.decimal), repeat("."))
    read: dict[str, Decimal | None] = dict(zip(plain, map(Decimal, texts), strict=True))
    for value in distinct.difference(plain):
        read[value] = parse_number(value, fmt)
    return read


@functools.lru_cache(maxsize=64)
def _ascii_pattern(fmt: NumberFormat) -> re.Pattern[str]:
    """The pattern of `fmt` with ASCII digits only (`parse_numbers`' plain values)."""
    return re.compile(_PATTERNS[fmt].pattern, re.ASCII)


def decimals_used(values: Iterable[str], fmt: NumberFormat) -> int:
    """The largest number of digits after the decimal separator among `values`."""
    most = 0
    pattern = _PATTERNS[fmt]
    # Each distinct value once (the largest is the same), only those that could be numbers.
    for _, text in _number_texts(set(values)):
        if fmt.decimal in text and pattern.match(text):
            most = max(most, len(text) - text.rindex(fmt.decimal) - 1)
    return most


def sql_amount(column: str, fmt: NumberFormat, currency: str | None = None) -> str:
    """A DuckDB expression turning text `column` into DECIMAL(18,6) under `fmt`, NULL if unfit.

    The same reading as `parse_number`, applied to every row of the file; and, with `currency`
    (the SQL of the row's currency code), NULL for an amount that names another currency (a
    code, or a symbol of one currency only: `SYMBOL_CODES`) than its row's: the row's amount
    is then in doubt, and it is reported as unreadable rather than read in the row's currency.
    """
    text = f"trim({column})"
    negative = (
        f"((prefix({text}, '(') AND suffix({text}, ')')) "
        f"OR contains({text}, '-') OR contains({text}, '\u2212'))"
    )
    pattern = _PATTERNS[fmt].pattern.replace("'", "''")
    signed = "^-?" + pattern[1:]

    def digits(value: str) -> str:
        if fmt.thousands and fmt.thousands != " ":
            value = f"replace({value}, '{fmt.thousands.replace(chr(39), chr(39) * 2)}', '')"
        return f"replace({value}, ',', '.')" if fmt.decimal == "," else value

    # The text without signs, spaces and symbols; three letters at either end go only when
    # they are a currency code (`_known_code`: any other letters leave it unreadable) and, with
    # `currency`, only when they are the row's; a symbol of one currency must be the row's too.
    stripped = f"regexp_replace({text}, '[{_REMOVE_CLASS}]', '', 'g')"
    core = f"regexp_replace({stripped}, '{_CODE_ENDS}', '', 'gi')"
    if currency is not None:
        lettered = f"regexp_matches({stripped}, '^[A-Za-z]{{3}}|[A-Za-z]{{3}}$')"
        named = (
            f"(upper(left({stripped}, 3)) = {currency} OR upper(right({stripped}, 3)) = {currency})"
        )
        found = f"regexp_extract({column}, '[{''.join(SYMBOL_CODES)}]')"
        symbol = f"{_SYMBOL_NAMES_SQL}[list_position({_SYMBOLS_SQL}, {found})]"
        agrees = f"(NOT {lettered} OR {named}) AND coalesce({symbol} = {currency}, true)"
        core = f"CASE WHEN {agrees} THEN {core} END"
    value = f"TRY_CAST({digits('amount_core_')} AS {SQL_DECIMAL})"
    # The core is bound once (a lambda's parameter): inlined, it is computed once per use.
    general = (
        f"list_transform([{core}], lambda amount_core_: "
        f"CASE WHEN regexp_full_match(amount_core_, '{pattern}') THEN "
        f"(CASE WHEN {negative} THEN -{value} ELSE {value} END) END)[1]"
    )
    # Signed numbers with separators and nothing else need one expression, not three; plain
    # numbers with a decimal point need none (DuckDB's cast reads them exactly).
    fast = ""
    if fmt.decimal == ".":
        # A cast that fails costs far more than one that succeeds: tried only on values holding
        # no separator but the decimal point, once (where it gives nothing, the rest decides).
        # DuckDB's cast also reads exponents and digit groups (`1.5E+3`, `1_000`), which no
        # format reads: such values go to the rest, which finds them unreadable.
        guards = [f"NOT contains({column}, {mark})" for mark in ("','", "'e'", "'E'", "'_'")]
        if fmt.thousands not in ("", ",", " "):
            guards.append(
                f"NOT contains({column}, '{fmt.thousands.replace(chr(39), chr(39) * 2)}')"
            )
        fast = f"CASE WHEN {' AND '.join(guards)} THEN TRY_CAST({column} AS {SQL_DECIMAL}) END"
    rest = (
        f"(CASE WHEN {column} IS NULL THEN NULL WHEN regexp_full_match({column}, '{signed}') "
        f"THEN TRY_CAST({digits(column)} AS {SQL_DECIMAL}) ELSE {general} END)"
    )
    return f"coalesce({fast}, {rest})" if fast else rest


def sql_trim(value: str) -> str:
    """`trim(value)`, copying only a padded string (`prefix` is a cheaper `starts_with`)."""
    padded = f"prefix({value}, ' ') OR suffix({value}, ' ')"
    return f"(CASE WHEN {padded} THEN trim({value}) ELSE {value} END)"


def known_currency_sql() -> str:
    """A DuckDB VALUES list of (code, exponent) for every ISO 4217 currency."""
    rows = ", ".join(f"('{code}', {exp})" for code, exp in sorted(CURRENCY_EXPONENTS.items()))
    return f"(VALUES {rows}) AS currency_exponents(code, exponent)"
