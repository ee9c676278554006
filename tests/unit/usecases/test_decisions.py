"""Decisions on a request: approve, reject, edit, expire, and whether a form may open.

What a person relies on: an approval is one transaction up to the claim and one for the outcome;
every refusal is recorded and raised with its reason code; a rejection names who rejected it and
why; an edit replaces the request it edits; looking whether a request is decidable records
nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from agent.data.schema import Role
from agent.domain import (
    ApprovalRequest,
    Approver,
    ApproverPolicy,
    InvestigationStatus,
    PauseState,
    PauseStatus,
    RefusalReason,
)
from agent.errors import ApprovalRefusedError, WorkflowError
from agent.usecases import UseCases

from .conftest import TTL, Demo, World, make_world

BOB = Approver(user="bob")
CAROL = Approver(user="carol")
EDIT = {Role.ORDERS: {"customer": "Email"}}


def refused(call: Callable[[], object]) -> ApprovalRefusedError:
    """The refusal `call` raised."""
    with pytest.raises(ApprovalRefusedError) as raised:
        call()
    return raised.value


def refusals(world: World, investigation_id: str) -> list[tuple[str, str, RefusalReason | None]]:
    """(action, actor, refusal) of each refused decision of a case, in order."""
    return [
        (d.action, d.actor, d.refusal) for d in world.decisions(investigation_id) if not d.accepted
    ]


def test_an_approval_is_one_unit_of_work_up_to_the_claim_and_one_for_the_outcome(
    world: World,
) -> None:
    request = world.start()
    mark = len(world.uow.log)
    seen: list[tuple[PauseState, PauseStatus, int]] = []

    def on_claimed(state: PauseState) -> None:
        seen.append(
            (state, world.status(request.pause_id), len(world.outcomes(request.investigation_id)))
        )

    outcome = world.service.decisions.confirm(
        request.pause_id, request.authorization_identity, BOB, on_claimed=on_claimed
    )

    units = world.uow.since(mark)
    assert all(unit.committed for unit in units)
    claim = units[0]
    assert claim.pause_locks == 1
    assert claim.pause_reads == 1
    assert claim.writes == [
        "pauses.claim",
        "decisions.approve:accepted",
        "investigations.status:reconciling",
    ]
    # Only that unit reads the pause: the guard's answer and the claim are one step.
    assert [unit for unit in units if unit.pause_reads] == [claim]
    settle = units[-1]
    assert settle.writes == ["pauses.consume", "outcomes.add", "investigations.status:completed"]
    # Between the two, only the agent's turn (its trace and conversation), no pause change.
    for unit in units[1:-1]:
        assert set(unit.writes) <= {"traces.add", "conversations.append"}, unit.writes
    assert world.uow.rollbacks == 0

    # The winner is told at once, before the outcome exists.
    assert len(seen) == 1
    claimed, status_then, outcomes_then = seen[0]
    assert claimed.status is PauseStatus.CLAIMED
    assert claimed.decided_by == "bob"
    assert claimed.decided_at == world.clock.now()
    assert (status_then, outcomes_then) == (PauseStatus.CLAIMED, 0)

    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.CONSUMED
    assert stored.state.decided_by == "bob"
    assert stored.claim_owner == world.service.deps.owner
    assert stored.attempts == 1
    assert world.outcomes(request.investigation_id) == [outcome]
    assert outcome.pause_id == request.pause_id
    assert outcome.mapping_digest == request.mapping_digest
    assert outcome.counts == world.demo.truth["findings"]
    assert world.investigation(request.investigation_id).status is InvestigationStatus.COMPLETED
    decisions = world.decisions(request.investigation_id)
    assert [(d.action, d.actor, d.accepted, d.refusal) for d in decisions] == [
        ("approve", "bob", True, None)
    ]


def test_an_approval_with_another_authorization_is_refused_and_recorded(world: World) -> None:
    request = world.start()
    mark = len(world.uow.log)
    error = refused(
        lambda: world.service.decisions.confirm(request.pause_id, "sha256:" + "0" * 64, BOB)
    )
    assert error.reason == RefusalReason.IDENTITY_MISMATCH
    assert "nothing was run" in str(error)
    (unit,) = world.uow.since(mark)  # one unit of work, and no agent turn
    assert unit.committed is True
    assert unit.pause_locks == 1
    assert unit.writes == ["decisions.approve:IDENTITY_MISMATCH"]
    assert world.status(request.pause_id) is PauseStatus.PENDING
    assert world.pause(request.pause_id).attempts == 0
    assert world.outcomes(request.investigation_id) == []
    assert refusals(world, request.investigation_id) == [
        ("approve", "bob", RefusalReason.IDENTITY_MISMATCH)
    ]
    assert (
        world.investigation(request.investigation_id).status
        is InvestigationStatus.AWAITING_DECISION
    )


def _approve(service: UseCases, request: ApprovalRequest, who: Approver) -> object:
    return service.decisions.confirm(request.pause_id, request.authorization_identity, who)


def _reject(service: UseCases, request: ApprovalRequest, who: Approver) -> object:
    return service.decisions.reject(request.pause_id, request.authorization_identity, who, "no")


def _edit(service: UseCases, request: ApprovalRequest, who: Approver) -> object:
    return service.decisions.edit(request.pause_id, request.authorization_identity, who, EDIT)


@pytest.mark.parametrize(
    ("action", "decide"),
    [("approve", _approve), ("reject", _reject), ("edit", _edit)],
)
def test_someone_not_on_the_approver_list_may_not_decide(
    tmp_path: Any,
    demo: Demo,
    action: str,
    decide: Callable[[UseCases, ApprovalRequest, Approver], object],
) -> None:
    world = make_world(tmp_path, demo, ApproverPolicy(approvers=("carol",)))
    request = world.start()
    assert request.approver_policy.approvers == ("carol",)
    mark = len(world.uow.log)

    error = refused(lambda: decide(world.service, request, BOB))

    assert error.reason == RefusalReason.NOT_AUTHORIZED
    assert "bob may not" in str(error) and "carol" in str(error)
    assert [unit.writes for unit in world.uow.since(mark)] == [
        [f"decisions.{action}:NOT_AUTHORIZED"]
    ]
    assert refusals(world, request.investigation_id) == [
        (action, "bob", RefusalReason.NOT_AUTHORIZED)
    ]
    assert world.status(request.pause_id) is PauseStatus.PENDING
    # The listed approver still may.
    decide(world.service, request, CAROL)
    assert (
        world.status(request.pause_id)
        is {
            "approve": PauseStatus.CONSUMED,
            "reject": PauseStatus.REJECTED,
            "edit": PauseStatus.SUPERSEDED,
        }[action]
    )


def test_approving_an_expired_request_is_refused_and_expires_it(world: World) -> None:
    request = world.start()
    world.clock.advance(TTL)  # expires_at itself is too late
    mark = len(world.uow.log)

    error = refused(lambda: _approve(world.service, request, BOB))

    assert error.reason == RefusalReason.EXPIRED
    (unit,) = world.uow.since(mark)
    assert unit.committed is True
    assert unit.writes == ["pauses.expire", "decisions.approve:EXPIRED"]
    assert world.status(request.pause_id) is PauseStatus.EXPIRED
    assert world.outcomes(request.investigation_id) == []
    # Asked again, the status alone refuses it; nothing more is expired.
    again = refused(lambda: _approve(world.service, request, CAROL))
    assert again.reason == RefusalReason.EXPIRED
    assert world.uow.log[-1].writes == ["decisions.approve:EXPIRED"]
    assert refusals(world, request.investigation_id) == [
        ("approve", "bob", RefusalReason.EXPIRED),
        ("approve", "carol", RefusalReason.EXPIRED),
    ]


def test_a_request_is_still_approvable_just_before_it_expires(world: World) -> None:
    request = world.start()
    world.clock.advance(TTL - timedelta(seconds=1))
    _approve(world.service, request, BOB)
    assert world.status(request.pause_id) is PauseStatus.CONSUMED


def test_expire_due_expires_pending_requests_once_their_time_is_up(world: World) -> None:
    request = world.start()
    assert world.service.decisions.expire_due() == []
    world.clock.advance(TTL)
    assert world.service.decisions.expire_due() == [request.pause_id]
    assert world.status(request.pause_id) is PauseStatus.EXPIRED
    assert world.pause(request.pause_id).state.reason == "no decision before the request expired"
    assert world.service.decisions.expire_due() == []


def test_approving_twice_is_refused_as_already_consumed(world: World) -> None:
    request = world.start()
    _approve(world.service, request, BOB)

    error = refused(lambda: _approve(world.service, request, CAROL))

    assert error.reason == RefusalReason.ALREADY_CONSUMED
    assert "already approved by bob" in str(error)
    assert len(world.outcomes(request.investigation_id)) == 1
    assert world.pause(request.pause_id).attempts == 1
    assert refusals(world, request.investigation_id) == [
        ("approve", "carol", RefusalReason.ALREADY_CONSUMED)
    ]


def test_two_simultaneous_approvals_run_one_reconciliation(world: World) -> None:
    request = world.start()
    barrier = threading.Barrier(2, timeout=60)
    results: dict[str, str] = {}

    def click(who: Approver) -> None:
        barrier.wait()
        try:
            _approve(world.service, request, who)
            results[who.user] = "RESUMED"
        except ApprovalRefusedError as error:
            results[who.user] = error.reason

    threads = [threading.Thread(target=click, args=(who,)) for who in (BOB, CAROL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)

    assert sorted(results) == ["bob", "carol"]
    winners = [user for user, result in results.items() if result == "RESUMED"]
    assert len(winners) == 1
    (loser,) = set(results) - set(winners)
    assert results[loser] in (RefusalReason.ALREADY_CLAIMED, RefusalReason.ALREADY_CONSUMED)
    assert len(world.outcomes(request.investigation_id)) == 1
    assert sum("pauses.claim" in unit.writes for unit in world.uow.log) == 1
    assert world.pause(request.pause_id).state.decided_by == winners[0]
    assert refusals(world, request.investigation_id) == [
        ("approve", loser, RefusalReason(results[loser]))
    ]


def test_rejecting_needs_a_reason_and_nothing_is_opened_without_one(world: World) -> None:
    request = world.start()
    mark = len(world.uow.log)
    with pytest.raises(WorkflowError, match="reason"):
        world.service.decisions.reject(
            request.pause_id, request.authorization_identity, BOB, "  \n "
        )
    assert world.uow.since(mark) == []
    assert world.status(request.pause_id) is PauseStatus.PENDING
    assert world.decisions(request.investigation_id) == []


def test_a_rejection_names_who_rejected_and_why(world: World) -> None:
    request = world.start()
    world.clock.advance(timedelta(minutes=5))
    mark = len(world.uow.log)

    state = world.service.decisions.reject(
        request.pause_id, request.authorization_identity, BOB, "  wrong export  "
    )

    assert state.status is PauseStatus.REJECTED
    assert state.decided_by == "bob"
    assert state.decided_at == world.clock.now()
    assert state.reason == "wrong export"
    assert world.pause(request.pause_id).state == state  # what was shown is what was saved
    (unit,) = world.uow.since(mark)
    assert unit.pause_locks == 1
    assert unit.writes == [
        "pauses.reject",
        "decisions.reject:accepted",
        "investigations.status:rejected",
    ]
    assert world.investigation(request.investigation_id).status is InvestigationStatus.REJECTED
    (decision,) = world.decisions(request.investigation_id)
    assert (decision.action, decision.actor, decision.reason, decision.accepted) == (
        "reject",
        "bob",
        "wrong export",
        True,
    )


def test_approving_a_rejected_request_is_refused_with_the_rejection(world: World) -> None:
    request = world.start()
    world.service.decisions.reject(
        request.pause_id, request.authorization_identity, BOB, "wrong export"
    )

    error = refused(lambda: _approve(world.service, request, CAROL))

    assert error.reason == RefusalReason.REJECTED
    assert "rejected by bob" in str(error) and "wrong export" in str(error)
    assert world.status(request.pause_id) is PauseStatus.REJECTED
    assert world.outcomes(request.investigation_id) == []
    assert refusals(world, request.investigation_id) == [
        ("approve", "carol", RefusalReason.REJECTED)
    ]
    # Nor can it be rejected again.
    again = refused(
        lambda: world.service.decisions.reject(
            request.pause_id, request.authorization_identity, CAROL, "me too"
        )
    )
    assert again.reason == RefusalReason.REJECTED
    assert world.pause(request.pause_id).state.reason == "wrong export"


@pytest.mark.parametrize(
    ("action", "decide"),
    [("approve", _approve), ("reject", _reject), ("edit", _edit)],
)
def test_a_decision_on_an_unknown_request_is_refused_and_recorded(
    world: World,
    action: str,
    decide: Callable[[UseCases, ApprovalRequest, Approver], object],
) -> None:
    real = world.start()
    ghost = real.model_copy(update={"pause_id": "PAUSE-0000000000"})
    mark = len(world.uow.log)

    error = refused(lambda: decide(world.service, ghost, BOB))

    assert error.reason == RefusalReason.UNKNOWN_PAUSE
    assert error.state is None
    assert "PAUSE-0000000000" in str(error)
    assert [unit.writes for unit in world.uow.since(mark)] == [
        [f"decisions.{action}:UNKNOWN_PAUSE"]
    ]
    with world.uow() as uow:  # recorded, under no investigation
        (decision,) = uow.decisions.of_investigation("")
        assert uow.decisions.of_investigation(real.investigation_id) == []
    assert decision.pause_id == "PAUSE-0000000000"
    assert (decision.action, decision.actor, decision.accepted) == (action, "bob", False)
    assert world.status(real.pause_id) is PauseStatus.PENDING


def test_an_edit_supersedes_the_request_it_edits(world: World) -> None:
    request = world.start()
    world.clock.advance(timedelta(minutes=1))
    mark = len(world.uow.log)

    edited = world.service.decisions.edit(
        request.pause_id, request.authorization_identity, BOB, EDIT
    )

    assert edited.pause_id != request.pause_id
    assert edited.revision == request.revision
    assert edited.answers == {Role.ORDERS: {"customer": "Email"}}
    assert edited.approvable
    units = [u for u in world.uow.since(mark) if u.writes]  # reads (the policy) left out
    # The edit is accepted and the edited request closed in one commit; the new one follows.
    assert sorted(units[0].writes) == ["decisions.edit:accepted", "pauses.supersede"]
    assert units[-1].writes == ["pauses.add", "investigations.status:awaiting_decision"]
    old = world.pause(request.pause_id).state
    assert old.status is PauseStatus.SUPERSEDED
    assert old.reason == "edited by bob: orders.customer=Email"
    assert world.status(edited.pause_id) is PauseStatus.PENDING
    (decision,) = world.decisions(request.investigation_id)
    assert (decision.action, decision.reason, decision.pause_id) == (
        "edit",
        "orders.customer=Email",
        request.pause_id,
    )

    error = refused(lambda: _approve(world.service, request, BOB))
    assert error.reason == RefusalReason.SUPERSEDED
    assert world.outcomes(request.investigation_id) == []
    _approve(world.service, edited, BOB)
    assert world.status(edited.pause_id) is PauseStatus.CONSUMED


def test_an_edit_naming_an_unknown_field_is_refused_and_records_nothing(world: World) -> None:
    request = world.start()
    mark = len(world.uow.log)
    with pytest.raises(WorkflowError, match="no field shoe_size"):
        world.service.decisions.edit(
            request.pause_id,
            request.authorization_identity,
            BOB,
            {Role.ORDERS: {"shoe_size": "Email"}},
        )
    (unit,) = world.uow.since(mark)
    assert unit.committed is False
    assert world.uow.rollbacks == 1
    assert world.decisions(request.investigation_id) == []
    assert world.status(request.pause_id) is PauseStatus.PENDING


def test_decidable_returns_a_pending_request_and_records_nothing(world: World) -> None:
    request = world.start()
    mark = len(world.uow.log)
    state = world.service.decisions.decidable(request.pause_id, request.authorization_identity)
    assert state.status is PauseStatus.PENDING
    assert state.request == request
    assert [unit.writes for unit in world.uow.since(mark)] == [[]]


def test_decidable_refuses_a_request_no_longer_pending_and_records_nothing(world: World) -> None:
    request = world.start()
    world.service.decisions.reject(request.pause_id, request.authorization_identity, BOB, "no")
    recorded = list(world.uow.store.decisions)
    audit = list(world.uow.store.audit)
    mark = len(world.uow.log)

    rejected = refused(lambda: world.service.decisions.decidable(request.pause_id))
    forged = refused(lambda: world.service.decisions.decidable(request.pause_id, "sha256:forged"))
    unknown = refused(lambda: world.service.decisions.decidable("PAUSE-0000000000"))

    assert rejected.reason == RefusalReason.REJECTED
    assert forged.reason == RefusalReason.REJECTED  # the status is checked first
    assert unknown.reason == RefusalReason.UNKNOWN_PAUSE
    assert all(unit.writes == [] for unit in world.uow.since(mark))
    assert world.uow.store.decisions == recorded
    assert world.uow.store.audit == audit


def test_decidable_refuses_another_authorization_and_an_expired_request(world: World) -> None:
    request = world.start()
    mark = len(world.uow.log)
    forged = refused(lambda: world.service.decisions.decidable(request.pause_id, "sha256:forged"))
    assert forged.reason == RefusalReason.IDENTITY_MISMATCH
    world.clock.advance(TTL)
    expired = refused(lambda: world.service.decisions.decidable(request.pause_id))
    assert expired.reason == RefusalReason.EXPIRED
    assert all(unit.writes == [] for unit in world.uow.since(mark))
    assert world.status(request.pause_id) is PauseStatus.PENDING  # looking expires nothing
    assert world.decisions(request.investigation_id) == []


def test_an_edited_request_cannot_be_approved_while_the_edit_is_being_made(
    world: World,
) -> None:
    request = world.start()
    during: list[object] = []

    class ApproveMeanwhile:
        """Progress that tries to approve the old request while the edit is being made."""

        def tool_started(self, tool: str) -> None:
            pass

        def tool_done(self, tool: str) -> None:
            if during:
                return
            try:
                during.append(_approve(world.service, request, CAROL))
            except ApprovalRefusedError as error:
                during.append(error.reason)

        def rows_read(self, file_name: str, rows: int, share: float) -> None:
            """Reading progress: nothing to do."""

    edited = world.service.decisions.edit(
        request.pause_id, request.authorization_identity, BOB, EDIT, progress=ApproveMeanwhile()
    )

    assert during == [RefusalReason.SUPERSEDED]
    assert world.outcomes(request.investigation_id) == []
    assert world.status(edited.pause_id) is PauseStatus.PENDING


def test_a_failing_on_claimed_does_not_strand_the_claim(world: World) -> None:
    request = world.start()

    def broken(state: PauseState) -> None:
        raise RuntimeError("could not show the approval")

    with pytest.raises(RuntimeError):
        world.service.decisions.confirm(
            request.pause_id, request.authorization_identity, BOB, on_claimed=broken
        )
    assert world.status(request.pause_id) is not PauseStatus.CLAIMED
