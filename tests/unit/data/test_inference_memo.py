"""An edit decides the fields again on what the files' values said once.

With a memo (`Comparisons`, owned by the `SampleCache`), `infer_mapping` compares two samples'
values once per pair of sample objects and roles; an edit's inference (the same samples, a
person's answers) reuses that comparison. The proposal must be the one a fresh inference of
the same files under the same answers gives.
"""

from __future__ import annotations

import pytest

import agent.data.mapping.infer as infer_module
from agent.data.ingest import CsvSample, inspect_csv
from agent.data.mapping import Comparisons, infer_mapping
from agent.data.mapping.bounds import Budget
from agent.data.schema import Role
from tests.unit.data.test_export_formats import FORMATS, LIMIT, PAIRS, Pair


def _samples(pair: Pair) -> tuple[CsvSample, CsvSample]:
    """New sample objects of the pair's files (payments first: roles come from content)."""
    payments, orders = FORMATS / pair.payments.file, FORMATS / pair.orders.file
    return (
        inspect_csv(payments, payments.name, max_bytes=LIMIT),
        inspect_csv(orders, orders.name, max_bytes=LIMIT),
    )


def _edits(pair: Pair) -> list[dict[Role, dict[str, str]]]:
    """Edits a person could make of the pair's proposal: another column for the customer, the
    amount unit, a default currency, the roles named, a field given and a text field at once."""
    orders = inspect_csv(FORMATS / pair.orders.file, pair.orders.file, max_bytes=LIMIT)
    unused = [c for c in orders.layout.columns if c not in pair.orders.columns.values()]
    edits: list[dict[Role, dict[str, str]]] = [
        {Role.ORDERS: {"unit": "minor"}},
        {Role.PAYMENTS: {"currency": "EUR"}},
        {Role.ORDERS: {"orders_file": pair.orders.file}},
        {
            Role.ORDERS: {"order_id": pair.orders.columns["order_id"]},
            Role.PAYMENTS: {"captured_amount": pair.payments.columns["captured_amount"]},
        },
    ]
    if unused:
        edits.append({Role.ORDERS: {"customer": unused[0]}})
    return edits


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair.name)
def test_an_edit_on_remembered_comparisons_is_a_fresh_inference(pair: Pair) -> None:
    first, second = _samples(pair)
    memo = Comparisons()
    proposed = infer_mapping(first, second, memo=memo)  # compares the values, as the upload
    assert infer_mapping(first, second, memo=memo) == proposed == infer_mapping(first, second)
    for answers in _edits(pair):
        edited = infer_mapping(first, second, answers=answers, memo=memo)
        assert edited == infer_mapping(*_samples(pair), answers=answers), answers


def test_the_values_are_compared_once_per_pair_and_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[bool | None] = []
    real = infer_module._compare

    def counting(
        first: CsvSample, second: CsvSample, chosen: bool | None, budget: Budget
    ) -> infer_module._Compared:
        compared.append(chosen)
        return real(first, second, chosen, budget)

    monkeypatch.setattr(infer_module, "_compare", counting)
    pair = PAIRS[0]
    first, second = _samples(pair)
    memo = Comparisons()
    infer_mapping(first, second, memo=memo)
    infer_mapping(first, second, answers={Role.ORDERS: {"unit": "minor"}}, memo=memo)
    infer_mapping(first, second, answers={Role.PAYMENTS: {"currency": "EUR"}}, memo=memo)
    assert compared == [None]
    named = {Role.ORDERS: {"orders_file": pair.payments.file}}
    infer_mapping(first, second, answers=named, memo=memo)
    assert compared == [None, False]  # the roles a person named: compared under them
    infer_mapping(first, second, answers=named, memo=memo)
    infer_mapping(first, second, memo=memo)
    assert compared == [None, False]  # both kept: one case, its roles chosen either way
    infer_mapping(*_samples(pair), memo=memo)  # other sample objects (of the same files)
    assert compared == [None, False, None]
    infer_mapping(first, second, budget=Budget(), memo=memo)  # the caller's budget: its own
    infer_mapping(first, second)  # no memo: nothing kept, nothing reused
    assert compared == [None, False, None, None, None]


def test_a_memo_keeps_the_latest_pairs_only() -> None:
    memo = Comparisons(size=1)
    pairs = [_samples(pair) for pair in PAIRS[:2]]
    for first, second in pairs:
        infer_mapping(first, second, memo=memo)
    kept = list(memo._kept._found.values())
    assert len(kept) == 1 and kept[0][0][0]() is pairs[1][0]


def test_the_steps_after_a_kept_comparison_get_what_it_left_of_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[tuple[float, float]] = []

    class Recorded(Budget):
        def __init__(self, seconds: float = 5.0, *, used: float = 0.0) -> None:
            made.append((seconds, used))
            super().__init__(seconds, used=used)

    monkeypatch.setattr(infer_module, "Budget", Recorded)
    first, second = _samples(PAIRS[0])
    memo = Comparisons()
    infer_mapping(first, second, memo=memo)
    infer_mapping(first, second, answers={Role.ORDERS: {"unit": "minor"}}, memo=memo)
    # The comparison's own budget, then one for each inference's field decisions with the
    # CPU time the comparison used taken off (the same both times).
    assert [used > 0 for _, used in made] == [False, True, True]
    assert made[1] == made[2]
    assert Budget(5.0, used=5.0).exhausted() and not Budget(5.0).exhausted()


def test_a_spent_budget_is_spent_for_the_edit_too(monkeypatch: pytest.MonkeyPatch) -> None:
    pair = PAIRS[0]
    first, second = _samples(pair)
    real = infer_module._compare

    def spending(
        first: CsvSample, second: CsvSample, chosen: bool | None, budget: Budget
    ) -> infer_module._Compared:
        return real(first, second, chosen, Budget(seconds=0.0))

    monkeypatch.setattr(infer_module, "_compare", spending)
    memo = Comparisons()
    proposed = infer_mapping(first, second, memo=memo)
    edited = infer_mapping(first, second, answers={Role.ORDERS: {"unit": "minor"}}, memo=memo)
    note = Budget(seconds=0.0).note
    for proposal in (proposed, edited):
        assert note in proposal.orders.notes and note in proposal.payments.notes
