"""A confirmation request's sealed reconciliation reads the tables its validation loaded where
they are, borrowed from the edits and changing none of them: it loads nothing, an edit after it
still reads only the column it changed, and an edit while it runs stops it and goes on at once.
The results are byte for byte those of a bot that never seals."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import agent.data.reconcile.run as run_module
from agent.domain import Approver, Role

from .conftest import Demo, World, make_world
from .test_sealed_reconciliation import _export, _sealed_folder, _start, _wait_idle, _wait_sealed

BOB = Approver(user="bob")
CAROL = Approver(user="carol")
AMOUNT_EDIT = {Role.ORDERS: {"order_amount": "Subtotal"}}


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Role, ...]]:
    """The roles each load of a validation or a reconciliation loaded whole."""
    seen: list[tuple[Role, ...]] = []
    real = run_module.load_both

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(tuple(kwargs.get("roles", tuple(Role))))
        return real(*args, **kwargs)

    monkeypatch.setattr(run_module, "load_both", counting)
    return seen


def _edit_and_approve(world: World, demo: Demo, *, wait: bool) -> str:
    """Start, edit an amount column, approve the edited request; returns the case."""
    case, request = _start(world, demo)
    if wait:
        _wait_sealed(world, request.pause_id)
    edited = world.service.decisions.edit(
        request.pause_id, request.authorization_identity, BOB, AMOUNT_EDIT
    )
    if wait:
        _wait_sealed(world, edited.pause_id)
    world.service.decisions.confirm(edited.pause_id, edited.authorization_identity, CAROL)
    return case


def test_the_seal_reads_the_validated_tables_and_leaves_them_to_the_edit(
    database_url: str, tmp_path: Path, demo: Demo, loads: list[tuple[Role, ...]]
) -> None:
    sealed_world = make_world(database_url, tmp_path / "sealed")
    plain_world = make_world(database_url, tmp_path / "plain", seal=False)
    try:
        case = _edit_and_approve(sealed_world, demo, wait=True)
        assert [roles for roles in loads if roles] == [], "nothing loaded whole: not the seals"
        [run] = [e for e in sealed_world.saved.trace(case) if e.name == "reconcile"]
        assert run.detail is not None and run.detail.startswith("published the result sealed")

        other = _edit_and_approve(plain_world, demo, wait=False)
        assert _export(sealed_world, case) == _export(plain_world, other)
        published, computed = sealed_world.saved.outcome(case), plain_world.saved.outcome(other)
        assert published is not None and computed is not None
        assert published.summary == computed.summary
    finally:
        sealed_world.engine.dispose()
        plain_world.engine.dispose()


def test_an_edit_while_the_seal_runs_stops_it_and_goes_on_at_once(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch, loads: list[tuple[Role, ...]]
) -> None:
    running = threading.Event()
    real = run_module.run_engine

    def slow(con: Any, *args: Any, keep_inputs: bool = False) -> None:
        if keep_inputs:  # a seal: held in DuckDB until it is interrupted (about a minute)
            running.set()
            con.execute("SELECT sum(i * i) FROM range(20_000_000_000) t(i)").fetchall()
        real(con, *args, keep_inputs=keep_inputs)

    monkeypatch.setattr(run_module, "run_engine", slow)
    case, request = _start(world, demo)
    assert running.wait(30), "the seal did not start"

    began = time.monotonic()
    edited = world.service.decisions.edit(
        request.pause_id, request.authorization_identity, BOB, AMOUNT_EDIT
    )

    assert time.monotonic() - began < 30, "the edit waited for the seal to end by itself"
    assert [roles for roles in loads if roles] == [], "the tables came back as they were lent"
    assert not _sealed_folder(world, request.pause_id).exists()
    monkeypatch.setattr(run_module, "run_engine", real)
    _wait_idle(world)
    world.service.decisions.confirm(edited.pause_id, edited.authorization_identity, CAROL)
    outcome = world.saved.outcome(case)
    assert outcome is not None and outcome.export_digest is not None
