"""Intake: a case starts on its files, a changed file replaces the request in the same unit of
work as the new revision, a byte-identical re-upload changes nothing."""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta

import pytest

from agent.data.schema import Role
from agent.domain import Approver, InvestigationStatus, PauseKind, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError, UnknownInvestigationError, WorkflowError
from agent.usecases.common import Upload

from .conftest import CHANGED_POLICY, World, uploads

BOB = Approver(user="bob")


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_a_case_on_both_files_ends_on_one_pending_confirmation(world: World) -> None:
    mark = len(world.uow.log)
    started = world.service.intake.start(
        uploads(world.demo.orders, world.demo.payments), requested_by="alice", channel="C1"
    )

    request = started.request
    assert request is not None
    assert started.missing is None
    assert request.kind is PauseKind.CONFIRMATION
    assert request.approvable
    assert request.revision == 1
    assert request.requested_by == "alice"
    assert request.expires_at - request.created_at == timedelta(hours=24)
    assert request.policy_version == world.service.deps.settings.policy.version
    digests = {ref.role: ref.digest for ref in request.files}
    assert digests == {
        Role.ORDERS: _sha256(world.demo.orders.read_bytes()),
        Role.PAYMENTS: _sha256(world.demo.payments.read_bytes()),
    }
    assert started.investigation.status is InvestigationStatus.AWAITING_DECISION
    units = [u for u in world.uow.since(mark) if u.writes]  # the channel's policy: a read
    assert units[0].writes == ["investigations.add"]
    # The request, the case's status and (had there been one) the superseding: one unit.
    assert [u.writes for u in units if "pauses.add" in u.writes] == [
        ["pauses.add", "investigations.status:awaiting_decision"]
    ]
    with world.uow() as uow:
        states = uow.pauses.of_investigation(request.investigation_id)
    assert [(s.request, s.status) for s in states] == [(request, PauseStatus.PENDING)]


def test_a_case_on_one_file_waits_for_the_other_then_asks(world: World) -> None:
    mark = len(world.uow.log)
    started = world.service.intake.start(uploads(world.demo.orders), requested_by="alice")

    assert started.request is None
    assert started.missing is Role.PAYMENTS
    case = started.investigation.id
    assert world.investigation(case).status is InvestigationStatus.AWAITING_FILE
    writes = [u.writes for u in world.uow.since(mark) if u.writes]  # the policy: a read
    assert writes == [["investigations.add"]]  # no turn
    assert world.uow.store.pauses == {}

    (payments,) = uploads(world.demo.payments)
    added = world.service.intake.add_file(case, payments, actor="alice")

    assert not added.unchanged
    assert (added.role, added.revision, added.superseded) == (Role.PAYMENTS, 2, [])
    assert added.request is not None
    assert added.request.revision == 2
    assert added.investigation.status is InvestigationStatus.AWAITING_DECISION
    assert world.status(added.request.pause_id) is PauseStatus.PENDING


def test_a_changed_file_supersedes_the_pending_request_with_the_new_revision(
    world: World,
) -> None:
    request = world.start()
    case = request.investigation_id
    world.clock.advance(timedelta(minutes=3))
    mark = len(world.uow.log)

    added = world.service.intake.add_file(
        case,
        Upload(io.BytesIO(world.demo.other_payments.read_bytes()), "payments.csv"),
        actor="bob",
    )

    assert not added.unchanged
    assert (added.role, added.revision, added.superseded) == (Role.PAYMENTS, 2, [request.pause_id])
    units = world.uow.since(mark)
    # The new revision and the superseding of the request it replaces: one committed unit.
    (revision_unit,) = [u for u in units if "investigations.add_revision" in u.writes]
    assert revision_unit.committed is True
    # Pauses before the case: the lock order every decision follows (no deadlock).
    assert revision_unit.writes == ["pauses.supersede", "investigations.add_revision"]
    old = world.pause(request.pause_id).state
    assert old.status is PauseStatus.SUPERSEDED
    assert old.reason == "superseded by revision 2"

    new = added.request
    assert new is not None
    assert new.revision == 2
    assert new.input_identity != request.input_identity
    assert {ref.role: ref.digest for ref in new.files}[Role.PAYMENTS] == _sha256(
        world.demo.other_payments.read_bytes()
    )
    assert world.status(new.pause_id) is PauseStatus.PENDING
    assert world.investigation(case).revision == 2

    with pytest.raises(ApprovalRefusedError) as refused:
        world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert refused.value.reason == RefusalReason.SUPERSEDED
    assert world.outcomes(case) == []
    outcome = world.service.decisions.confirm(new.pause_id, new.authorization_identity, BOB)
    assert outcome.revision == 2
    assert outcome.input_identity == new.input_identity


def test_a_byte_identical_re_upload_changes_nothing(world: World) -> None:
    request = world.start()
    case = request.investigation_id
    store_before = (
        dict(world.uow.store.investigations),
        {k: list(v) for k, v in world.uow.store.revisions.items()},
        {k: p.state for k, p in world.uow.store.pauses.items()},
        list(world.uow.store.audit),
    )
    mark = len(world.uow.log)

    (again,) = uploads(world.demo.payments)
    added = world.service.intake.add_file(case, again, actor="bob")

    assert added.unchanged
    assert (added.role, added.revision, added.superseded, added.request) == (
        Role.PAYMENTS,
        1,
        [],
        None,
    )
    assert all(u.writes == [] for u in world.uow.since(mark))
    assert store_before == (
        dict(world.uow.store.investigations),
        {k: list(v) for k, v in world.uow.store.revisions.items()},
        {k: p.state for k, p in world.uow.store.pauses.items()},
        list(world.uow.store.audit),
    )
    world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert world.status(request.pause_id) is PauseStatus.CONSUMED


def test_a_file_for_an_unknown_case_is_refused_before_it_is_stored(world: World) -> None:
    data = world.demo.payments.read_bytes()
    mark = len(world.uow.log)
    with pytest.raises(UnknownInvestigationError, match="INV-NOSUCHCASE"):
        world.service.intake.add_file(
            "INV-NOSUCHCASE", Upload(io.BytesIO(data), "payments.csv"), actor="bob"
        )
    assert not world.blobs.exists(_sha256(data))
    assert all(u.writes == [] for u in world.uow.since(mark))


def test_investigating_again_is_refused_while_the_revision_has_a_current_request(
    world: World,
) -> None:
    request = world.start()
    mark = len(world.uow.log)
    with pytest.raises(WorkflowError, match=request.pause_id):
        world.service.intake.investigate_again(request.investigation_id, actor="alice")
    assert all(u.writes == [] for u in world.uow.since(mark))
    assert world.status(request.pause_id) is PauseStatus.PENDING


def test_investigating_again_under_a_new_policy_replaces_the_request_in_one_unit(
    world: World,
) -> None:
    request = world.start()
    after_restart = world.use_cases(policy=CHANGED_POLICY)
    world.clock.advance(timedelta(minutes=1))
    mark = len(world.uow.log)

    fresh = after_restart.intake.investigate_again(request.investigation_id, actor="alice")

    assert fresh.policy_version == CHANGED_POLICY.version != request.policy_version
    assert fresh.revision == request.revision
    assert [u.writes for u in world.uow.since(mark) if "pauses.add" in u.writes] == [
        ["pauses.supersede", "pauses.add", "investigations.status:awaiting_decision"]
    ]
    assert world.status(request.pause_id) is PauseStatus.SUPERSEDED
    assert world.status(fresh.pause_id) is PauseStatus.PENDING
    outcome = after_restart.decisions.confirm(fresh.pause_id, fresh.authorization_identity, BOB)
    assert outcome.summary["policy_version"] == CHANGED_POLICY.version
