"""The SQL unit of work on SQLite and PostgreSQL: all or nothing, the pause table, races.

PostgreSQL runs when `RECONBOT_TEST_POSTGRES_URL` is set (see `tests/support/databases.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from agent.data.schema import Role
from agent.domain import (
    ApprovalRequest,
    ApproverPolicy,
    DatasetRef,
    Decision,
    Investigation,
    InvestigationStatus,
    Outcome,
    PauseKind,
    PauseStatus,
    Revision,
    ToolExecution,
)
from agent.identity import canonical_json
from agent.pause import RULES, Transition
from agent.ports import Claim
from storage import tables as t
from storage.database import create_engine, migrate
from storage.deliveries import SqlDeliveries
from storage.repositories import GENESIS, SqlOutcomeRepository
from storage.repositories.audit import entry_hash
from storage.unit_of_work import SqlUnitOfWork, SqlUnitOfWorkFactory
from tests.support.databases import DATABASES, database_urls

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
LEASE = NOW + timedelta(minutes=10)
INV = "INV-1"
FILES = {
    Role.ORDERS: DatasetRef(role=Role.ORDERS, name="o.csv", size=1, digest="sha256:" + "a" * 64),
    Role.PAYMENTS: DatasetRef(
        role=Role.PAYMENTS, name="p.csv", size=1, digest="sha256:" + "b" * 64
    ),
}


class BoomError(Exception):
    """Raised inside a unit of work to make it roll back."""


@pytest.fixture(params=DATABASES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    for url in database_urls(request.param, tmp_path):
        engine = create_engine(url)
        migrate(engine)
        yield engine
        engine.dispose()


@pytest.fixture
def uow(engine: sa.Engine) -> SqlUnitOfWorkFactory:
    return SqlUnitOfWorkFactory(engine)


def _revision(number: int = 1) -> Revision:
    return Revision(
        investigation_id=INV, number=number, files=FILES, input_identity="in-1", created_at=NOW
    )


def _request(pause_id: str) -> ApprovalRequest:
    return ApprovalRequest(
        pause_id=pause_id,
        investigation_id=INV,
        kind=PauseKind.CONFIRMATION,
        revision=1,
        files=list(FILES.values()),
        input_identity="in-1",
        mapping=None,
        mapping_digest=None,
        fields=[],
        clarifications=[],
        problems=[],
        warnings=[],
        rows={"orders": 2},
        policy_version="p1",
        authorization_identity=f"auth-{pause_id}",
        requested_by="alice",
        channel="C1",
        thread_ts="1.0",
        created_at=NOW,
        expires_at=NOW + timedelta(hours=24),
        approver_policy=ApproverPolicy(),
        answers={},
        message="please confirm",
    )


def _outcome(pause_id: str) -> Outcome:
    return Outcome(
        investigation_id=INV,
        pause_id=pause_id,
        revision=1,
        mapping_digest="m",
        input_identity="in-1",
        counts={"matched": 2},
        summary={},
        top_findings=[],
        report="all matched",
        export_digest=None,
        export_rows=0,
        created_at=NOW,
    )


def _seed(uow: SqlUnitOfWorkFactory, *pause_ids: str) -> None:
    """Commit the investigation (if new) and pending pauses."""
    with uow() as work:
        if work.investigations.get(INV) is None:
            work.investigations.add(
                Investigation(
                    id=INV,
                    status=InvestigationStatus.AWAITING_DECISION,
                    requested_by="alice",
                    channel="C1",
                    thread_ts="1.0",
                    revision=1,
                    created_at=NOW,
                ),
                _revision(),
            )
        for pause_id in pause_ids:
            work.pauses.add(_request(pause_id))


def _apply(uow: SqlUnitOfWorkFactory, pause_id: str, transition: Transition, **kwargs: Any) -> bool:
    with uow() as work:
        return work.pauses.apply(
            pause_id, transition, actor=kwargs.pop("actor", "bob"), at=NOW, **kwargs
        )


def _status(uow: SqlUnitOfWorkFactory, pause_id: str) -> PauseStatus:
    with uow() as work:
        state = work.pauses.get(pause_id)
    assert state is not None
    return state.status


def _events(uow: SqlUnitOfWorkFactory) -> list[tuple[str, str | None]]:
    with uow() as work:
        return [(e["event"], e["pause_id"]) for e in work.audit.entries(INV)]


def _verify(uow: SqlUnitOfWorkFactory) -> tuple[int, int | None]:
    with uow() as work:
        return work.audit.verify()


def _in_threads(*targets: Callable[[], None]) -> None:
    errors: list[BaseException] = []

    def run(target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)


# -- all or nothing --------------------------------------------------------------------------


def _work_then_raise(uow: SqlUnitOfWorkFactory) -> None:
    with uow() as work:
        work.pauses.add(_request("P-2"))
        assert work.pauses.apply("P-1", Transition.REJECT, actor="bob", at=NOW)
        work.investigations.set_status(INV, InvestigationStatus.REJECTED, actor="bob")
        work.conversations.append(INV, [{"role": "user", "content": "hi"}])
        work.audit.append("note", actor="bob", investigation_id=INV)
        raise BoomError


def test_a_block_that_raises_leaves_nothing_behind(uow: SqlUnitOfWorkFactory) -> None:
    _seed(uow, "P-1")
    before = _events(uow)
    with pytest.raises(BoomError):
        _work_then_raise(uow)

    with uow() as work:
        assert work.pauses.get("P-2") is None
        state = work.pauses.get("P-1")
        assert state is not None
        assert state.status is PauseStatus.PENDING
        assert state.decided_by is None
        investigation = work.investigations.get(INV)
        assert investigation is not None
        assert investigation.status is InvestigationStatus.AWAITING_DECISION
        assert work.conversations.load(INV) == []
    assert _events(uow) == before
    assert _verify(uow) == (len(before), None)


def test_a_committed_block_keeps_everything(uow: SqlUnitOfWorkFactory) -> None:
    _seed(uow, "P-1")
    claim = Claim("worker-1", LEASE)
    with uow() as work:
        assert work.pauses.apply("P-1", Transition.CLAIM, actor="bob", at=NOW, claim=claim)
        work.decisions.add(
            Decision(
                pause_id="P-1",
                investigation_id=INV,
                action="approve",
                actor="bob",
                reason=None,
                accepted=True,
                refusal=None,
                at=NOW,
            )
        )
        work.investigations.set_status(INV, InvestigationStatus.RECONCILING, actor="bob")
        work.traces.add(
            [
                ToolExecution(
                    investigation_id=INV,
                    invocation_id="i1",
                    phase="reconcile",
                    tool_use_id="t1",
                    name="reconcile",
                    status="success",
                    duration_ms=5,
                )
            ]
        )
    with uow() as work:
        work.outcomes.add(_outcome("P-1"))
        assert work.pauses.apply(
            "P-1", Transition.CONSUME, actor="worker-1", at=NOW, owner="worker-1"
        )
        work.investigations.set_status(INV, InvestigationStatus.COMPLETED, actor="reconbot")

    with uow() as work:
        assert work.pauses.of_investigation(INV)[0].status is PauseStatus.CONSUMED
        assert [d.action for d in work.decisions.of_investigation(INV)] == ["approve"]
        assert [e.tool_use_id for e in work.traces.of_investigation(INV)] == ["t1"]
        outcome = work.outcomes.latest(INV)
        assert outcome is not None
        assert outcome.counts == {"matched": 2}
        assert isinstance(work.outcomes, SqlOutcomeRepository)
        assert work.outcomes.count("P-1") == 1
        investigation = work.investigations.get(INV)
        assert investigation is not None
        assert investigation.status is InvestigationStatus.COMPLETED
        assert [r.number for r in work.investigations.revisions(INV)] == [1]
        assert work.investigations.by_thread("C1", "1.0") == investigation
    events = [event for event, _ in _events(uow)]
    assert events == [
        "investigation_started",
        "pause_recorded",
        "pause_claimed",
        "decision_accepted",
        "investigation_status",
        "outcome_saved",
        "pause_consumed",
        "investigation_status",
    ]
    assert _verify(uow) == (len(events), None)


def test_the_chain_keeps_its_format_and_catches_tampering(
    uow: SqlUnitOfWorkFactory, engine: sa.Engine
) -> None:
    _seed(uow)
    with engine.connect() as conn:
        first = conn.execute(sa.select(t.audit_log).where(t.audit_log.c.seq == 1)).one()
    entry = {
        "seq": 1,
        "at": first.at,
        "event": "investigation_started",
        "actor": "alice",
        "investigation_id": INV,
        "pause_id": None,
        "detail": {
            "revision": 1,
            "input_identity": "in-1",
            "files": {"orders": FILES[Role.ORDERS].digest, "payments": FILES[Role.PAYMENTS].digest},
        },
    }
    assert first.prev_hash == GENESIS
    assert first.detail == canonical_json(entry["detail"]).decode()
    assert first.hash == entry_hash(GENESIS, entry)
    with engine.begin() as conn:
        conn.execute(t.audit_log.update().values(actor="mallory"))
    assert _verify(uow) == (0, 1)


def test_a_unit_of_work_is_not_reentrant(uow: SqlUnitOfWorkFactory) -> None:
    work = uow()
    assert isinstance(work, SqlUnitOfWork)
    with work, pytest.raises(RuntimeError, match="not re-entrant"), work:
        pass
    with work:  # entered again after it ended: a new transaction
        assert work.investigations.get(INV) is None


# -- the pause table -------------------------------------------------------------------------


def _put(engine: sa.Engine, pause_id: str, status: PauseStatus, owner: str | None) -> None:
    with engine.begin() as conn:
        conn.execute(
            t.pauses.update()
            .where(t.pauses.c.id == pause_id)
            .values(status=status.value, claim_owner=owner, lease_until=LEASE)
        )


def test_apply_follows_the_table(uow: SqlUnitOfWorkFactory, engine: sa.Engine) -> None:
    cases = [(tr, status) for tr in Transition for status in PauseStatus]
    _seed(uow, *(f"P-{n}" for n in range(len(cases))))
    for n, (transition, status) in enumerate(cases):
        pause_id = f"P-{n}"
        _put(engine, pause_id, status, "owner")
        rule = RULES[transition]
        won = _apply(
            uow, pause_id, transition, claim=Claim("new", LEASE), owner="owner", reason="why"
        )
        assert won == (status in rule.sources), (transition, status)
        assert _status(uow, pause_id) is (rule.target if won else status)
        if rule.owner_only and status in rule.sources:  # and not for anyone else
            _put(engine, pause_id, status, "owner")
            assert not _apply(uow, pause_id, transition, claim=Claim("x", LEASE), owner="other")
    assert _verify(uow)[1] is None


def test_claim_wins_once_from_pending_and_again_from_failed(uow: SqlUnitOfWorkFactory) -> None:
    _seed(uow, "P-1")
    assert _apply(uow, "P-1", Transition.CLAIM, actor="bob", claim=Claim("w1", LEASE))
    assert not _apply(uow, "P-1", Transition.CLAIM, actor="carol", claim=Claim("w2", LEASE))
    with uow() as work:
        state = work.pauses.get("P-1")
        assert work.pauses.claims() == [("P-1", Claim("w1", LEASE), 1)]
    assert state is not None
    assert (state.status, state.decided_by, state.decided_at) == (PauseStatus.CLAIMED, "bob", NOW)

    assert _apply(uow, "P-1", Transition.FAIL, actor="w1", owner="w1", reason="crashed")
    assert _apply(uow, "P-1", Transition.CLAIM, actor="carol", claim=Claim("w2", LEASE))
    assert not _apply(uow, "P-1", Transition.CLAIM, actor="dave", claim=Claim("w3", LEASE))
    with uow() as work:
        assert work.pauses.claims() == [("P-1", Claim("w2", LEASE), 2)]
    events = _events(uow)
    assert [e for e, _ in events].count("pause_claimed") == 2
    assert ("pause_failed", "P-1") in events


def test_reject_stamps_the_decider(uow: SqlUnitOfWorkFactory) -> None:
    _seed(uow, "P-1")
    assert _apply(uow, "P-1", Transition.REJECT, actor="bob", reason="wrong file")
    assert not _apply(uow, "P-1", Transition.CLAIM, claim=Claim("w1", LEASE))
    with uow() as work:
        state = work.pauses.get("P-1")
        entries = list(work.audit.entries(INV))
    assert state is not None
    assert (state.status, state.decided_by, state.decided_at, state.reason) == (
        PauseStatus.REJECTED,
        "bob",
        NOW,
        "wrong file",
    )
    assert entries[-1]["event"] == "pause_rejected"
    assert entries[-1]["detail"] == {"reason": "wrong file"}


def test_only_the_owner_consumes_or_fails(uow: SqlUnitOfWorkFactory) -> None:
    _seed(uow, "P-1")
    assert _apply(uow, "P-1", Transition.CLAIM, claim=Claim("w1", LEASE))
    assert not _apply(uow, "P-1", Transition.CONSUME, actor="w2", owner="w2")
    assert not _apply(uow, "P-1", Transition.FAIL, actor="w2", owner="w2")
    assert _status(uow, "P-1") is PauseStatus.CLAIMED
    assert _apply(uow, "P-1", Transition.CONSUME, actor="w1", owner="w1")
    assert _status(uow, "P-1") is PauseStatus.CONSUMED


def test_take_over_moves_the_owner_and_counts_an_attempt(uow: SqlUnitOfWorkFactory) -> None:
    _seed(uow, "P-1")
    assert _apply(uow, "P-1", Transition.CLAIM, claim=Claim("w1", LEASE))
    later = LEASE + timedelta(minutes=10)
    takeover = {"actor": "w2", "claim": Claim("w2", later), "owner": "w1"}
    assert _apply(uow, "P-1", Transition.TAKE_OVER, **takeover)
    assert not _apply(uow, "P-1", Transition.TAKE_OVER, **takeover)  # w1 no longer owns it
    assert not _apply(uow, "P-1", Transition.CONSUME, actor="w1", owner="w1")
    with uow() as work:
        assert work.pauses.claims() == [("P-1", Claim("w2", later), 2)]
        entry = list(work.audit.entries(INV))[-1]
    assert (entry["event"], entry["actor"], entry["detail"]) == (
        "claim_recovered",
        "w2",
        {"previous_owner": "w1"},
    )
    assert _apply(uow, "P-1", Transition.CONSUME, actor="w2", owner="w2")


@pytest.mark.parametrize("transition", [Transition.EXPIRE, Transition.SUPERSEDE])
def test_expire_and_supersede_only_from_pending(
    uow: SqlUnitOfWorkFactory, transition: Transition
) -> None:
    _seed(uow, "P-1", "P-2")
    with uow() as work:
        assert work.pauses.due(NOW + timedelta(days=2)) == ["P-1", "P-2"]
        assert work.pauses.due(NOW) == []
    assert _apply(uow, "P-1", Transition.CLAIM, claim=Claim("w1", LEASE))
    assert not _apply(uow, "P-1", transition)
    assert _apply(uow, "P-2", transition)
    assert not _apply(uow, "P-2", transition)
    assert _status(uow, "P-2") is RULES[transition].target
    with uow() as work:
        assert work.pauses.due(NOW + timedelta(days=2)) == []


def test_apply_needs_a_claim_or_an_owner_where_the_rule_does(uow: SqlUnitOfWorkFactory) -> None:
    _seed(uow, "P-1")
    with pytest.raises(ValueError, match="claim"):
        _apply(uow, "P-1", Transition.CLAIM)
    with pytest.raises(ValueError, match="owner"):
        _apply(uow, "P-1", Transition.CONSUME)
    assert _status(uow, "P-1") is PauseStatus.PENDING


def test_add_revision_only_adds_it(uow: SqlUnitOfWorkFactory) -> None:
    _seed(uow, "P-1")
    with uow() as work:
        work.investigations.add_revision(_revision(2), actor="alice")
    with uow() as work:
        investigation = work.investigations.get(INV)
        assert investigation is not None
        assert investigation.revision == 2
        assert [r.number for r in work.investigations.revisions(INV)] == [1, 2]
        assert work.investigations.revisions(INV)[1].files == FILES
    assert _status(uow, "P-1") is PauseStatus.PENDING  # superseding is the caller's decision


# -- races -----------------------------------------------------------------------------------


def _race_to_claim(uow: SqlUnitOfWorkFactory, pause_id: str, *, inside: bool) -> list[bool]:
    """Two threads claim `pause_id`, each in its own unit of work; `inside`: both read the
    pause as pending before either claims (PostgreSQL; SQLite runs one at a time)."""
    barrier = threading.Barrier(2, timeout=20)
    results: list[bool] = []

    def claim(worker: str) -> None:
        if not inside:
            barrier.wait()
        with uow() as work:
            state = work.pauses.get(pause_id)
            assert state is not None
            if inside:
                assert state.status is PauseStatus.PENDING
                barrier.wait()
            claimed = work.pauses.apply(
                pause_id, Transition.CLAIM, actor=worker, at=NOW, claim=Claim(worker, LEASE)
            )
        results.append(claimed)

    _in_threads(lambda: claim("w1"), lambda: claim("w2"))
    return results


def test_racing_claims_have_one_winner(uow: SqlUnitOfWorkFactory, engine: sa.Engine) -> None:
    rounds = 3
    _seed(uow, *(f"P-{n}" for n in range(rounds)))
    for n in range(rounds):
        results = _race_to_claim(uow, f"P-{n}", inside=engine.dialect.name == "postgresql")
        assert sorted(results) == [False, True]
    with uow() as work:
        assert [attempts for _, _, attempts in work.pauses.claims()] == [1] * rounds
    assert [e for e, _ in _events(uow)].count("pause_claimed") == rounds
    assert _verify(uow)[1] is None


def test_conversation_appends_from_two_units_of_work_keep_both(
    uow: SqlUnitOfWorkFactory,
) -> None:
    _seed(uow)
    barrier = threading.Barrier(2, timeout=20)

    def turn(text: str) -> None:
        barrier.wait()
        with uow() as work:
            work.conversations.append(INV, [{"role": "user", "content": text}])

    _in_threads(lambda: turn("a"), lambda: turn("b"))
    _in_threads(lambda: turn("c"), lambda: turn("d"))
    with uow() as work:
        contents = [m["content"] for m in work.conversations.load(INV)]
    assert sorted(contents[:2]) == ["a", "b"]
    assert sorted(contents[2:]) == ["c", "d"]


def test_first_conversation_inserts_racing_keep_both(
    uow: SqlUnitOfWorkFactory, engine: sa.Engine
) -> None:
    """PostgreSQL: the second first-append waits on the first's uncommitted insert, loses it
    in a SAVEPOINT, and appends to the winner's row; the rest of its work still commits."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one unit of work at a time: no insert race")
    _seed(uow, "P-1")
    inserted = threading.Event()

    def first() -> None:
        with uow() as work:
            work.conversations.append(INV, [{"content": "first"}])
            inserted.set()
            threading.Event().wait(0.2)  # let the second one reach the insert and wait

    def second() -> None:
        assert inserted.wait(20)
        with uow() as work:
            work.conversations.append(INV, [{"content": "second"}])
            assert work.pauses.apply("P-1", Transition.EXPIRE, actor="reconbot", at=NOW)

    _in_threads(first, second)
    with uow() as work:
        assert [m["content"] for m in work.conversations.load(INV)] == ["first", "second"]
    assert _status(uow, "P-1") is PauseStatus.EXPIRED


def test_audit_entries_do_not_deadlock_row_locks(
    uow: SqlUnitOfWorkFactory, engine: sa.Engine
) -> None:
    """PostgreSQL: A changes a pause (audited) and then the case; meanwhile B changes the case
    (audited). Both commit: the chain's head is locked only as each commits, never while a
    transaction still waits for rows another one holds."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one unit of work at a time")
    _seed(uow, "P-1")
    a_applied, b_updated = threading.Event(), threading.Event()

    def a() -> None:
        with uow() as work:
            assert work.pauses.apply("P-1", Transition.REJECT, actor="bob", at=NOW)
            a_applied.set()
            assert b_updated.wait(20)
            work.investigations.set_status(INV, InvestigationStatus.REJECTED, actor="bob")

    def b() -> None:
        assert a_applied.wait(20)
        with uow() as work:
            work.investigations.set_status(INV, InvestigationStatus.FAILED, actor="reconbot")
            b_updated.set()
            threading.Event().wait(0.1)

    _in_threads(a, b)
    with uow() as work:
        investigation = work.investigations.get(INV)
    assert investigation is not None
    assert investigation.status is InvestigationStatus.REJECTED
    assert _verify(uow)[1] is None


# -- deliveries ------------------------------------------------------------------------------


def test_deliveries_are_first_once_and_resumed_once_after_their_hold(
    engine: sa.Engine, uow: SqlUnitOfWorkFactory
) -> None:
    deliveries = SqlDeliveries(engine)
    hold = NOW + timedelta(minutes=5)
    assert deliveries.first("E-1")
    assert not deliveries.first("E-1")
    assert deliveries.first("E-2", {"file": "F1"}, hold)
    assert not deliveries.first("E-2", {"file": "F1"}, hold)
    assert deliveries.first("E-3", {"file": "F3"}, hold)
    deliveries.done("E-3")

    assert deliveries.take_unfinished(NOW, NOW + timedelta(hours=1)) == []
    later = hold + timedelta(seconds=1)
    assert deliveries.take_unfinished(later, later + timedelta(minutes=5)) == [
        ("E-2", {"file": "F1"})
    ]
    assert deliveries.take_unfinished(later, later + timedelta(minutes=5)) == []
    deliveries.done("E-2")
    assert deliveries.take_unfinished(later + timedelta(days=1), later + timedelta(days=2)) == []

    _seed(uow, "P-1")
    deliveries.remember_message("P-1", "1234.5")
    with uow() as work:
        state = work.pauses.get("P-1")
    assert state is not None
    assert state.message_ts == "1234.5"
