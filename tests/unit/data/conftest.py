"""Fixtures shared by the data engine's tests: a small demo pair and the mapping inferred for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.data.demo import generate
from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.schema import Mapping


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a 2,000-order demo pair (`orders.csv`, `payments.csv`)."""
    out = tmp_path_factory.mktemp("demo")
    generate(2_000, out, seed=5)
    return out


@pytest.fixture(scope="module")
def mapping(demo: Path) -> Mapping:
    """The mapping inference proposes for the demo pair, as the bot would ask to approve it."""
    proposal = infer_mapping(
        inspect_csv(demo / "orders.csv", "orders.csv"),
        inspect_csv(demo / "payments.csv", "payments.csv"),
    )
    assert proposal.mapping is not None
    return proposal.mapping
