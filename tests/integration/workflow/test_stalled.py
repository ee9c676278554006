"""An inspection that never finished (the process died in the agent's turn) is found, marked
once, and can be investigated again from the stored files."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from agent.dependencies import Dependencies
from agent.domain import InvestigationStatus, PauseKind
from agent.usecases import build_use_cases
from tests.support.models import DyingModel

from .conftest import Demo, World, uploads


def test_a_dead_inspection_is_found_once_and_investigated_again(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    dying = build_use_cases(
        Dependencies(world.uow, world.blobs, DyingModel(), world.clock, world.service.deps.settings)
    )
    with pytest.raises(RuntimeError):
        dying.intake.start(
            uploads(demo.orders, demo.payments),
            requested_by="alice",
            channel="C1",
            thread_ts="1.1",
        )
    assert world.service.recovery.find_stalled() == [], "not before the lease has run out"

    world.clock.advance(world.service.deps.settings.claim_lease + timedelta(seconds=1))
    (stalled,) = world.service.recovery.find_stalled()
    assert stalled.thread_ts == "1.1"
    assert world.service.recovery.find_stalled() == [], "reported once"
    assert world.saved.investigation(stalled.id).status is InvestigationStatus.FAILED  # type: ignore[union-attr]

    request = world.service.intake.investigate_again(stalled.id, actor="alice")
    assert request.kind is PauseKind.CONFIRMATION
    assert world.saved.investigation(stalled.id).status is InvestigationStatus.AWAITING_DECISION  # type: ignore[union-attr]
    world.clock.advance(timedelta(hours=1))
    assert world.service.recovery.find_stalled() == [], "a case with its request is not stalled"
