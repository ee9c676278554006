"""One investigation per Slack thread, on SQLite and PostgreSQL: a second `intake.start` for
the same thread adds its files to the thread's investigation, whether it came after the first
or raced it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

from agent.data.schema import Role
from agent.domain import Investigation, InvestigationStatus, PauseStatus, Revision
from agent.usecases.intake import Started
from storage import tables as t
from storage.repositories.investigations import SqlInvestigationRepository

from .conftest import Demo, World, uploads

C, TS = "C1", "1700000000.000100"


def _start(world: World, *paths: Path, user: str = "alice") -> Started:
    return world.service.intake.start(
        uploads(*paths), requested_by=user, channel=C, thread_ts=TS, team="T1"
    )


def _ids_in_thread(world: World) -> list[str]:
    inv = t.investigations.c
    with world.engine.connect() as conn:
        rows = conn.execute(sa.select(inv.id).where(inv.channel == C, inv.thread_ts == TS))
        return [row.id for row in rows]


def _in_threads(*work: Callable[[], Started]) -> list[Started]:
    results: list[Started] = []
    errors: list[BaseException] = []

    def run(job: Callable[[], Started]) -> None:
        try:
            results.append(job())
        except BaseException as error:  # reported by the test, not lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(job,)) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert len(results) == len(work)
    return results


def test_the_same_upload_twice_gives_one_investigation(world: World, demo: Demo) -> None:
    first = _start(world, demo.orders, demo.payments)
    second = _start(world, demo.orders, demo.payments, user="bob")

    assert first.added == ()
    assert first.request is not None
    case = first.investigation.id
    assert second.investigation.id == case
    assert [(a.role, a.unchanged, a.revision) for a in second.added] == [
        (Role.ORDERS, True, 1),
        (Role.PAYMENTS, True, 1),
    ]
    assert (second.request, second.missing) == (None, None)
    assert _ids_in_thread(world) == [case]
    pause = world.saved.pause(first.request.pause_id)
    assert pause is not None
    assert pause.status is PauseStatus.PENDING
    events = [e["event"] for e in world.saved.audit_entries(case)]
    assert events.count("investigation_started") == 1
    assert "revision_added" not in events
    assert world.saved.verify_audit()[1] is None


def test_a_second_start_with_the_missing_file_completes_the_case(world: World, demo: Demo) -> None:
    first = _start(world, demo.orders)
    assert first.missing is Role.PAYMENTS

    second = _start(world, demo.payments, user="bob")

    case = first.investigation.id
    assert second.investigation.id == case
    ((added,),) = [second.added]
    assert (added.role, added.unchanged, added.revision) == (Role.PAYMENTS, False, 2)
    assert second.request is not None
    assert second.request is added.request
    assert (second.request.investigation_id, second.request.revision) == (case, 2)
    assert second.missing is None
    assert second.investigation.status is InvestigationStatus.AWAITING_DECISION
    assert _ids_in_thread(world) == [case]
    with world.uow() as uow:
        revisions = uow.investigations.revisions(case)
    assert [(r.number, sorted(r.files), r.added_by) for r in revisions] == [
        (1, [Role.ORDERS], "alice"),
        (2, [Role.ORDERS, Role.PAYMENTS], "bob"),
    ]


def test_two_starts_at_once_give_one_investigation(world: World, demo: Demo) -> None:
    """Two threads (two handlers of one upload) start at the same moment: on SQLite the units
    of work queue, on PostgreSQL they may run side by side; one investigation either way."""
    barrier = threading.Barrier(2, timeout=20)

    def start(user: str) -> Started:
        barrier.wait()
        return _start(world, demo.orders, demo.payments, user=user)

    results = _in_threads(lambda: start("alice"), lambda: start("bob"))

    (case,) = {r.investigation.id for r in results}
    assert _ids_in_thread(world) == [case]
    (winner,) = [r for r in results if not r.added]
    (loser,) = [r for r in results if r.added]
    assert winner.request is not None
    assert all(a.unchanged for a in loser.added)
    assert world.saved.verify_audit()[1] is None


def test_inserts_racing_on_postgres_have_one_winner(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: both inserts run at once; the second waits on the first's uncommitted row,
    is refused by the unique index when it commits, and adds its files to the winner's case."""
    if world.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one unit of work at a time: no insert race")
    add = SqlInvestigationRepository.add
    barrier = threading.Barrier(2, timeout=20)
    saved: list[bool] = []

    def racing_add(
        self: SqlInvestigationRepository, investigation: Investigation, revision: Revision
    ) -> bool:
        barrier.wait()  # both units of work are open, neither has inserted
        created = add(self, investigation, revision)
        saved.append(created)
        if created:
            time.sleep(0.3)  # hold the uncommitted row: the other insert waits on it
        return created

    monkeypatch.setattr(SqlInvestigationRepository, "add", racing_add)
    results = _in_threads(
        lambda: _start(world, demo.orders, demo.payments, user="alice"),
        lambda: _start(world, demo.orders, demo.payments, user="bob"),
    )

    assert sorted(saved) == [False, True]
    (case,) = {r.investigation.id for r in results}
    assert _ids_in_thread(world) == [case]
    with world.uow() as uow:
        revisions = uow.investigations.revisions(case)
    assert [r.number for r in revisions] == [1]  # the same upload: nothing changed
    (winner,) = [r for r in results if not r.added]
    (loser,) = [r for r in results if r.added]
    assert winner.request is not None
    assert [(a.role, a.unchanged) for a in loser.added] == [
        (Role.ORDERS, True),
        (Role.PAYMENTS, True),
    ]
    assert world.saved.verify_audit()[1] is None
