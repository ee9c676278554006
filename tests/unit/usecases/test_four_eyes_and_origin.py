"""Who may approve (every maker of a request is excluded when self-approval is off), where a
decision may come from (the request's own workspace, channel and thread), and questions that
never make requests."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agent.approval import Origin
from agent.data.schema import Role
from agent.domain import Approver, ApproverPolicy, InvestigationStatus, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError
from agent.usecases.common import Upload

from .conftest import Demo, World, make_world, uploads

FOUR_EYES = ApproverPolicy(self_approval=False)
HERE = Origin(team="T1", channel="C1", thread_ts="100.1")


def _refusal(call: object) -> RefusalReason:
    with pytest.raises(ApprovalRefusedError) as raised:
        call()  # type: ignore[operator]
    return RefusalReason(raised.value.reason)


@pytest.fixture
def strict(tmp_path: Path, demo: Demo) -> World:
    return make_world(tmp_path, demo, approver_policy=FOUR_EYES)


def _start_in_slack(world: World) -> str:
    started = world.service.intake.start(
        uploads(world.demo.orders, world.demo.payments),
        requested_by="alice",
        channel="C1",
        thread_ts="100.1",
        team="T1",
    )
    assert started.request is not None
    return started.investigation.id


def test_whoever_uploads_a_replacement_may_not_approve_the_request_it_produced(
    strict: World,
) -> None:
    case = _start_in_slack(strict)
    replaced = strict.service.intake.add_file(
        case,
        Upload(io.BytesIO(strict.demo.other_payments.read_bytes()), "payments.csv"),
        actor="mallory",
    )
    request = replaced.request
    assert request is not None
    assert request.requested_by == "alice"
    assert request.requesters == ("alice", "mallory")
    assert any("uploaded by mallory" in line for line in request.provenance)
    for maker in ("alice", "mallory"):
        refusal = _refusal(
            lambda maker=maker: strict.service.decisions.confirm(
                request.pause_id, request.authorization_identity, Approver(user=maker), origin=HERE
            )
        )
        assert refusal is RefusalReason.NOT_AUTHORIZED
    assert strict.status(request.pause_id) is PauseStatus.PENDING
    strict.service.decisions.confirm(
        request.pause_id, request.authorization_identity, Approver(user="carol"), origin=HERE
    )
    assert strict.status(request.pause_id) is PauseStatus.CONSUMED


def test_whoever_edits_the_reading_may_not_approve_the_request_it_produced(strict: World) -> None:
    _start_in_slack(strict)
    (first,) = [p.state.request for p in strict.uow.store.pauses.values()]
    edited = strict.service.decisions.edit(
        first.pause_id,
        first.authorization_identity,
        Approver(user="mallory"),
        _edit(),
        origin=HERE,
    )
    assert edited.requesters == ("alice", "mallory")
    assert edited.edits[-1][0] == "mallory"
    assert any(line.startswith("edited by mallory") for line in edited.provenance)
    refusal = _refusal(
        lambda: strict.service.decisions.confirm(
            edited.pause_id, edited.authorization_identity, Approver(user="mallory"), origin=HERE
        )
    )
    assert refusal is RefusalReason.NOT_AUTHORIZED
    # A second edit by someone else keeps the first editor among the makers.
    again = strict.service.decisions.edit(
        edited.pause_id, edited.authorization_identity, Approver(user="bob"), _edit(), origin=HERE
    )
    assert again.requesters == ("alice", "mallory", "bob")
    for maker in ("alice", "mallory", "bob"):
        assert (
            _refusal(
                lambda maker=maker: strict.service.decisions.confirm(
                    again.pause_id, again.authorization_identity, Approver(user=maker)
                )
            )
            is RefusalReason.NOT_AUTHORIZED
        )


def test_a_maker_may_withdraw_or_correct_their_request_but_never_approve_it(
    strict: World,
) -> None:
    # Issue 38: the requester could not withdraw her own request, and an editor could not fix
    # his edit; with two editors nobody could act until expiry.
    _start_in_slack(strict)
    (first,) = [p.state.request for p in strict.uow.store.pauses.values()]
    mine = strict.service.decisions.edit(
        first.pause_id, first.authorization_identity, Approver(user="mallory"), _edit(), origin=HERE
    )
    again = strict.service.decisions.edit(
        mine.pause_id, mine.authorization_identity, Approver(user="mallory"), _edit(), origin=HERE
    )
    assert again.requesters == ("alice", "mallory")
    refusal = _refusal(
        lambda: strict.service.decisions.confirm(
            again.pause_id, again.authorization_identity, Approver(user="mallory"), origin=HERE
        )
    )
    assert refusal is RefusalReason.NOT_AUTHORIZED
    strict.service.decisions.reject(
        again.pause_id,
        again.authorization_identity,
        Approver(user="alice"),
        "uploaded the wrong month",
        origin=HERE,
    )
    assert strict.status(again.pause_id) is PauseStatus.REJECTED


def _edit() -> dict[Role, dict[str, str]]:
    return {Role.ORDERS: {"customer": "Email"}}


@pytest.mark.parametrize(
    "origin",
    [
        Origin(team="T1", channel="C2", thread_ts="100.1"),  # another channel
        Origin(team="T1", channel="C1", thread_ts="200.2"),  # another thread of the channel
        Origin(team="T9", channel="C1", thread_ts="100.1"),  # another workspace
        Origin(team=None, channel="C1", thread_ts="100.1"),  # a payload naming no workspace
    ],
)
def test_a_click_from_anywhere_but_the_requests_thread_runs_nothing(
    world: World, origin: Origin
) -> None:
    case = _start_in_slack(world)
    request = world.service.queries.pending_request(case)
    assert request is not None
    for call in (
        lambda: world.service.decisions.confirm(
            request.pause_id, request.authorization_identity, Approver(user="bob"), origin=origin
        ),
        lambda: world.service.decisions.reject(
            request.pause_id,
            request.authorization_identity,
            Approver(user="bob"),
            "no",
            origin=origin,
        ),
        lambda: world.service.decisions.edit(
            request.pause_id,
            request.authorization_identity,
            Approver(user="bob"),
            _edit(),
            origin=origin,
        ),
        lambda: world.service.decisions.decidable(
            request.pause_id, request.authorization_identity, origin
        ),
    ):
        assert _refusal(call) is RefusalReason.ORIGIN_MISMATCH
    assert world.status(request.pause_id) is PauseStatus.PENDING
    assert world.outcomes(case) == []
    refused = [d.refusal for d in world.decisions(case)]
    assert refused == [RefusalReason.ORIGIN_MISMATCH] * 3  # opening a form records nothing
    world.service.decisions.confirm(
        request.pause_id, request.authorization_identity, Approver(user="bob"), origin=HERE
    )
    assert world.status(request.pause_id) is PauseStatus.CONSUMED


def test_a_question_never_makes_supersedes_or_reopens_a_request(world: World) -> None:
    case = _start_in_slack(world)
    request = world.service.queries.pending_request(case)
    assert request is not None
    answer = world.service.questions.ask(case, "can you reconcile this now?", actor="mallory")
    assert answer.request is None
    assert [p.state.request.pause_id for p in world.uow.store.pauses.values()] == [request.pause_id]
    assert world.status(request.pause_id) is PauseStatus.PENDING
    world.service.decisions.confirm(
        request.pause_id, request.authorization_identity, Approver(user="bob"), origin=HERE
    )
    world.service.questions.ask(case, "reconcile it again please", actor="mallory")
    assert world.investigation(case).status is InvestigationStatus.COMPLETED
    assert len(world.uow.store.pauses) == 1
