"""Migration 0005 on SQLite and PostgreSQL: one investigation per Slack thread.

A database that already holds several investigations for one thread upgrades: the newest of
each thread (the one the bot found) keeps it, the older ones lose their `thread_ts` and keep
the rest. Afterwards the database refuses a second investigation for a thread, and any number
without one are still let through.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext

from agent.data.schema import Role
from agent.domain import DatasetRef, Investigation, InvestigationStatus, Revision
from storage import tables as t
from storage.database import MIGRATIONS, create_engine, current_revision
from storage.unit_of_work import SqlUnitOfWorkFactory
from tests.support.databases import DATABASES, database_urls

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(params=DATABASES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    for url in database_urls(request.param, tmp_path):
        engine = create_engine(url)
        yield engine
        engine.dispose()


def _config(engine: sa.Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


def _row(id_: str, channel: str | None, thread_ts: str | None, minutes: int = 0) -> dict[str, Any]:
    at = T0 + timedelta(minutes=minutes)
    return {
        "id": id_,
        "status": "awaiting_file",
        "requested_by": "alice",
        "channel": channel,
        "thread_ts": thread_ts,
        "team": "T1" if channel else None,
        "revision": 1,
        "created_at": at,
        "updated_at": at,
    }


def _insert(engine: sa.Engine, *rows: dict[str, Any]) -> None:
    with engine.begin() as conn:
        conn.execute(t.investigations.insert(), list(rows))


def _threads(engine: sa.Engine) -> dict[str, tuple[str | None, str | None]]:
    inv = t.investigations.c
    with engine.connect() as conn:
        rows = conn.execute(sa.select(inv.id, inv.channel, inv.thread_ts)).all()
    return {row.id: (row.channel, row.thread_ts) for row in rows}


def _case(id_: str, channel: str | None, thread_ts: str | None) -> tuple[Investigation, Revision]:
    ref = DatasetRef(role=Role.ORDERS, name="o.csv", size=1, digest="sha256:" + "a" * 64)
    investigation = Investigation(
        id=id_,
        status=InvestigationStatus.AWAITING_FILE,
        requested_by="alice",
        channel=channel,
        thread_ts=thread_ts,
        revision=1,
        created_at=T0 + timedelta(days=1),
    )
    return investigation, Revision(
        investigation_id=id_, number=1, files={Role.ORDERS: ref}, input_identity=None, created_at=T0
    )


def test_duplicates_are_detached_and_the_thread_becomes_unique(
    engine: sa.Engine, caplog: pytest.LogCaptureFixture
) -> None:
    command.upgrade(_config(engine), "0004")
    _insert(
        engine,
        # One thread, three investigations: the newest is the one `by_thread` found.
        _row("INV-OLD", "C1", "1.0", minutes=0),
        _row("INV-NEW", "C1", "1.0", minutes=20),
        _row("INV-MID", "C1", "1.0", minutes=10),
        # A tie on the creation time: the greater id stays, so the upgrade is deterministic.
        _row("INV-TIE-A", "C1", "2.0", minutes=5),
        _row("INV-TIE-B", "C1", "2.0", minutes=5),
        # The same thread_ts in another channel is another thread.
        _row("INV-OTHER", "C2", "1.0"),
        # Terminal investigations (no thread), and one in a channel without a thread.
        _row("INV-T1", None, None),
        _row("INV-T2", None, None),
        _row("INV-C1", "C1", None),
        _row("INV-C2", "C1", None),
    )
    before = _threads(engine)

    with caplog.at_level(logging.WARNING):
        command.upgrade(_config(engine), "0005")

    assert current_revision(engine) == "0005"
    after = _threads(engine)
    detached = {"INV-OLD", "INV-MID", "INV-TIE-A"}
    assert after == {
        **before,
        **{id_: (before[id_][0], None) for id_ in detached},  # the channel stays
    }
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("3 older investigation(s)" in m for m in warnings), warnings
    assert all(id_ in " ".join(warnings) for id_ in detached)

    # The thread is taken now: the database itself refuses a second investigation for it.
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(t.investigations.insert(), [_row("INV-DUP", "C1", "1.0")])
    # Rows without a thread are not concerned, on both databases.
    _insert(engine, _row("INV-T3", None, None), _row("INV-C3", "C1", None))
    assert _threads(engine)["INV-T3"] == (None, None)

    # The repository: a taken thread writes nothing and leaves the unit of work usable.
    factory = SqlUnitOfWorkFactory(engine)
    with factory() as uow:
        assert not uow.investigations.add(*_case("INV-LATE", "C1", "2.0"))
        assert uow.investigations.add(*_case("INV-FREE", "C1", "3.0"))
        found = uow.investigations.by_thread("C1", "2.0")
        assert found is not None
        assert found.id == "INV-TIE-B"
    assert set(_threads(engine)) - set(after) == {"INV-T3", "INV-C3", "INV-FREE"}
    with factory() as uow:
        assert uow.investigations.get("INV-LATE") is None
        assert [e["event"] for e in uow.audit.entries("INV-FREE")] == ["investigation_started"]
        assert list(uow.audit.entries("INV-LATE")) == []
        assert uow.audit.verify()[1] is None


def test_an_upgrade_without_duplicates_changes_no_row(
    engine: sa.Engine, caplog: pytest.LogCaptureFixture
) -> None:
    command.upgrade(_config(engine), "0004")
    _insert(
        engine, _row("INV-1", "C1", "1.0"), _row("INV-2", "C1", "2.0"), _row("INV-3", None, None)
    )
    before = _threads(engine)
    with caplog.at_level(logging.WARNING):
        command.upgrade(_config(engine), "0005")
    assert _threads(engine) == before
    assert not [r for r in caplog.records if "migration=0005" in r.getMessage()]


def test_downgrade_and_upgrade_again(engine: sa.Engine) -> None:
    command.upgrade(_config(engine), "0005")
    command.downgrade(_config(engine), "0004")
    assert current_revision(engine) == "0004"
    # Duplicates are allowed again below 0005, and 0005 detaches them again.
    _insert(engine, _row("INV-A", "C1", "1.0", minutes=0), _row("INV-B", "C1", "1.0", minutes=1))
    command.upgrade(_config(engine), "0005")
    assert _threads(engine) == {"INV-A": ("C1", None), "INV-B": ("C1", "1.0")}


def test_the_migrated_investigations_table_matches_the_metadata(engine: sa.Engine) -> None:
    """`storage.tables` describes the investigations table as the migrations leave it."""
    command.upgrade(_config(engine), "head")

    def investigations_only(obj: Any, name: str | None, kind: str, *_: Any) -> bool:
        table = obj if kind == "table" else getattr(obj, "table", None)
        return table is not None and table.name == "investigations"

    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"include_object": investigations_only})
        assert compare_metadata(context, t.metadata) == []
