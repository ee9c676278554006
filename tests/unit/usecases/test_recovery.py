"""Recovery: an approval whose process died is finished or reported failed, never lost or run
twice; a unit of work that fails leaves nothing; an inspection that died is reported once."""

from __future__ import annotations

from datetime import timedelta
from typing import BinaryIO

import pytest

from agent.domain import (
    ApprovalRequest,
    Approver,
    Investigation,
    InvestigationStatus,
    PauseStatus,
    RefusalReason,
    Revision,
)
from agent.errors import ApprovalRefusedError, StorageError, WorkflowError
from agent.pause import Transition
from agent.ports import Claim, StoredBlob
from agent.usecases.recovery import MAX_RECOVERY_ATTEMPTS
from agent.usecases.resumption import RETRY_REASON

from .conftest import CHANGED_POLICY, LEASE, World

BOB = Approver(user="bob")
DEAD = "elsewhere:1:dead"


def _crash_after_claim(world: World, request: ApprovalRequest, *, retried: bool = False) -> None:
    """As if the process that approved `request` died mid-resume: claimed, lease run out (and,
    with `retried`, taken over once already by a recovery that died too)."""
    now = world.clock.now()
    gone = Claim(DEAD, now - timedelta(seconds=1))
    with world.uow() as uow:
        assert uow.pauses.apply(
            request.pause_id, Transition.CLAIM, actor=BOB.user, at=now, claim=gone
        )
        if retried:
            assert uow.pauses.apply(
                request.pause_id,
                Transition.TAKE_OVER,
                actor="recovery",
                at=now,
                claim=gone,
                owner=DEAD,
            )
        uow.investigations.set_status(
            request.investigation_id, InvestigationStatus.RECONCILING, actor=BOB.user
        )


def test_a_failed_unit_of_work_leaves_nothing_and_recovery_finishes_the_claim(
    world: World,
) -> None:
    request = world.start()
    world.uow.fail_once("outcomes.add", OSError("disk full"))

    with pytest.raises(OSError, match="disk full"):
        world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)

    # The unit that would consume the pause and save the outcome rolled back as a whole.
    settle = world.uow.log[-1]
    assert settle.committed is False
    assert settle.writes == ["pauses.consume"]  # written, then undone
    assert world.uow.rollbacks == 1
    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.CLAIMED
    assert stored.claim_owner == world.service.deps.owner
    assert stored.attempts == 1
    assert world.outcomes(request.investigation_id) == []
    assert world.investigation(request.investigation_id).status is InvestigationStatus.RECONCILING
    assert not any(e["event"] in ("pause_consumed", "outcome_saved") for e in world.uow.store.audit)

    # While its lease runs, the claim is its owner's: recovery leaves it alone.
    world.clock.advance(LEASE - timedelta(seconds=1))
    mark = len(world.uow.log)
    assert world.service.recovery.recover() == []
    assert all(unit.writes == [] for unit in world.uow.since(mark))

    # Once the lease ran out, the recorded approval is re-run under the same pause.
    world.clock.advance(timedelta(seconds=1))
    assert world.service.recovery.recover() == [request.pause_id]
    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.CONSUMED
    assert stored.state.decided_by == "bob"
    assert stored.attempts == 2
    (outcome,) = world.outcomes(request.investigation_id)
    assert outcome.pause_id == request.pause_id
    assert outcome.counts == world.demo.truth["findings"]
    assert world.investigation(request.investigation_id).status is InvestigationStatus.COMPLETED
    assert world.service.recovery.recover() == []


def test_a_claim_of_a_dead_process_is_taken_over_re_run_and_consumed(world: World) -> None:
    request = world.start()
    _crash_after_claim(world, request)
    mark = len(world.uow.log)

    assert world.service.recovery.recover() == [request.pause_id]

    take_over = next(unit for unit in world.uow.since(mark) if unit.writes)
    assert take_over.writes == ["pauses.take_over", "investigations.status:reconciling"]
    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.CONSUMED
    assert stored.claim_owner == world.service.deps.owner
    assert stored.attempts == 2
    (outcome,) = world.outcomes(request.investigation_id)
    assert outcome.counts == world.demo.truth["findings"]
    recovered = [e for e in world.uow.store.audit if e["event"] == "claim_recovered"]
    assert [e["detail"]["previous_owner"] for e in recovered] == [DEAD]
    assert world.decisions(request.investigation_id) == []  # nothing refused
    with world.uow() as uow:
        assert uow.pauses.claims() == []


def test_an_interrupted_approval_is_not_re_run_under_a_changed_policy(world: World) -> None:
    request = world.start()
    _crash_after_claim(world, request)
    after_restart = world.use_cases(policy=CHANGED_POLICY)
    assert after_restart.deps.settings.policy.version != request.policy_version

    assert after_restart.recovery.recover() == [request.pause_id]

    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.FAILED
    assert stored.state.reason is not None and "policy changed" in stored.state.reason
    assert stored.claim_owner == after_restart.deps.owner
    assert world.outcomes(request.investigation_id) == []
    assert world.investigation(request.investigation_id).status is InvestigationStatus.FAILED
    decisions = world.decisions(request.investigation_id)
    assert [(d.action, d.actor, d.accepted, d.refusal) for d in decisions] == [
        ("resume", "reconbot", False, RefusalReason.POLICY_CHANGED)
    ]
    assert after_restart.recovery.recover() == []  # reported once

    # Approving it again is refused for the same reason, and recorded.
    with pytest.raises(ApprovalRefusedError) as refused:
        after_restart.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert refused.value.reason == RefusalReason.POLICY_CHANGED
    assert world.status(request.pause_id) is PauseStatus.FAILED
    assert [d.refusal for d in world.decisions(request.investigation_id)] == [
        RefusalReason.POLICY_CHANGED,
        RefusalReason.POLICY_CHANGED,
    ]


def test_a_claim_already_retried_is_failed_and_a_person_may_retry_it(world: World) -> None:
    request = world.start()
    _crash_after_claim(world, request, retried=True)
    assert world.pause(request.pause_id).attempts == MAX_RECOVERY_ATTEMPTS

    assert world.service.recovery.recover() == [request.pause_id]

    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.FAILED
    assert stored.state.reason == RETRY_REASON
    assert world.outcomes(request.investigation_id) == []  # not re-run a third time
    assert world.investigation(request.investigation_id).status is InvestigationStatus.FAILED
    assert world.decisions(request.investigation_id) == []
    assert world.service.recovery.recover() == []  # a failed request is not a claim

    # Approving a failed request again is the retry: a new claim, run, consumed.
    outcome = world.service.decisions.confirm(
        request.pause_id, request.authorization_identity, Approver(user="carol")
    )
    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.CONSUMED
    assert stored.state.decided_by == "carol"
    # Counted: the claim, the first take-over, recovery's take-over (which only failed it), and
    # the retry's claim.
    assert stored.attempts == MAX_RECOVERY_ATTEMPTS + 2
    assert world.outcomes(request.investigation_id) == [outcome]


def test_a_resumed_phase_that_fails_marks_the_request_failed_for_a_retry(world: World) -> None:
    request = world.start()
    world.uow.fail_once("conversations.load", RuntimeError("the model went away"))

    with pytest.raises(RuntimeError, match="went away"):
        world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)

    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.FAILED
    assert stored.state.reason == RETRY_REASON
    assert world.investigation(request.investigation_id).status is InvestigationStatus.FAILED
    assert world.outcomes(request.investigation_id) == []
    assert world.service.recovery.recover() == []  # a failed request is not a claim

    world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert world.status(request.pause_id) is PauseStatus.CONSUMED
    assert world.pause(request.pause_id).attempts == 2
    assert len(world.outcomes(request.investigation_id)) == 1


def test_an_inspection_that_never_finished_is_reported_once(world: World) -> None:
    request = world.start()  # a case with its request: not stalled
    files = {ref.role: ref for ref in request.files}
    now = world.clock.now()
    stalled = Investigation(
        id="INV-STALLED000",
        status=InvestigationStatus.AWAITING_FILE,
        requested_by="dave",
        channel=None,
        thread_ts=None,
        revision=1,
        created_at=now,
    )
    revision = Revision(
        investigation_id=stalled.id,
        number=1,
        files=files,
        input_identity=request.input_identity,
        created_at=now,
    )
    with world.uow() as uow:
        uow.investigations.add(stalled, revision)

    assert world.service.recovery.find_stalled() == []  # it may still be running
    world.clock.advance(LEASE)
    found = world.service.recovery.find_stalled()
    assert [i.id for i in found] == [stalled.id]
    assert world.investigation(stalled.id).status is InvestigationStatus.FAILED
    assert (
        world.investigation(request.investigation_id).status
        is InvestigationStatus.AWAITING_DECISION
    )
    assert world.service.recovery.find_stalled() == []


def test_a_process_that_lost_its_claim_cannot_complete_it(world: World) -> None:
    request = world.start()
    other = Claim("elsewhere:2:alive", world.clock.now() + LEASE)

    def taken_over_meanwhile(state: object) -> None:
        # Another process's recovery takes the claim over while this one reconciles.
        with world.uow() as uow:
            assert uow.pauses.apply(
                request.pause_id,
                Transition.TAKE_OVER,
                actor="elsewhere",
                at=world.clock.now(),
                claim=other,
                owner=world.service.deps.owner,
            )

    with pytest.raises(ApprovalRefusedError) as refused:
        world.service.decisions.confirm(
            request.pause_id,
            request.authorization_identity,
            BOB,
            on_claimed=taken_over_meanwhile,
        )

    assert refused.value.reason == RefusalReason.ALREADY_CONSUMED
    stored = world.pause(request.pause_id)
    assert stored.state.status is PauseStatus.CLAIMED
    assert stored.claim_owner == other.owner
    assert world.outcomes(request.investigation_id) == []
    assert world.uow.log[-1].writes == []  # its consume found the claim gone: nothing written


def test_an_export_that_cannot_be_stored_reports_nothing_and_a_retry_stores_it(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exceptions CSV is stored while the summary is read: when storing it fails, no
    outcome is saved (an outcome names its export), the request is failed for a retry, and
    the retry stores the export that the outcome names."""
    request = world.start()
    put = world.blobs.put

    def disk_full(stream: BinaryIO, *, max_bytes: int | None = None) -> StoredBlob:
        raise StorageError("The file store failed while storing (no space left on device).")

    monkeypatch.setattr(world.blobs, "put", disk_full)
    with pytest.raises(WorkflowError, match="no space left"):
        world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)

    assert world.status(request.pause_id) is PauseStatus.FAILED
    assert world.outcomes(request.investigation_id) == []

    monkeypatch.setattr(world.blobs, "put", put)
    world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    [outcome] = world.outcomes(request.investigation_id)
    assert outcome.export_digest is not None
    assert world.blobs.exists(outcome.export_digest)
    assert outcome.export_rows > 0
