"""SQL expressions that read ids, references and amounts, shared by loading and the engine.

Each builder returns DuckDB expression text for a column or an expression given by the caller;
the values it writes in (an approved id pattern, prefix or suffix, a list of words) are quoted
by `sql_text`.
"""

from __future__ import annotations

import functools
from collections import Counter

from agent.data.currency import CURRENCY_EXPONENTS
from agent.data.formats import sql_trim
from agent.data.keys import EXACT_DIGITS
from agent.data.schema import IdReading


@functools.cache
def exponents() -> tuple[int, ...]:
    """Every minor-unit exponent a currency has, the commonest first: one branch each in the
    amount expressions (`minor_sql`, `finer_than_minor_sql`), so that both cover the same ones.
    Worked out on first use: the exponents are Babel's data, never read at import."""
    return tuple(e for e, _ in Counter(CURRENCY_EXPONENTS.values()).most_common())


def sql_text(value: str) -> str:
    """`value` as a DuckDB string literal, its quotes doubled."""
    return "'" + value.replace("'", "''") + "'"


def sql_words(words: tuple[str, ...] | list[str]) -> str:
    """A DuckDB list literal of words for `x IN ...`; `(NULL)` when empty (nothing is in it)."""
    if not words:
        return "(NULL)"
    return "(" + ", ".join(sql_text(w) for w in words) + ")"


def key_sql(value: str, reading: IdReading | None = None) -> str:
    """A DuckDB expression: an id as compared across files, as `profile.normalize_key` does.

    Surrounding spaces and one leading `#` go; nothing else (case and inner characters are part
    of the id, so `AB-7` and `ab-7`, or `#10#07` and `1007`, stay two ids) unless the approved
    `reading` says more: a prefix or suffix removed, leading zeros removed. (Its pattern is
    applied by the callers, before this.) Empty becomes NULL.
    """
    trimmed = sql_trim(value)
    key = f"CASE WHEN prefix({trimmed}, '#') THEN ltrim(substr({trimmed}, 2)) ELSE {trimmed} END"
    if reading is None:
        return f"NULLIF({key}, '')"
    if reading.excel_numbers:
        key = spreadsheet_number_sql(key)
    prefix, suffix = reading.prefix, reading.suffix
    if reading.ignore_case:
        key, prefix, suffix = f"lower({key})", prefix.lower(), suffix.lower()
    if prefix:
        key = (
            f"(CASE WHEN prefix({key}, {sql_text(prefix)}) "
            f"THEN substr({key}, {len(prefix) + 1}) ELSE {key} END)"
        )
    if suffix:
        key = (
            f"(CASE WHEN suffix({key}, {sql_text(suffix)}) "
            f"THEN left({key}, length({key}) - {len(suffix)}) ELSE {key} END)"
        )
    if reading.strip_zeros:
        stripped = f"ltrim({key}, '0')"
        key = f"(CASE WHEN {stripped} = '' AND {key} <> '' THEN '0' ELSE {stripped} END)"
    return f"NULLIF({key}, '')"


_SCIENTIFIC = "[0-9](\\.[0-9]+)?[eE]\\+?[0-9]{1,2}"


def spreadsheet_number_sql(key: str) -> str:
    """A DuckDB expression: `keys.spreadsheet_number` of `key` (`1042.0`, `1.042E+3` -> `1042`)."""
    number = f"TRY_CAST({key} AS DOUBLE)"
    return (
        f"(CASE WHEN regexp_full_match({key}, '[0-9]+\\.0+') THEN split_part({key}, '.', 1) "
        f"WHEN regexp_full_match({key}, '{_SCIENTIFIC}') "
        f"AND {number} = floor({number}) AND {number} < {10**EXACT_DIGITS} "
        f"THEN CAST(CAST({number} AS BIGINT) AS VARCHAR) ELSE {key} END)"
    )


REFERENCE_SEPARATORS = "[\\s,;|/&+]"


def reference_tokens_sql(value: str, reading: IdReading | None = None) -> str:
    """A DuckDB expression: the distinct order ids a reference names, as `reference_tokens`.

    With a pattern in `reading`, every match's capture is one id; otherwise the reference is
    split at separators and the parts with a digit are ids.
    """
    if reading is not None and reading.pattern:
        found = f"regexp_extract_all(coalesce({value}, ''), {sql_text(reading.pattern)}, 1)"
        return (
            f"list_distinct(list_filter(list_transform({found}, lambda t: {key_sql('t', reading)}),"
            " lambda t: t IS NOT NULL))"
        )
    whole = f"list_filter([{key_sql(value, reading)}], lambda t: t IS NOT NULL)"
    if reading is not None and reading.whole:
        return whole
    split = f"string_split_regex(coalesce({value}, ''), '{REFERENCE_SEPARATORS}+')"
    tokens = (
        f"list_distinct(list_filter(list_transform({split}, lambda t: {key_sql('t', reading)}), "
        "lambda t: t IS NOT NULL AND regexp_matches(t, '[0-9]')))"
    )
    if reading is not None and reading.excel_numbers:  # `1.042E+3` is one number
        number = f"regexp_full_match({key_sql(value)}, '{_SCIENTIFIC}')"
        return f"(CASE WHEN coalesce({number}, false) THEN {whole} ELSE {tokens} END)"
    return tokens


def minor_sql(amount: str, unit: str, exponent: str) -> str:
    """A DuckDB expression: `amount` (a parsed decimal) in integer minor units."""
    if unit == "minor":
        return f"CAST(round({amount}) AS BIGINT)"
    # One branch per exponent: a constant factor keeps DuckDB's decimal arithmetic in 64 bits
    # for amounts under 10^8 (every exponent fits in DECIMAL(18, 6)); larger amounts (in IDR,
    # VND, a B2B order) are widened first, so they convert instead of overflowing.
    branches = " ".join(
        f"WHEN {e} THEN CASE WHEN abs({amount}) < 100000000 "
        f"THEN CAST(round({amount} * {10**e}) AS BIGINT) "
        f"ELSE CAST(round(CAST({amount} AS DECIMAL(38, 6)) * {10**e}) AS BIGINT) END"
        for e in exponents()
    )
    return f"(CASE {exponent} {branches} END)"


def finer_than_minor_sql(amount: str, unit: str, exponent: str) -> str:
    """A DuckDB condition: `amount` has digits below the minor unit `minor_sql` rounds it to.

    Such an amount (10.005 USD, 100.5 JPY, 1250.5 in a column of cents) reconciles rounded half
    away from zero; the validation names its rows before approval, so that nobody meets the
    rounding in a result without having been told. `exponent` is NULL for a currency that does
    not read: such a row is never reconciled, so never rounded.
    """
    if unit == "minor":  # in any currency that reads: a row without one is not reconciled
        return f"({exponent} IS NOT NULL AND round({amount}) <> {amount})"
    branches = " ".join(f"WHEN {e} THEN round({amount}, {e}) <> {amount}" for e in exponents())
    return f"(CASE {exponent} {branches} END)"
