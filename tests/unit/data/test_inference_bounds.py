"""Mapping inference is bounded: a file of hundreds of columns costs about what an export of
normal width does, an export of normal width reads exactly as before, and what inference has
no time left to compare it asks instead of guessing."""

from __future__ import annotations

import csv
import io
import random
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest

import agent.data.mapping.columns as columns_module
import agent.data.mapping.references as references_module
from agent.data.demo import generate
from agent.data.ingest import CsvSample, inspect_csv
from agent.data.mapping import Proposal, infer_mapping
from agent.data.mapping.bounds import CLOSE_CANDIDATES, COMPARED_CANDIDATES, Budget
from agent.data.mapping.references import References, _References, read_references
from agent.data.profile import (
    MIN_PROFILE_VALUES,
    PROFILE_CELLS,
    profile_depths,
    profile_sample,
    reference_tokens,
)
from agent.data.schema import Role
from agent.data.wording import words_of

MAX_BYTES = 1 << 30
WIDE = 400


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    generate(300, folder, seed=11)
    return folder


def _read(path: Path) -> CsvSample:
    return inspect_csv(path, path.name, max_bytes=MAX_BYTES)


def _widen(source: Path, target: Path, columns: int, seed: int) -> Path:
    """`source` with columns added up to `columns`: numbers, amounts, numbers that look like
    the demo's order ids, and ids unique to each cell, under headers that name no field."""
    rng = random.Random(seed)
    records = list(csv.reader(io.StringIO(source.read_text(encoding="utf-8-sig"))))
    header, rows = records[0], records[1:]
    extra = columns - len(header)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*header, *(f"extra {seed} {i}" for i in range(extra))])
    for r, row in enumerate(rows):
        cells = []
        for c in range(extra):
            cells.append(
                (
                    str(rng.randint(0, 99_999)),
                    f"{rng.randint(0, 9_999)}.{rng.randint(0, 99):02d}",
                    str(rng.randint(1_000, 1_000 + len(rows))),
                    f"X{r}-{c}",
                )[c % 4]
            )
        writer.writerow([*row, *cells])
    target.write_text(out.getvalue(), encoding="utf-8")
    return target


def _columns(proposal: Proposal) -> dict[str, str | None]:
    return {
        f"{role.value}.{c.field}": c.column for role in Role for c in proposal.dataset(role).choices
    }


def test_an_export_of_normal_width_is_profiled_to_full_depth() -> None:
    columns = [f"c{i}" for i in range(PROFILE_CELLS // 1000)]
    assert set(profile_depths(columns).values()) == {1000}


def test_a_wide_file_shares_the_profile_budget_named_columns_first() -> None:
    columns = [f"c{i}" for i in range(WIDE)]
    named = {"c3", "c10"}
    depths = profile_depths(columns, named)
    assert depths["c3"] == depths["c10"] == 1000
    assert min(depths.values()) >= MIN_PROFILE_VALUES
    assert sum(depths.values()) <= PROFILE_CELLS + MIN_PROFILE_VALUES * WIDE
    # Far wider: the named columns still come first, every other column reads the minimum.
    many = [f"c{i}" for i in range(5_000)]
    wide = profile_depths(many, {"c1"})
    assert wide.pop("c1") == 1000
    assert set(wide.values()) == {MIN_PROFILE_VALUES}
    # Every column named: they share the budget.
    assert set(profile_depths(columns, set(columns)).values()) == {PROFILE_CELLS // WIDE}


def test_a_wide_profile_reads_the_first_values_only(demo: Path, tmp_path: Path) -> None:
    sample = _read(_widen(demo / "orders.csv", tmp_path / "wide.csv", WIDE, seed=1))
    profiles = {p.name: p for p in profile_sample(sample, {"Total"})}
    assert profiles["Total"].profiled == min(1000, profiles["Total"].filled)
    assert profiles["extra 1 0"].profiled < 100
    # Counts over the whole sample stay exact.
    assert profiles["extra 1 0"].filled == len(sample.rows)


def test_a_wide_pair_gets_the_mapping_of_its_narrow_core_without_quadratic_work(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    narrow = infer_mapping(_read(demo / "orders.csv"), _read(demo / "payments.csv"))
    orders = _read(_widen(demo / "orders.csv", tmp_path / "orders.csv", WIDE, seed=1))
    payments = _read(_widen(demo / "payments.csv", tmp_path / "payments.csv", WIDE, seed=2))

    tokenized: list[str] = []

    def counting(values: Iterable[str]) -> References:
        found = read_references(values)
        tokenized.extend([*found.one, *found.many])
        return found

    # Every column's references are read by `read_references` (each distinct value once).
    monkeypatch.setattr(references_module, "read_references", counting)
    monkeypatch.setattr(columns_module, "read_references", counting)
    budget = Budget()
    started = time.thread_time()
    wide = infer_mapping(orders, payments, budget=budget)
    spent = time.thread_time() - started

    assert wide.mapping is not None
    assert _columns(wide) == _columns(narrow)
    assert not budget.spent, f"{spent:.1f} s of CPU"
    # Key overlap read at most the compared reference columns once, not every column pair.
    assert len(tokenized) <= COMPARED_CANDIDATES * len(payments.rows)


def test_a_spent_budget_asks_every_field_with_a_choice_instead_of_guessing(demo: Path) -> None:
    proposal = infer_mapping(
        _read(demo / "orders.csv"), _read(demo / "payments.csv"), budget=Budget(0)
    )

    assert proposal.mapping is None
    asked = {(c.role, c.field) for c in proposal.clarifications}
    assert (Role.ORDERS, "order_id") in asked
    assert (Role.PAYMENTS, "captured_amount") in asked
    for question in proposal.clarifications:
        assert len(question.choices) >= 2
        assert "too large to compare" in question.question
    for role in Role:
        dataset = proposal.dataset(role)
        assert any("too large to compare" in note for note in words_of(dataset.notes))
        for choice in dataset.choices:
            if (role, choice.field) in asked:
                assert choice.reason.startswith("not compared: ")
    # A field with one candidate only is no guess: its column is kept.
    currency = next(c for c in proposal.orders.choices if c.field == "currency")
    assert currency.column == "Currency"
    assert (Role.ORDERS, "currency") not in asked


def _payments_with_copies(tmp_path: Path, copies: int) -> Path:
    """A payments file whose order reference appears under `copies` headers that name it."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    refs = [f"Order ID {n}" for n in range(copies)]
    writer.writerow(["Transaction", "Amount", "Currency", "Status", "Created", *refs])
    for i in range(40):
        writer.writerow(
            [f"tx_{i:04d}", f"{10 + i}.50", "EUR", "paid", f"2024-03-{1 + i % 28:02d} 10:00"]
            + [f"#{1000 + i}"] * copies
        )
    path = tmp_path / f"payments_{copies}.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def _orders(tmp_path: Path) -> Path:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Order Number", "Total", "Currency", "Financial Status", "Created at"])
    for i in range(40):
        writer.writerow(
            [f"{1000 + i}", f"{10 + i}.50", "EUR", "paid", f"2024-03-{1 + i % 28:02d} 09:00"]
        )
    path = tmp_path / "orders.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_a_few_close_candidates_are_settled_by_the_data(tmp_path: Path) -> None:
    proposal = infer_mapping(_read(_orders(tmp_path)), _read(_payments_with_copies(tmp_path, 3)))
    assert not [c for c in proposal.clarifications if c.field == "order_id"]


def test_more_close_candidates_than_the_data_settles_are_asked(tmp_path: Path) -> None:
    copies = CLOSE_CANDIDATES + 4
    proposal = infer_mapping(
        _read(_orders(tmp_path)), _read(_payments_with_copies(tmp_path, copies))
    )
    question = next(c for c in proposal.clarifications if c.field == "order_id")
    assert question.role is Role.PAYMENTS
    assert len(question.choices) == CLOSE_CANDIDATES
    assert proposal.mapping is None


def test_key_overlap_counts_each_reference_as_often_as_it_occurs() -> None:
    rng = random.Random(5)
    values = [
        rng.choice(["#1001", " 1002 ", "1003", "#1001, #1004", "Order 1005 & 1006", "", "n/a"])
        for _ in range(500)
    ] + [f"#{n}" for n in range(2_000, 2_300)]
    keys = {"1001", "1003", "1005", "2005", "2100"}
    named = [tokens for tokens in (reference_tokens(v) for v in values) if tokens]
    exact = sum(1 for tokens in named if any(t in keys for t in tokens)) / len(named)

    assert _References.of(values, limit=len(values)).share_in(keys) == exact

    # A limit reads the first distinct references only, each counted as often as it occurs.
    first = _References.of(values, limit=3)
    seen = [v for v in Counter(values) if reference_tokens(v)][:3]
    assert first.total == sum(values.count(v) for v in seen)


def test_the_budget_counts_cpu_time_not_waiting() -> None:
    budget = Budget(0.05)
    time.sleep(0.2)  # waiting (another thread holding the GIL, say) does not spend it
    assert not budget.exhausted()
    deadline = time.thread_time() + 0.1
    while time.thread_time() < deadline:
        pass
    assert budget.exhausted()
    assert budget.exhausted()  # spent for good
