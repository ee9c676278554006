"""What a change of a channel's policy does to the requests a person may still approve: a
claim taken before it finishes under the rules it was approved under (live, or re-run by
recovery); a failed request never stays open beside a newer one; every open request not under
the new rules is superseded, and each case is made again once, from its newest request
(red-team findings on issue 41). On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest

from agent.data.policy import Policy
from agent.data.schema import Role
from agent.domain import ApprovalRequest, Approver, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError
from agent.pause import Transition
from agent.ports import Claim
from agent.usecases import policy_request

from .conftest import Demo, World, uploads

ALICE, BOB, CAROL = Approver(user="alice"), Approver(user="bob"), Approver(user="carol")
TEAM = "C-TEAM"


def _start(world: World, demo: Demo) -> ApprovalRequest:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="dave", channel=TEAM, thread_ts="1.1"
    ).request
    assert request is not None
    return request


def _put_in_force(world: World, changes: dict[str, str]) -> None:
    change = world.service.policy_changes.propose(TEAM, changes, proposed_by=ALICE.user)
    world.service.policy_changes.approve(change.pause_id, change.authorization_identity, CAROL)


def _fail(world: World, request: ApprovalRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Approve `request` and let its reconciliation fail: it waits, failed, for a retry."""

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the disk is full")

    with monkeypatch.context() as patched:
        patched.setattr(world.service.decisions.resumption.turns, "invoke", broken)
        with pytest.raises(RuntimeError):
            world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert world.saved.pause(request.pause_id).status is PauseStatus.FAILED  # type: ignore[union-attr]


def test_an_interrupted_claim_is_re_run_under_the_rules_it_was_approved_under(
    world: World, demo: Demo
) -> None:
    request = _start(world, demo)
    gone = Claim("elsewhere:1:dead", world.clock.now() - timedelta(seconds=1))
    with world.uow() as uow:
        assert uow.pauses.apply(
            request.pause_id, Transition.CLAIM, actor=BOB.user, at=world.clock.now(), claim=gone
        )
    _put_in_force(world, {"window_days_after": "100"})  # while nobody runs the claim

    assert world.service.recovery.recover() == [request.pause_id]

    assert world.saved.pause(request.pause_id).status is PauseStatus.CONSUMED  # type: ignore[union-attr]
    outcome = world.saved.outcome(request.investigation_id)
    assert outcome is not None
    assert outcome.summary["policy_version"] == Policy().version, "the version approved"
    assert outcome.counts["capture_outside_window"] > 0


def test_a_newer_request_supersedes_the_failed_one_so_a_case_is_never_approved_twice(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed = _start(world, demo)
    _fail(world, failed, monkeypatch)

    again = world.service.intake.investigate_again(failed.investigation_id, actor="dave")

    assert world.saved.pause(failed.pause_id).status is PauseStatus.SUPERSEDED  # type: ignore[union-attr]
    with pytest.raises(ApprovalRefusedError) as refused:
        world.service.decisions.confirm(failed.pause_id, failed.authorization_identity, BOB)
    assert refused.value.reason == RefusalReason.SUPERSEDED
    world.service.decisions.confirm(again.pause_id, again.authorization_identity, BOB)


def test_a_claim_that_failed_under_rules_no_longer_in_force_is_made_again_by_the_next_change(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _start(world, demo)

    def broken(*_args: object, **_kwargs: object) -> None:
        _put_in_force(world, {"window_days_after": "100"})  # approved while it reconciled
        raise RuntimeError("the disk is full")

    with monkeypatch.context() as patched:
        patched.setattr(world.service.decisions.resumption.turns, "invoke", broken)
        with pytest.raises(RuntimeError):
            world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert world.saved.pause(request.pause_id).status is PauseStatus.FAILED  # type: ignore[union-attr]

    change = world.service.policy_changes.propose(
        TEAM, {"amount_tolerance_minor": "0"}, proposed_by=ALICE.user
    )
    approved = world.service.policy_changes.approve(
        change.pause_id, change.authorization_identity, CAROL
    )

    assert approved.superseded == [request.investigation_id]
    [remade] = approved.reissued
    assert remade.policy_version == change.policy_change.after_version  # type: ignore[union-attr]


def test_a_case_is_made_again_once_from_its_newest_request_with_its_edit(
    world: World, demo: Demo
) -> None:
    first = _start(world, demo)
    edited = world.service.decisions.edit(
        first.pause_id,
        first.authorization_identity,
        BOB,
        {Role.ORDERS: {"customer": "Lineitem name"}},
    )
    assert edited.answers[Role.ORDERS]["customer"] == "Lineitem name"

    change = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "100"}, proposed_by=ALICE.user
    )
    approved = world.service.policy_changes.approve(
        change.pause_id, change.authorization_identity, CAROL
    )

    [remade] = approved.reissued
    assert approved.not_reissued == []
    assert remade.answers[Role.ORDERS]["customer"] == "Lineitem name", "the newest one's edit"
    assert remade.mapping is not None
    assert remade.mapping.orders.columns["customer"] == "Lineitem name"


def test_a_refused_edit_reconciles_nothing(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard decides an edit before its proposal is made: an expired request's edit costs
    no reconciliation of the channel's last files (the proposal's effect)."""
    change = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user
    )
    made: list[object] = []
    monkeypatch.setattr(
        policy_request,
        "effect_on_last_reconciliation",
        lambda *args: made.append(args) or (None, None),
    )
    world.clock.advance(timedelta(days=2))

    with pytest.raises(ApprovalRefusedError) as refused:
        world.service.policy_changes.edit(
            change.pause_id, change.authorization_identity, BOB, {"window_days_after": "14"}
        )

    assert refused.value.reason == RefusalReason.EXPIRED
    assert made == []


def test_a_request_made_while_a_change_was_approved_is_made_again_under_the_new_rules(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The change's approval supersedes the channel's open requests, not one an inspection
    turn had yet to record: that one is superseded when it is recorded, and the turn taken
    again under the rules now in force (red team 5)."""
    turns = world.service.intake.turns
    inspect = turns.investigate
    made: list[str] = []

    def while_a_change_is_approved(*args: object, **kwargs: object) -> object:
        context = inspect(*args, **kwargs)  # type: ignore[arg-type]
        if not made:
            made.append("approved")
            _put_in_force(world, {"window_days_after": "100"})
        return context

    monkeypatch.setattr(turns, "investigate", while_a_change_is_approved)
    request = _start(world, demo)

    assert request.policy_version == Policy(window_days_after=100).version
    with world.uow() as uow:
        states = uow.pauses.of_investigation(request.investigation_id)
    by_status = {s.status: s for s in states}
    assert len(states) == 2 and set(by_status) == {PauseStatus.SUPERSEDED, PauseStatus.PENDING}
    assert by_status[PauseStatus.PENDING].request.pause_id == request.pause_id
    assert "changed" in (by_status[PauseStatus.SUPERSEDED].reason or "")
    outcome = world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert outcome.counts["capture_outside_window"] == 0


def test_a_failed_request_made_under_the_old_rules_is_made_again_under_the_new(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request whose reconciliation failed waits for Approve to retry it, which the old
    version would refuse (`POLICY_CHANGED`): the change supersedes it and makes it again."""
    request = _start(world, demo)
    _fail(world, request, monkeypatch)
    change = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "100"}, proposed_by=ALICE.user
    )

    approved = world.service.policy_changes.approve(
        change.pause_id, change.authorization_identity, CAROL
    )

    assert approved.superseded == [request.investigation_id]
    assert world.saved.pause(request.pause_id).status is PauseStatus.SUPERSEDED  # type: ignore[union-attr]
    [again] = approved.reissued
    assert again.policy_version == Policy(window_days_after=100).version
    outcome = world.service.decisions.confirm(again.pause_id, again.authorization_identity, BOB)
    assert outcome.counts["capture_outside_window"] == 0
