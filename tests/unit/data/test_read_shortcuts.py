"""The shortcuts of inspection and inference read exactly as the plain rules they stand for.

Sniffing reads each delimiter on a prefix of the head, the sample's records are read in
batches, amount agreement counts its pairs with `_agrees` written out, key overlap looks the
parts of references up in the keys without a set of them. Each is checked here against the
plain rule, on random inputs.
"""

from __future__ import annotations

import random
from decimal import Decimal

from agent.data.ingest.detect import (
    _SNIFF_PREFIXES,
    SNIFF_RECORDS,
    _all_records,
    _first_records,
    _records,
)
from agent.data.mapping.evidence import _agrees, count_agreeing
from agent.data.mapping.references import may_name, possible_ids

_PIECES = ["a", "1", ",", ";", "\t", "|", " ", '"', '""', "\n", "\r\n", "\r", "x" * 40, "\n\n"]


def _text(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(size))


def test_sniffing_a_prefix_reads_the_first_records_of_the_whole_head() -> None:
    rng = random.Random(41)
    first = _SNIFF_PREFIXES[0]
    for trial in range(40):
        # Past the first prefix's end: records cut there, quotes open across it, blank lines;
        # some with the records far apart (one quote opened early), read on the whole head.
        text = _text(rng, rng.randint(first // 6, first // 2))
        if trial % 4 == 0:
            text = '"' + text.replace('"', "")
        for delimiter in ",;\t|":
            expected = _records(text, delimiter, limit=SNIFF_RECORDS)
            assert _first_records(text, delimiter) == expected


def test_records_read_in_batches_are_the_records_read_one_by_one() -> None:
    rng = random.Random(42)
    for _ in range(300):
        text = _text(rng, rng.randint(0, 400))
        for delimiter in ",;":
            for limit in (1, 3, 50, 10_000):
                expected = _records(text, delimiter, limit=limit)[0]
                assert _all_records(text, delimiter, limit=limit) == expected


def _amounts(rng: random.Random) -> list[Decimal]:
    out = [Decimal(0), Decimal("0.00"), Decimal("-0"), Decimal("0E+3")]
    for _ in range(100):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 34)))
        point = rng.randint(0, len(digits))
        text = (digits[:point] or "0") + "." + digits[point:] if rng.random() < 0.6 else digits
        value = Decimal(("-" if rng.random() < 0.2 else "") + text)
        out += [value, value * 10, value * 100, value * 1000, value.scaleb(-2), value.scaleb(-3)]
    return out


def test_pairs_agree_as_the_plain_rule_counts_them() -> None:
    rng = random.Random(43)
    amounts = _amounts(rng)
    for _ in range(2_000):
        totals: list[Decimal | None] = []
        sums: list[Decimal | None] = []
        for _ in range(rng.randint(0, 30)):
            total = rng.choice(amounts) if rng.random() > 0.1 else None
            other = rng.choice(amounts)
            if total is not None and rng.random() < 0.5:
                other = rng.choice([total, total * 100, total * 1000, total / 100, total / 1000])
            totals.append(total)
            sums.append(None if rng.random() < 0.1 else Decimal(0) + other)  # a sum
        compared = agreed = 0
        for total, paid_sum in zip(totals, sums, strict=True):
            if total is None or paid_sum is None:
                continue
            compared += 1
            agreed += total == paid_sum or _agrees(total, paid_sum)
        assert count_agreeing(totals, sums) == (compared, agreed), (totals, sums)


def test_references_may_name_a_key_as_their_possible_ids_say() -> None:
    rng = random.Random(44)
    chars = [*"#12 ,;|/&+-_aB.:\t\n", "\u00a0", "\u2028", "\x1c", "\u0663", "é"]
    for _ in range(500):
        values = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 8))) for _ in range(9)]
        values += rng.sample(["#1001", "1001", "#1002, #1001", "Order 7", "", "##12", "#"], 3)
        keys = {"".join(rng.choice("#12aB") for _ in range(rng.randint(0, 3))) for _ in range(4)}
        expected = not keys.isdisjoint(possible_ids(values))
        assert may_name(values, keys) == expected == may_name(set(values), keys)
