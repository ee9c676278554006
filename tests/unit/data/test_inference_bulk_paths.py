"""The bulk readings of inference read exactly as the plain rules they stand for.

Inference reads a sampled column as a whole (`filter`, `map`, string methods, set operations)
rather than value by value, skips a reference column none of whose parts is a key, compares
amounts only where their magnitudes allow, and counts timestamps that surely read without
strptime. Each shortcut is checked here against its plain rule, on random values.
"""

from __future__ import annotations

import random
import re
import weakref
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal

import pytest

import agent.data.mapping.bounds as bounds_module
from agent.data.currency import is_currency_code
from agent.data.formats import (
    NUMBER_FORMATS,
    NumberFormat,
    _core,
    detect_number_format,
    parse_number,
    parse_numbers,
)
from agent.data.ingest import CsvSample
from agent.data.ingest.layout import CsvLayout
from agent.data.mapping.bounds import profiles_of
from agent.data.mapping.columns import SampleColumns
from agent.data.mapping.evidence import _agrees, _same_money
from agent.data.mapping.references import _References, possible_ids, read_references
from agent.data.profile import (
    _BOOLEAN,
    _EDGE_CODE,
    _SYMBOL,
    MARK_SHARE,
    ColumnProfile,
    _currency_mark,
    _is_id_like,
    _profile,
    column_values,
    normalize_key,
    profile_sample,
    reference_tokens,
    references_of,
    transpose,
)
from agent.data.timestamp_formats import TIMESTAMP_FORMATS, timestamp_hits

_REFERENCE_CHARS = [*"#12 ,;|/&+-_aB.:\t\n", "\u00a0", "\u2028", "\x1c", "\u0663", "é", "\x00"]
_CELL_CHARS = [*"#0189 ,.;:-+/()'$€£aAbEURusd@_T", "\u00a0", "\u0663", "²", "\t"]


def _text(rng: random.Random, chars: list[str], longest: int) -> str:
    return "".join(rng.choice(chars) for _ in range(rng.randint(0, longest)))


def _references(rng: random.Random, count: int) -> list[str]:
    pool = [_text(rng, _REFERENCE_CHARS, 9) for _ in range(count // 3 + 1)]
    pool += ["#1001", "1001", "#1002, #1001", "1001 1001", "Order 7", "", " ", "n/a", "##12"]
    return [rng.choice(pool) for _ in range(count)]


def test_spaces_are_what_str_split_splits_on() -> None:
    # `possible_ids` splits with `str.split`, the references split on `\s`: the same spaces.
    space = re.compile(r"\s")
    assert all(bool(space.match(c)) == c.isspace() for c in map(chr, range(0x110000)))


def test_read_references_name_what_reference_tokens_names() -> None:
    rng = random.Random(21)
    for _ in range(200):
        values = _references(rng, rng.randint(0, 40))
        found = read_references(values)
        for value in set(values):
            tokens = reference_tokens(value)
            if len(tokens) == 1:
                assert found.one[value] == tokens[0] and value not in found.many
            elif tokens:
                assert found.many[value].split("\n") == tokens and value not in found.one
            else:
                assert value not in found.one and value not in found.many


def test_possible_ids_hold_every_id_a_value_names() -> None:
    rng = random.Random(22)
    for _ in range(200):
        values = _references(rng, rng.randint(0, 40))
        possible = possible_ids(values)
        assert all(set(reference_tokens(v)) <= possible for v in values), values


def _plain_share(values: list[str], keys: set[str]) -> float:
    named = [tokens for tokens in map(reference_tokens, values) if tokens]
    hits = sum(1 for tokens in named if any(t in keys for t in tokens))
    return hits / len(named) if named else 0.0


def test_references_are_counted_in_bulk_as_one_by_one() -> None:
    rng = random.Random(23)
    for trial in range(300):
        values = _references(rng, rng.randint(0, 60))
        keys = {t for v in values for t in reference_tokens(v) if rng.random() < 0.4}
        keys |= {"", "x", "#1001"}
        bulk = _References.of(values, len(values) + 1)
        one_by_one = _References._first(Counter(values), len(values) + 1, references_of(values))
        assert bulk.total == one_by_one.total
        assert bulk.share_in(keys) == one_by_one.share_in(keys) == _plain_share(values, keys)
        known = read_references(values)
        assert _References.of(values, len(values) + 1, known).share_in(keys) == bulk.share_in(keys)
        if trial % 3 == 0:  # a limit that cuts reads the first references only, as before
            limit = rng.randint(1, 4)
            cut = _References.of(values, limit)
            first = _References._first(Counter(values), limit, references_of(values))
            assert (cut.total, cut.share_in(keys)) == (first.total, first.share_in(keys))
        if not any(set(reference_tokens(v)) & keys for v in values):
            assert bulk.share_in(keys) == 0.0


def _plain_currency_mark(counts: Counter[str]) -> str | None:
    marks: Counter[str] = Counter()
    for value, count in counts.items():
        symbol = _SYMBOL.search(value)
        if symbol:
            marks[symbol.group()] += count
            continue
        code = _EDGE_CODE.search(value)
        if code and is_currency_code(code.group(1) or code.group(2)):
            marks[(code.group(1) or code.group(2)).upper()] += count
    total = counts.total()
    if not total or marks.total() < MARK_SHARE * total or len(marks) != 1:
        return None
    return next(iter(marks))


def _plain_share_of(counts: Counter[str], test: Callable[[str], object]) -> float:
    total = counts.total()
    return sum(n for v, n in counts.items() if test(v)) / total if total else 0.0


def _columns(rng: random.Random) -> list[list[str]]:
    pools = [
        ["EUR 12.50", "€3", "12,50 €", "usd 4", "$-2.55", "12", "abc", "1,250", " "],
        ["0", "1", "yes", "No", " t ", "F", "", "2"],
        ["#1001", "A-7", "12.50", "x", "ord_9", " 12 ", "#1002, #1003", "1.5.6", "٣"],
        ["USD", " eur ", "usd", "XXX", "US", "", "JPY "],
    ]
    columns = []
    for pool in pools:
        for _ in range(20):
            size = rng.randint(0, 30)
            columns.append([rng.choice(pool) for _ in range(size)])
            columns.append([_text(rng, _CELL_CHARS, 7) for _ in range(size)])
    return columns


def test_profile_kinds_read_in_bulk_as_the_plain_rules() -> None:
    rng = random.Random(24)
    for values in _columns(rng):
        profile = _profile("c", values, depth=1000, prefer_decimal_comma=False)
        head = [v for v in values if v.strip()][:1000]
        counts = Counter(head)
        assert profile.currency_share == _plain_share_of(counts, is_currency_code)
        assert profile.id_like_share == _plain_share_of(counts, _is_id_like)
        assert profile.reference_share == _plain_share_of(counts, reference_tokens)
        several = _plain_share_of(counts, lambda v: len(reference_tokens(v)) > 1)
        assert profile.multi_reference_share == several
        words = {v.strip().lower() for v in counts}
        boolean = _plain_share_of(counts, lambda v: v.strip().lower() in _BOOLEAN)
        assert profile.boolean_share == (boolean if words <= _BOOLEAN else 0.0)
        assert _currency_mark(counts) == _plain_currency_mark(counts)
        assert profile.filled == len([v for v in values if v.strip()])
        assert profile.distinct == len({v for v in values if v.strip()})


def _plain_number_format(values: list[str]) -> tuple[NumberFormat | None, float]:
    cleaned = [_core(v)[0] for v in values if v.strip()]
    if not cleaned:
        return None, 0.0
    best, best_hits = None, 0
    for fmt in NUMBER_FORMATS:
        pattern = re.compile(_plain_pattern(fmt))
        hits = sum(1 for text in cleaned if pattern.match(text))
        if hits > best_hits:
            best, best_hits = fmt, hits
    return best, best_hits / len(cleaned)


def _plain_pattern(fmt: NumberFormat) -> str:
    d = re.escape(fmt.decimal)
    if fmt.thousands and fmt.thousands != " ":
        body = rf"(?:\d{{1,3}}(?:{re.escape(fmt.thousands)}\d{{3}})+|\d+)"
    else:
        body = r"\d+"
    return rf"^(?:{body}(?:{d}\d+)?|{d}\d+)$"


def test_values_no_format_reads_are_left_out_as_the_plain_rule_does() -> None:
    rng = random.Random(25)
    for values in _columns(rng):
        assert detect_number_format(values) == _plain_number_format(values), values


@pytest.mark.parametrize("fmt", [*NUMBER_FORMATS, NumberFormat(",", "'")])
def test_numbers_read_in_bulk_as_parse_number(fmt: NumberFormat) -> None:
    rng = random.Random(26)
    values = [_text(rng, [*"0123456789.,' ", "\u0663", "-", "$", "\n"], 8) for _ in range(3000)]
    values += ["1,234.5", "1.234,5", "1'234.5", ".5", "5.", "0012", "12\n", "١٢"]
    read = parse_numbers(values, fmt)
    for value in values:
        assert str(read[value]) == str(parse_number(value, fmt)), (value, fmt)


def _random_amounts(rng: random.Random) -> list[Decimal]:
    out = [Decimal(0), Decimal("0.00"), Decimal("-0")]
    for _ in range(120):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 34)))
        point = rng.randint(0, len(digits))
        text = (digits[:point] or "0") + "." + digits[point:] if rng.random() < 0.6 else digits
        value = Decimal(("-" if rng.random() < 0.2 else "") + text)
        out += [value, value * 100, value * 1000, value.scaleb(2), value.scaleb(-3), value + 1]
    return out


def test_amounts_agree_as_same_money_says_for_a_sum_of_payments() -> None:
    rng = random.Random(27)
    amounts = _random_amounts(rng)
    for _ in range(40_000):
        total = rng.choice(amounts)
        paid_sum = Decimal(0) + rng.choice(amounts)  # a sum, as `paid_sums` computes it
        assert _agrees(total, paid_sum) == _same_money(total, paid_sum), (total, paid_sum)
    for total in amounts:  # the multiples the rule looks for, both ways
        for paid_sum in (total, total * 100, total * 1000, total / 100, total / 1000, total + 0):
            paid_sum = Decimal(0) + paid_sum
            assert _agrees(total, paid_sum) == _same_money(total, paid_sum)
            assert _agrees(paid_sum, paid_sum) == _same_money(paid_sum, paid_sum)


def _stamp(rng: random.Random, pattern: str) -> str:
    fields = {
        "%Y": f"{rng.randint(0, 9999):04d}",
        "%m": f"{rng.randint(0, 13):02d}",
        "%d": f"{rng.randint(0, 32):02d}",
        "%H": f"{rng.randint(0, 25):02d}",
        "%M": f"{rng.randint(0, 61):02d}",
        "%S": f"{rng.randint(0, 62):02d}",
        "%f": f"{rng.randint(0, 999999):06d}",
        "%z": rng.choice("+-") + f"{rng.randint(0, 25):02d}{rng.randint(0, 61):02d}",
    }
    text = pattern
    for directive, value in fields.items():
        text = text.replace(directive, value)
    return text


def test_timestamps_that_surely_read_are_what_strptime_reads() -> None:
    rng = random.Random(28)
    for pattern in TIMESTAMP_FORMATS:
        values = [_stamp(rng, pattern) for _ in range(300)]
        values += [_stamp(rng, rng.choice(TIMESTAMP_FORMATS)) for _ in range(100)]
        values += [v.lower() for v in values[:20]] + [v + " " for v in values[:5]]
        plain = 0
        for value in values:
            try:
                datetime.strptime(value, pattern)
            except ValueError:
                continue
            plain += 1
        assert timestamp_hits(pattern, values) == plain, pattern


def test_columns_and_keys_read_in_bulk_as_one_value_at_a_time() -> None:
    rng = random.Random(29)
    names = ("a", "b", "c")
    pool = ["#1", " # 2 ", "3", "##4", " ", "", "\u00a0#5\u00a0", "#\u2028x", "x y"]
    rows = [[rng.choice(pool) for _ in names] for _ in range(200)]
    sample = CsvSample(CsvLayout("f.csv", "utf-8", ",", 0, names), rows, True)
    columns = SampleColumns(sample)
    assert [list(c) for c in transpose(sample)] == [column_values(sample, n) for n in names]
    for name in names:
        assert columns.keys(name) == [normalize_key(v) for v in column_values(sample, name)]
        assert columns.key_set(name) == {normalize_key(v) for v in column_values(sample, name)}
    ragged = CsvSample(sample.layout, [["1", "2", "3"], ["1", "2"]], True)
    with pytest.raises(ValueError, match="zip"):
        transpose(ragged)


def test_a_sample_is_profiled_once_and_only_its_own_profiles_are_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layout = CsvLayout("f.csv", "utf-8", ",", 0, ("id", "amount"))
    sample = CsvSample(layout, [["#1", "2.50"], ["#2", "3"]], True)
    twin = CsvSample(layout, [["#1", "2.50"], ["#2", "3"]], True)  # equal, another object
    profiled: list[CsvSample] = []

    def counting(sample: CsvSample, *args: object) -> list[ColumnProfile]:
        profiled.append(sample)
        return profile_sample(sample, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(bounds_module, "profile_sample", counting)
    first = profiles_of(sample)
    assert profiles_of(sample) == first and profiles_of(sample) is not first
    assert profiled == [sample]
    assert profiles_of(twin) == first and len(profiled) == 2  # another object: profiled again
    other = CsvSample(layout, [["x", "y"]], True)
    bounds_module._PROFILED._found[(id(other), None)] = ([weakref.ref(sample)], first)  # stale
    assert profiles_of(other) != first and profiled[-1] is other
