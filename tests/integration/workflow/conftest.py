"""Fixtures for the workflow on real databases: SQLite always, PostgreSQL when configured.

See `tests/support/databases.py` for how PostgreSQL is reached.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from strands.models import Model

from agent.data.demo import generate
from agent.dependencies import Dependencies, WorkflowSettings
from agent.domain import ApproverPolicy
from agent.models.offline import OfflineModel
from agent.usecases import UseCases, build_use_cases
from agent.usecases.common import Upload
from storage.blobs import LocalBlobStore
from storage.database import create_engine, migrate
from storage.unit_of_work import SqlUnitOfWorkFactory
from tests.support.databases import DATABASES, database_urls
from tests.support.saved import Saved

DEMO_ROWS = 2_000


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.current = datetime.now(UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, delta: timedelta) -> None:
        self.current += delta


@dataclass
class Demo:
    orders: Path
    payments: Path
    truth: dict[str, Any]


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    folder = tmp_path_factory.mktemp("demo")
    generate(DEMO_ROWS, folder, seed=11)
    return Demo(
        folder / "orders.csv",
        folder / "payments.csv",
        json.loads((folder / "truth.json").read_text()),
    )


@pytest.fixture(params=DATABASES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from database_urls(request.param, tmp_path)


@dataclass
class World:
    service: UseCases
    uow: SqlUnitOfWorkFactory
    saved: Saved
    clock: FakeClock
    blobs: LocalBlobStore
    engine: sa.Engine
    url: str
    blob_dir: Path


def make_world(
    url: str,
    tmp_path: Path,
    approver_policy: ApproverPolicy | None = None,
    model: Model | None = None,
    *,
    seal: bool = True,
) -> World:
    engine = create_engine(url)
    migrate(engine)
    uow = SqlUnitOfWorkFactory(engine)
    blobs = LocalBlobStore(tmp_path / "blobs")
    clock = FakeClock()
    settings = WorkflowSettings(
        approval_ttl=timedelta(hours=24),
        approver_policy=approver_policy or ApproverPolicy(),
        workdir=tmp_path / "work",
        seal_while_waiting=seal,
    )
    service = build_use_cases(Dependencies(uow, blobs, model or OfflineModel(), clock, settings))
    return World(service, uow, Saved(uow), clock, blobs, engine, url, tmp_path / "blobs")


@pytest.fixture
def world(database_url: str, tmp_path: Path) -> Iterator[World]:
    w = make_world(database_url, tmp_path)
    yield w
    w.engine.dispose()


def uploads(*paths: Path) -> list[Upload]:
    return [Upload(path.open("rb"), path.name) for path in paths]
