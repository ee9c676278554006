"""The in-memory unit of work keeps the ports' contract (what the use-case tests rely on)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from agent.domain import (
    ApprovalRequest,
    ApproverPolicy,
    Investigation,
    InvestigationStatus,
    PauseKind,
    PauseStatus,
    Revision,
)
from agent.pause import RULES, Transition
from agent.ports import Claim
from tests.support.fake_uow import MemoryUnitOfWorkFactory

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CLAIM = Claim("me", NOW + timedelta(minutes=15))


def _case(case_id: str = "INV-1") -> tuple[Investigation, Revision]:
    investigation = Investigation(
        id=case_id,
        status=InvestigationStatus.AWAITING_FILE,
        requested_by="alice",
        channel="C1",
        thread_ts="1.0",
        revision=1,
        created_at=NOW,
    )
    return investigation, Revision(
        investigation_id=case_id, number=1, files={}, input_identity=None, created_at=NOW
    )


def _request(pause_id: str = "PAUSE-1", case_id: str = "INV-1") -> ApprovalRequest:
    return ApprovalRequest(
        pause_id=pause_id,
        investigation_id=case_id,
        kind=PauseKind.CLARIFICATION,
        revision=1,
        files=[],
        input_identity="inputs",
        mapping=None,
        mapping_digest=None,
        fields=[],
        clarifications=[],
        problems=[],
        warnings=[],
        rows={},
        policy_version="policy",
        authorization_identity="auth",
        requested_by="alice",
        channel=None,
        thread_ts=None,
        created_at=NOW,
        expires_at=NOW + timedelta(hours=1),
        approver_policy=ApproverPolicy(),
        answers={},
        message="?",
    )


def _with_pause(status: PauseStatus, owner: str | None = "me") -> MemoryUnitOfWorkFactory:
    factory = MemoryUnitOfWorkFactory()
    with factory() as uow:
        uow.investigations.add(*_case())
        uow.pauses.add(_request())
    stored = factory.store.pauses["PAUSE-1"]
    stored.state = stored.state.model_copy(update={"status": status})
    stored.claim_owner = owner
    return factory


def test_a_unit_sees_its_own_writes_and_commits_them_on_leaving() -> None:
    factory = MemoryUnitOfWorkFactory()
    with factory() as uow:
        uow.investigations.add(*_case())
        uow.pauses.add(_request())
        assert uow.investigations.get("INV-1") is not None
        assert uow.pauses.get("PAUSE-1") is not None
        assert factory.store.investigations == {}  # not committed yet
    assert list(factory.store.pauses) == ["PAUSE-1"]
    assert (factory.commits, factory.rollbacks) == (1, 0)
    (unit,) = factory.log
    assert unit.committed is True
    assert unit.pause_reads == 1
    assert unit.writes == ["investigations.add", "pauses.add"]
    with factory() as uow:
        assert uow.audit.verify() == (2, None)
        events = [e["event"] for e in uow.audit.entries("INV-1")]
    assert events == ["investigation_started", "pause_recorded"]


def test_an_exception_rolls_back_everything_written_in_the_unit() -> None:
    factory = _with_pause(PauseStatus.PENDING)
    before = factory.store

    def write_then_fail() -> None:
        with factory() as uow:
            assert uow.pauses.apply("PAUSE-1", Transition.CLAIM, actor="bob", at=NOW, claim=CLAIM)
            uow.investigations.set_status("INV-1", InvestigationStatus.RECONCILING, actor="bob")
            uow.conversations.append("INV-1", [{"role": "user", "content": []}])
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_then_fail()
    assert factory.store is before
    assert factory.store.pauses["PAUSE-1"].state.status is PauseStatus.PENDING
    assert factory.store.pauses["PAUSE-1"].attempts == 0
    assert factory.store.investigations["INV-1"].status is InvestigationStatus.AWAITING_FILE
    assert factory.store.conversations == {}
    assert [e["event"] for e in factory.store.audit] == ["investigation_started", "pause_recorded"]
    assert factory.rollbacks == 1
    assert factory.log[-1].committed is False


def test_fail_once_raises_in_the_next_call_only() -> None:
    factory = _with_pause(PauseStatus.PENDING)
    factory.fail_once("pauses.get", KeyError("once"))
    with pytest.raises(KeyError), factory() as uow:
        uow.pauses.get("PAUSE-1")
    with factory() as uow:
        assert uow.pauses.get("PAUSE-1") is not None


@pytest.mark.parametrize("transition", list(Transition))
@pytest.mark.parametrize("status", list(PauseStatus))
def test_apply_follows_the_rules_of_the_pause_lifecycle(
    status: PauseStatus, transition: Transition
) -> None:
    factory = _with_pause(status)
    rule = RULES[transition]
    with factory() as uow:
        done = uow.pauses.apply(
            "PAUSE-1", transition, actor="bob", at=NOW, reason="why", claim=CLAIM, owner="me"
        )
    stored = factory.store.pauses["PAUSE-1"]
    assert done is (status in rule.sources)
    assert stored.state.status is (rule.target if done else status)
    assert stored.attempts == (1 if done and rule.takes_claim and rule.counts_attempt else 0)
    assert (stored.state.decided_by == "bob") is (done and rule.records_decider)
    if done:
        assert stored.state.reason == "why"
        assert factory.store.audit[-1]["event"] == rule.audit_event
        assert factory.log[-1].writes == [f"pauses.{transition.value}"]
    else:
        assert factory.log[-1].writes == []


@pytest.mark.parametrize("transition", [t for t in Transition if RULES[t].owner_only])
def test_an_owner_only_transition_needs_the_claims_owner(transition: Transition) -> None:
    factory = _with_pause(PauseStatus.CLAIMED, owner="me")
    with factory() as uow:
        assert not uow.pauses.apply(
            "PAUSE-1", transition, actor="x", at=NOW, owner="not-me", claim=CLAIM
        )
        with pytest.raises(ValueError, match="owner"):
            uow.pauses.apply("PAUSE-1", transition, actor="x", at=NOW, claim=CLAIM)
        assert uow.pauses.apply("PAUSE-1", transition, actor="x", at=NOW, owner="me", claim=CLAIM)
    with pytest.raises(ValueError, match="claim"), factory() as uow:
        uow.pauses.apply("PAUSE-1", Transition.CLAIM, actor="x", at=NOW)


def test_claims_and_due_report_what_recovery_and_expiry_need() -> None:
    factory = _with_pause(PauseStatus.PENDING)
    with factory() as uow:
        assert uow.pauses.due(NOW) == []
        assert uow.pauses.due(NOW + timedelta(hours=1)) == ["PAUSE-1"]
        assert uow.pauses.apply("PAUSE-1", Transition.CLAIM, actor="bob", at=NOW, claim=CLAIM)
        assert uow.pauses.claims() == [("PAUSE-1", CLAIM, 1)]
        assert uow.pauses.due(NOW + timedelta(hours=1)) == []


def test_a_unit_cannot_be_nested_in_the_same_thread() -> None:
    factory = MemoryUnitOfWorkFactory()
    with factory(), pytest.raises(RuntimeError, match="already open"), factory():
        pass
    with factory() as uow:  # the lock was released
        assert uow.investigations.get("INV-1") is None


def test_units_of_two_threads_run_one_after_the_other() -> None:
    factory = MemoryUnitOfWorkFactory()
    waiting = threading.Event()
    seen: list[Investigation | None] = []

    def other() -> None:
        waiting.set()
        with factory() as uow:  # blocks until the first unit has committed
            seen.append(uow.investigations.get("INV-1"))

    with factory() as uow:
        thread = threading.Thread(target=other)
        thread.start()
        assert waiting.wait(timeout=30)
        uow.investigations.add(*_case())
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(seen) == 1 and seen[0] is not None and seen[0].id == "INV-1"
