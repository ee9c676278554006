"""The examples a results message shows: the largest finding of each category first, then the
largest of those left, so a short list names every kind of finding (issue 38: the first ten
were all of the least informative kind)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agent.data.demo import generate
from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.pipeline import run_job
from agent.data.policy import CATEGORY_ORDER, Policy
from agent.data.reconcile.values import Finding
from agent.data.schema import Role


def _size(finding: Finding) -> Decimal:
    return abs(Decimal(finding.actual or "0") - Decimal(finding.expected or "0"))


@pytest.fixture(scope="module")
def reconciled(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    out = tmp_path_factory.mktemp("demo")
    generate(3_000, out, seed=5)
    files = {role: (out / f"{role.value}.csv", f"{role.value}.csv") for role in Role}
    proposal = infer_mapping(
        inspect_csv(out / "orders.csv", "orders.csv"),
        inspect_csv(out / "payments.csv", "payments.csv"),
    )
    assert proposal.mapping is not None
    job = run_job(files, proposal.mapping, Policy(), out / "exceptions.csv")
    return job.reconciliation


def test_the_examples_name_every_category_with_its_largest_finding(reconciled) -> None:  # type: ignore[no-untyped-def]
    counts = {c: n for c, n in reconciled.summary().counts.items() if n}
    assert len(counts) >= 8
    examples = reconciled.examples(len(counts))
    categories = [f.category for f in examples]
    assert categories == [c for c in CATEGORY_ORDER if c in counts], "one each, in order"
    for example in examples:
        same = reconciled.findings(example.category, limit=None)
        assert _size(example) == max(_size(f) for f in same)


def test_past_one_of_each_the_largest_left_follow(reconciled) -> None:  # type: ignore[no-untyped-def]
    counts = {c: n for c, n in reconciled.summary().counts.items() if n}
    examples = reconciled.examples(len(counts) + 5)
    assert len(examples) == len(counts) + 5
    firsts = {
        (f.category, tuple(f.order_ids), tuple(f.payment_ids)) for f in examples[: len(counts)]
    }
    rest = examples[len(counts) :]
    assert not firsts & {(f.category, tuple(f.order_ids), tuple(f.payment_ids)) for f in rest}


def test_examples_never_exceed_the_findings(reconciled) -> None:  # type: ignore[no-untyped-def]
    total = sum(reconciled.summary().counts.values())
    assert len(reconciled.examples(total + 100)) == total
