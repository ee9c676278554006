"""Fixtures shared by the data engine's tests: a small demo pair and the mapping inferred for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agent.data.reconcile.run as run_module
from agent.data.demo import generate
from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.schema import Mapping, Role


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


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Role, ...]]:
    """The roles each load of the validation or the reconciliation read into its workspace."""
    seen: list[tuple[Role, ...]] = []
    real = run_module.load_both  # type: ignore[attr-defined]

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(tuple(kwargs.get("roles", tuple(Role))))
        return real(*args, **kwargs)

    monkeypatch.setattr(run_module, "load_both", counting)
    return seen
