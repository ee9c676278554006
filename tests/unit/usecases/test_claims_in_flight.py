"""A claim this process is still working on is never taken over by its own recovery, and a
case whose edit turn died is found and offered again (found by a red-team pass)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent.data.schema import Role
from agent.domain import Approver, PauseState, PauseStatus

from .conftest import LEASE, World


def test_recovery_leaves_a_claim_this_process_is_still_running(world: World) -> None:
    request = world.start()
    seen: dict[str, object] = {}

    def claimed(state: PauseState) -> None:
        # The reconciliation runs long: its lease runs out, and this process's sweep recovers.
        world.clock.advance(LEASE + timedelta(seconds=1))
        seen["recovered"] = world.service.recovery.recover()
        seen["attempts"] = world.pause(request.pause_id).attempts

    outcome = world.service.decisions.confirm(
        request.pause_id, request.authorization_identity, Approver(user="bob"), on_claimed=claimed
    )
    assert seen == {"recovered": [], "attempts": 1}
    assert outcome.pause_id == request.pause_id
    assert world.status(request.pause_id) is PauseStatus.CONSUMED
    assert len(world.outcomes(request.investigation_id)) == 1
    # Once settled, nothing is left for recovery either.
    world.clock.advance(LEASE * 2)
    assert world.service.recovery.recover() == []


def test_a_case_whose_edit_turn_died_is_found_and_offered_again(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = world.start()

    def dies(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the process died in the edit's turn")

    monkeypatch.setattr(world.service.decisions.turns, "investigate", dies)
    with pytest.raises(RuntimeError):
        world.service.decisions.edit(
            request.pause_id,
            request.authorization_identity,
            Approver(user="bob"),
            {Role.ORDERS: {"customer": "Email"}},
        )
    monkeypatch.undo()
    assert world.service.queries.pending_request(request.investigation_id) is None
    assert world.service.recovery.find_stalled() == [], "not while the turn may still run"

    world.clock.advance(LEASE + timedelta(seconds=1))
    (stalled,) = world.service.recovery.find_stalled()
    assert stalled.id == request.investigation_id
    assert world.service.recovery.find_stalled() == [], "reported once"
    again = world.service.intake.investigate_again(request.investigation_id, actor="bob")
    assert world.status(again.pause_id) is PauseStatus.PENDING
