"""An edit decides the fields again on what the files' values said once.

`infer_mapping` compares two samples' values once per pair of sample objects and roles; an
edit's inference (the same samples, a person's answers) reuses that comparison. The proposal
must be the one a fresh inference of the same files under the same answers gives.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import agent.data.mapping.infer as infer_module
from agent.data.ingest import CsvSample, inspect_csv
from agent.data.mapping import infer_mapping
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
    proposed = infer_mapping(first, second)  # compares the values, as the upload does
    assert infer_mapping(first, second) == proposed
    for answers in _edits(pair):
        edited = infer_mapping(first, second, answers=answers)
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
    infer_mapping(first, second)
    infer_mapping(first, second, answers={Role.ORDERS: {"unit": "minor"}})
    infer_mapping(first, second, answers={Role.PAYMENTS: {"currency": "EUR"}})
    assert compared == [None]
    infer_mapping(first, second, answers={Role.ORDERS: {"orders_file": pair.payments.file}})
    assert compared == [None, False]  # the roles a person named: compared under them
    infer_mapping(*_samples(pair))  # other sample objects (of the same files)
    assert compared == [None, False, None]
    infer_mapping(first, second, budget=Budget())  # a budget of the caller's: its own work
    assert compared == [None, False, None, None]


def test_a_spent_budget_is_spent_for_the_edit_too(monkeypatch: pytest.MonkeyPatch) -> None:
    pair = PAIRS[0]
    first, second = _samples(pair)
    real = infer_module._compare

    def spending(
        first: CsvSample, second: CsvSample, chosen: bool | None, budget: Budget
    ) -> infer_module._Compared:
        return real(first, second, chosen, Budget(seconds=0.0))

    monkeypatch.setattr(infer_module, "_compare", spending)
    proposed = infer_mapping(first, second)
    edited = infer_mapping(first, second, answers={Role.ORDERS: {"unit": "minor"}})
    note = Budget(seconds=0.0).note
    for proposal in (proposed, edited):
        assert note in proposal.orders.notes and note in proposal.payments.notes


def test_files_are_in_the_fixtures() -> None:
    assert all(Path(FORMATS / pair.orders.file).exists() for pair in PAIRS)
