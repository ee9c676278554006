"""One investigation per chat thread: `intake.start` in a thread that has one adds the files to
it (as `add_file` does); the in-memory store keeps the thread unique as the SQL index does."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from agent.data.schema import Role
from agent.domain import InvestigationStatus, PauseStatus
from agent.usecases.intake import Started

from .conftest import World, uploads

C, TS = "C1", "1700000000.000100"


def _start(world: World, *paths: Path, user: str = "alice") -> Started:
    return world.service.intake.start(
        uploads(*paths), requested_by=user, channel=C, thread_ts=TS, team="T1"
    )


def test_a_second_start_in_the_thread_adds_to_its_investigation(world: World) -> None:
    first = _start(world, world.demo.orders)
    assert first.added == ()
    mark = len(world.uow.log)

    second = _start(world, world.demo.payments, user="bob")

    case = first.investigation.id
    assert list(world.uow.store.investigations) == [case]
    assert second.investigation.id == case
    ((added,),) = [second.added]
    assert (added.role, added.unchanged, added.revision, added.superseded) == (
        Role.PAYMENTS,
        False,
        2,
        [],
    )
    assert second.request is not None
    assert second.request is added.request
    assert second.request.revision == 2
    assert second.missing is None
    assert second.investigation.status is InvestigationStatus.AWAITING_DECISION
    units = world.uow.since(mark)
    # The refused start wrote nothing, and the files went in by new units of work.
    assert units[0].writes == []
    assert units[0].committed
    assert ["investigations.add_revision"] in [u.writes for u in units[1:]]
    assert all("investigations.add" not in u.writes for u in units)


def test_a_changed_file_in_a_second_start_supersedes_the_pending_request(
    world: World,
) -> None:
    first = _start(world, world.demo.orders, world.demo.payments)
    assert first.request is not None
    world.clock.advance(timedelta(minutes=1))

    second = _start(world, world.demo.orders, world.demo.other_payments, user="bob")

    assert second.investigation.id == first.investigation.id
    assert [(a.role, a.unchanged, a.revision) for a in second.added] == [
        (Role.ORDERS, True, 1),
        (Role.PAYMENTS, False, 2),
    ]
    assert second.added[1].superseded == [first.request.pause_id]
    assert second.request is not None
    assert second.request.revision == 2
    assert world.status(first.request.pause_id) is PauseStatus.SUPERSEDED
    assert world.status(second.request.pause_id) is PauseStatus.PENDING


def test_the_same_upload_twice_changes_nothing(world: World) -> None:
    first = _start(world, world.demo.orders, world.demo.payments)
    assert first.request is not None
    audit_before = len(world.uow.store.audit)

    second = _start(world, world.demo.orders, world.demo.payments)

    assert second.investigation.id == first.investigation.id
    assert all(a.unchanged for a in second.added)
    assert (second.request, second.missing) == (None, None)
    assert len(world.uow.store.audit) == audit_before
    assert world.status(first.request.pause_id) is PauseStatus.PENDING


def test_investigations_without_a_thread_are_not_concerned(world: World) -> None:
    terminal = [
        world.service.intake.start(uploads(world.demo.orders), requested_by="alice")
        for _ in range(2)
    ]
    in_channel = [
        world.service.intake.start(uploads(world.demo.orders), requested_by="a", channel=C)
        for _ in range(2)
    ]
    ids = {s.investigation.id for s in [*terminal, *in_channel]}
    assert len(ids) == 4
    assert all(s.added == () for s in [*terminal, *in_channel])


def test_the_fake_refuses_a_second_investigation_for_a_thread(world: World) -> None:
    first = _start(world, world.demo.orders)
    mark = len(world.uow.log)
    taken = first.investigation.model_copy(update={"id": "INV-OTHER"})
    with world.uow() as uow:
        revision = uow.investigations.revisions(first.investigation.id)[0]
        assert not uow.investigations.add(
            taken, revision.model_copy(update={"investigation_id": "INV-OTHER"})
        )
        assert uow.investigations.by_thread(C, TS) == first.investigation
    assert "INV-OTHER" not in world.uow.store.investigations
    assert [u.writes for u in world.uow.since(mark)] == [[]]
