"""Demo data at 100k orders: inference needs no clarification and the counts equal truth.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.data.demo import CATEGORY_IDS, generate, stray_reference
from agent.data.evident_reading import propose_by_evidence
from agent.data.ingest import inspect_csv
from agent.data.normalize import ValidationReport
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Mapping, Role
from agent.data.wording import words_of


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    generate(100_000, out, seed=11)
    return out


def test_demo_data_is_deterministic(tmp_path: Path) -> None:
    generate(300, tmp_path / "a", seed=3)
    generate(300, tmp_path / "b", seed=3)
    for name in ("orders.csv", "payments.csv", "truth.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "orders.csv").read_bytes().startswith(b"\xef\xbb\xbf")


def test_100k_orders_reconcile_to_exactly_the_truth(demo: Path, tmp_path: Path) -> None:
    truth = json.loads((demo / "truth.json").read_text())
    assert set(truth["findings"]) == set(CATEGORY_IDS)
    new_in_ledger = {"unreadable_row", "conflicting_duplicate_order"}
    assert all(count > 0 for c, count in truth["findings"].items() if c not in new_in_ledger)
    limit = 1 << 30
    samples = (
        inspect_csv(demo / "payments.csv", "payments.csv", max_bytes=limit),
        inspect_csv(demo / "orders.csv", "orders.csv", max_bytes=limit),
    )
    files = {
        Role.ORDERS: (demo / "orders.csv", "orders.csv"),
        Role.PAYMENTS: (demo / "payments.csv", "payments.csv"),
    }

    def validate(mapping: Mapping) -> ValidationReport:
        return load_and_validate(connect(), files, mapping, policy=Policy())

    # A few references typed by hand in lower case (` sh1042 `): the files show that ids are
    # compared in any case, and the bot proposes it with the figure, asking nothing.
    proposal, report = propose_by_evidence(samples, validate)
    assert proposal.clarifications == []
    assert report is not None
    mapping = proposal.mapping
    assert mapping is not None
    assert report.ok
    assert report.warnings == []
    [proposed] = [
        f for f in words_of(report.facts) if f.startswith("Proposed from the files, not asked")
    ]
    assert "ids compared in any case" in proposed
    result = run_job(files, mapping, Policy(), tmp_path / "exceptions.csv")
    summary = result.reconciliation.summary()
    assert summary.counts == truth["findings"]
    assert summary.orders == truth["orders"]
    assert summary.order_rows == truth["order_rows"]
    assert summary.payment_rows == truth["payment_rows"]
    orders_ledger, payments_ledger = summary.ledger
    assert orders_ledger.records == truth["order_rows"] == orders_ledger.accounted
    assert payments_ledger.records == truth["payment_rows"] == payments_ledger.accounted
    assert orders_ledger.unreadable == payments_ledger.unreadable == {}
    ignored = sum(orders_ledger.ignored.values()) + sum(payments_ledger.ignored.values())
    assert result.exported == sum(truth["findings"].values()) + ignored
    assert result.digests[Role.ORDERS].startswith("sha256:")


def test_a_stray_capture_never_names_a_real_order_even_in_ten_million_orders() -> None:
    largest = 1000 + 10_000_000  # order numbers run from #1001
    for number in (1001, 9_000_001, largest):
        stray = int(stray_reference(number).lstrip("#"))
        assert stray > largest
