"""Ids as the files are joined on them, in Python: the twin of `normalize.key_sql` for samples.

Inference and validation look at samples in Python; the engine reads whole files in DuckDB.
Both must turn `#1042 `, `WC-1042` or `Order #1042 - 2 items` into the same id under the same
approved `IdReading`, so the rules live here and in `normalize.key_sql` side by side.
"""

from __future__ import annotations

import re

from agent.data.profile import REF_SPLIT, normalize_key
from agent.data.schema import ID_OPTIONS, IdReading
from agent.errors import MappingError

_HAS_DIGIT = re.compile(r"\d")
_DECIMAL_ZEROS = re.compile(r"(\d+)\.0+")
_SCIENTIFIC = re.compile(r"\d(?:\.\d+)?[eE]\+?\d{1,2}")
EXACT_DIGITS = 15
"""A spreadsheet keeps 15 significant digits: a number beyond them is not read back as an id."""


def spreadsheet_number(key: str) -> str:
    """An id a spreadsheet rewrote as a number, as the whole number it shows: `1042.0` and
    `1.042E+3` are `1042`. Anything else, and a form that is not a whole number (`1.0425E+3`)
    or has more digits than a spreadsheet keeps, is returned as it is."""
    if match := _DECIMAL_ZEROS.fullmatch(key):
        return match.group(1)
    if _SCIENTIFIC.fullmatch(key):
        number = float(key)
        if number.is_integer() and number < 10**EXACT_DIGITS:
            return str(int(number))
    return key


def read_key(value: str, reading: IdReading | None = None) -> str:
    """One id as compared across files: `#` and spaces off, then the reading's prefix, suffix
    and leading zeros. An empty result means no id."""
    key = normalize_key(value)
    if reading is None:
        return key
    if reading.excel_numbers:
        key = spreadsheet_number(key)
    prefix, suffix = reading.prefix, reading.suffix
    if reading.ignore_case:
        key, prefix, suffix = key.lower(), prefix.lower(), suffix.lower()
    if prefix and key.startswith(prefix):
        key = key[len(prefix) :]
    if suffix and key.endswith(suffix):
        key = key[: -len(suffix)]
    if reading.strip_zeros and key:
        key = key.lstrip("0") or "0"
    return key


def order_key(value: str, reading: IdReading | None = None) -> str:
    """The key of an order id cell under `reading` (its pattern's first capture, if any)."""
    if reading is not None and reading.pattern:
        match = re.search(reading.pattern, value)
        return read_key(match.group(1), reading) if match and match.group(1) else ""
    return read_key(value, reading)


def reference_keys(value: str, reading: IdReading | None = None) -> list[str]:
    """The order keys a payment reference names under `reading`, in order, without repeats."""
    if reading is not None and reading.pattern:
        tokens = [m.group(1) or "" for m in re.finditer(reading.pattern, value)]
        keys = (read_key(t, reading) for t in tokens)
        return list(dict.fromkeys(k for k in keys if k))
    if reading is not None and (
        reading.whole or (reading.excel_numbers and _SCIENTIFIC.fullmatch(normalize_key(value)))
    ):  # `1.042E+3` is one number, not `1.042E` and `3`
        whole = read_key(value, reading)
        return [whole] if whole else []
    keys = (read_key(t, reading) for t in REF_SPLIT.split(value))
    return list(dict.fromkeys(k for k in keys if k and _HAS_DIGIT.search(k)))


def id_reading_from_answers(answers: dict[str, str], base: IdReading | None) -> IdReading | None:
    """The id reading that a person's option answers (`id_pattern`, `id_prefix`, …) describe.

    Raises MappingError, in words, for a value that cannot work (a pattern without exactly one
    capture group, a yes/no that is neither).
    """
    given = {name: value for name, value in answers.items() if name in ID_OPTIONS}
    if not given:
        return base
    fields = (base or IdReading()).model_dump()
    for name, value in given.items():
        key = name.removeprefix("id_")
        if isinstance(fields.get(key), bool):
            word = value.strip().lower()
            if word not in {"yes", "no", "true", "false"}:
                raise MappingError(f'{name} is yes or no, not "{value}"')
            fields[key] = word in {"yes", "true"}
        elif key == "pattern":
            fields[key] = value or None
        else:
            fields[key] = value
    try:
        reading = IdReading(**fields)
    except ValueError as error:
        raise MappingError(f"{name}: {_first_error(error)}") from None
    return None if reading.is_plain else reading


def _first_error(error: ValueError) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        found = errors()
        if found:
            return str(found[0].get("msg", error)).removeprefix("Value error, ")
    return str(error)
