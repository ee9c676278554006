"""A tool's own failure (DuckDB out of memory, a bug) reaches the person as what failed, with a
reference to the log entry, instead of a turn that ended without a request; the log names the
error's type and the reference, never the error's text (it may quote a cell)."""

from __future__ import annotations

import logging
import re
from typing import Any

import duckdb
import pytest

import agent.runtime.tools as tools_module
from agent.domain import Approver
from agent.errors import WorkflowError

from .conftest import Demo, World, uploads

CELL = "SECRET-" + "CELL"  # a cell value the message quotes (not on the line that raises)
MESSAGE = f"failed to allocate 128.0 MiB near '{CELL}'"


def test_a_validation_that_fails_inside_the_bot_says_so_with_a_log_reference(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def out_of_memory(*_: Any, **__: Any) -> None:
        raise duckdb.OutOfMemoryException(MESSAGE)

    monkeypatch.setattr(tools_module, "validate", out_of_memory)
    caplog.set_level(logging.INFO)
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None
    assert request.kind.value == "clarification" and request.mapping is None
    [said] = [p for p in request.problems if "inside the bot" in p]
    assert said.startswith(
        "Validating the mapping failed inside the bot (OutOfMemoryException); nothing was "
        "decided and nothing was changed."
    )
    reference = re.search(r"ERR-[0-9A-F]{10}", said)
    assert reference is not None
    logged = [r.getMessage() for r in caplog.records if reference.group(0) in r.getMessage()]
    assert logged and "OutOfMemoryException" in logged[0]
    assert not any(CELL in r.getMessage() for r in caplog.records)


def test_a_reconciliation_that_fails_inside_the_bot_says_so_with_a_log_reference(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None and request.mapping is not None

    def out_of_memory(*_: Any, **__: Any) -> None:
        raise duckdb.OutOfMemoryException(MESSAGE)

    monkeypatch.setattr(tools_module, "reconciled", out_of_memory)
    caplog.set_level(logging.INFO)
    with pytest.raises(WorkflowError) as failed:
        world.service.decisions.confirm(
            request.pause_id, request.authorization_identity, Approver(user="bob")
        )
    said = str(failed.value)
    assert "Reconciling failed inside the bot (OutOfMemoryException)" in said, said
    reference = re.search(r"ERR-[0-9A-F]{10}", said)
    assert reference is not None
    assert any(reference.group(0) in r.getMessage() for r in caplog.records)
    assert not any(CELL in r.getMessage() for r in caplog.records)
    assert world.saved.outcome(started.investigation.id) is None
