"""The fast paths of inference read exactly as the plain rules they stand for.

Inference reads each sampled column once and in bulk (`profile.SampleColumns`), skips regular
expressions where a value's shape already decides, and tries strptime only on values shaped
like the pattern. Each shortcut is checked here against the plain rule, on random values that
mix digits, separators, `#`, Unicode spaces and digits, and signs.
"""

from __future__ import annotations

import random
import re
from datetime import datetime
from decimal import Decimal

import pytest

from agent.data.formats import (
    _PATTERNS,
    NUMBER_FORMATS,
    PROFILE_VALUES,
    NumberFormat,
    _core,
    decimals_used,
    detect_number_format,
    parse_number,
)
from agent.data.ingest import CsvSample
from agent.data.ingest.layout import CsvLayout
from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.evidence import _same_money
from agent.data.profile import (
    REF_SPLIT,
    column_values,
    normalize_key,
    normalize_keys,
    read_amounts,
    reference_tokens,
    references_of,
    success_rows,
)
from agent.data.timestamp_formats import TIMESTAMP_FORMATS, timestamp_hits

_REFERENCE_CHARS = [*"#12 ,;|/&+-_aB.:\t\n", "\u00a0", "\u2028", "\x1c", "\u0663", "é"]
_NUMBER_CHARS = [*"0123456789.,' -()$€", "\u00a0", "\u0663", "E", "U", "R", "e"]
_STAMP_VALUES = [
    "2025-09-08 00:47:19 +0000",
    "2025-09-08 00:47:19+00:00",
    "2025-09-08T00:47:19Z",
    "2025-09-08t00:47:19z",
    "2025-09-08T00:47:19.123456Z",
    "2025-09-08 15:27:19",
    "2025-9-8 5:7:9",
    "08/09/2025",
    "8/9/2025 10:00",
    "13/13/2025",
    "31.02.2025 10:00",
    "07.10.2025 10:00",
    "2025/02/29",
    "2024/02/29",
    " 2025-09-08",
    "2025-09-08 ",
    "2025-09-08  10:00",
    "2025-09-08\t10:00",
    "\u0662\u0660\u0662\u0665-09-08",
    "10-07-2025 10:00:00.5",
    "",
    "n/a",
]


def _plain_reference_tokens(value: str) -> list[str]:
    """The rule as first written: split, `normalize_key` each part, keep those with a digit."""
    tokens = (normalize_key(token) for token in REF_SPLIT.split(value))
    return list(dict.fromkeys(t for t in tokens if re.search(r"\d", t)))


def _random_text(rng: random.Random, chars: list[str], longest: int) -> str:
    return "".join(rng.choice(chars) for _ in range(rng.randint(0, longest)))


def test_reference_tokens_follow_the_plain_rule() -> None:
    rng = random.Random(3)
    values = [_random_text(rng, _REFERENCE_CHARS, 10) for _ in range(5_000)]
    values += ["#1001", " #1001 ", "##12", "#", "Order 7", "#1042, #1043", "#1042 #1042", ""]
    found = references_of(values)
    for value in values:
        assert reference_tokens(value) == _plain_reference_tokens(value), value
        assert found[value] == _plain_reference_tokens(value), value


def test_keys_are_normalized_as_one_key_is() -> None:
    values = ["#1001", " # 1001 ", "1001", "##7", "  ", "", "\u00a0#8\u00a0", "#\u2028x"]
    assert normalize_keys(values) == [normalize_key(v) for v in values]


def test_amounts_read_as_parse_number_reads_them() -> None:
    rng = random.Random(5)
    values = [_random_text(rng, _NUMBER_CHARS, 9) for _ in range(4_000)]
    values += ["0", "007", ".5", "5.", ".", "1.2.3", "1,234.50", "1.234,50", "\u0663", " 12 "]
    for fmt in [*NUMBER_FORMATS, NumberFormat(",", "'")]:
        expected = [parse_number(v, fmt) if v.strip() else None for v in values]
        read = read_amounts(values, fmt)
        assert [str(x) for x in read] == [str(x) for x in expected], fmt
    assert read_amounts(values, None) == [None] * len(values)


def _plain_detect_number_format(
    values: list[str], prefer_decimal_comma: bool
) -> tuple[NumberFormat | None, float]:
    cleaned = [_core(v)[0] for v in values[:PROFILE_VALUES] if v.strip()]
    if not cleaned:
        return None, 0.0
    order = sorted(NUMBER_FORMATS, key=lambda f: f.decimal != "," if prefer_decimal_comma else 0)
    best, best_hits = None, 0
    for fmt in order:
        hits = sum(1 for text in cleaned if _PATTERNS[fmt].match(text))
        if hits > best_hits:
            best, best_hits = fmt, hits
    return best, best_hits / len(cleaned)


@pytest.mark.parametrize("prefer_comma", [False, True])
def test_number_formats_are_detected_as_the_plain_rule_detects_them(prefer_comma: bool) -> None:
    rng = random.Random(7)
    pools = [
        ["1,250", "1.250", "12,50", "3", "4.5", "1 234,5"],
        [*"0123456789.,' "],
        _NUMBER_CHARS,
    ]
    for trial in range(300):
        chars = pools[trial % len(pools)]
        if trial % len(pools) == 0:
            values = [rng.choice(chars) for _ in range(rng.randint(0, 30))]
        else:
            values = [_random_text(rng, chars, 7) for _ in range(rng.randint(0, 30))]
        found = detect_number_format(values, prefer_decimal_comma=prefer_comma)
        assert found == _plain_detect_number_format(values, prefer_comma), values
        fmt = found[0]
        if fmt is not None:
            plain = 0
            for value in values:
                text, _ = _core(value)
                if fmt.decimal in text and _PATTERNS[fmt].match(text):
                    plain = max(plain, len(text) - text.rindex(fmt.decimal) - 1)
            assert decimals_used(values, fmt) == plain


def _strptime_hits(pattern: str, values: list[str]) -> int:
    hits = 0
    for value in values:
        try:
            datetime.strptime(value, pattern)
        except ValueError:
            continue
        hits += 1
    return hits


def test_timestamp_hits_count_what_strptime_reads() -> None:
    patterns = [
        *TIMESTAMP_FORMATS,
        *(p.replace("%Y", "%y") for p in TIMESTAMP_FORMATS),
        "%H:%M",
        "%I:%M %p",
        "%d %b %Y",
        "100%%",
        "%Y%",
    ]
    rng = random.Random(11)
    mutated = []
    for value in _STAMP_VALUES * 10:
        chars = list(value)
        if chars:
            chars[rng.randrange(len(chars))] = rng.choice("0123456789 -/.:TZ+x")
        mutated.append("".join(chars))
    values = _STAMP_VALUES + mutated
    for pattern in patterns:
        assert timestamp_hits(pattern, values) == _strptime_hits(pattern, values), pattern


def test_same_money_is_the_plain_comparison() -> None:
    numbers = [Decimal(x) for x in ("0", "0.00", "1.5", "150", "1500", "-1.5", "-150", "2", "7.77")]
    for first in numbers:
        for second in numbers:
            plain = any(first == second * 10**k or second == first * 10**k for k in (0, 2, 3))
            assert _same_money(first, second) == plain


def test_success_rows_are_the_vocabulary_s_captures() -> None:
    statuses = ["Paid", "paid", " PAID ", "Failed", "", "Bezahlt", "réussi", "pending"] * 3
    plain = [i for i, s in enumerate(statuses) if s.strip() and s != "Failed" and s != "pending"]
    assert success_rows(statuses) == plain
    assert success_rows(["failed", "open"]) is None


def test_sample_columns_read_as_column_values() -> None:
    layout = CsvLayout("f.csv", "utf-8", ",", 0, ("a", "b", "a"))
    sample = CsvSample(layout, [["#1", " 2,50 ", "x"], ["", "3", "y"], ["#1", "n/a", "z"]], True)
    columns = SampleColumns(sample)
    for name in ("a", "b"):
        assert list(columns.values(name)) == column_values(sample, name)
    assert columns.keys("a") == [normalize_key(v) for v in column_values(sample, "a")]
    fmt = NumberFormat(",", "")
    assert columns.amounts("b", fmt) == read_amounts(column_values(sample, "b"), fmt)
    assert columns.tokens("a") == {v: reference_tokens(v) for v in ("#1", "")}
    empty = SampleColumns(CsvSample(layout, [], True))
    assert list(empty.values("b")) == []
