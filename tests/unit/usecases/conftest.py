"""A world for the use cases on the in-memory unit of work (`tests.support.fake_uow`).

The real agent loop runs on `OfflineModel` (deterministic, local) over small demo files; the
clock is moved by hand; every unit of work the use cases open is in `world.uow.log`.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.data.demo import generate
from agent.data.policy import Policy
from agent.dependencies import Dependencies, WorkflowSettings
from agent.domain import (
    ApprovalRequest,
    ApproverPolicy,
    Decision,
    Investigation,
    Outcome,
    PauseStatus,
)
from agent.models.offline import OfflineModel
from agent.usecases import UseCases, build_use_cases
from agent.usecases.common import Upload
from storage.blobs import LocalBlobStore
from tests.support.fake_uow import MemoryUnitOfWorkFactory, StoredPause

DEMO_ROWS = 200
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TTL = timedelta(hours=24)
LEASE = timedelta(minutes=15)
CHANGED_POLICY = Policy(amount_tolerance_minor=0, window_days_after=100)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.current = START

    def now(self) -> datetime:
        return self.current

    def advance(self, delta: timedelta) -> None:
        self.current += delta


@dataclass(frozen=True)
class Demo:
    orders: Path
    payments: Path
    other_payments: Path
    """Another payments export (another seed): a changed file for the same case."""
    truth: dict[str, Any]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    folder = tmp_path_factory.mktemp("demo")
    other = tmp_path_factory.mktemp("other")
    generate(DEMO_ROWS, folder, seed=5)
    generate(DEMO_ROWS, other, seed=6)
    assert (folder / "payments.csv").read_bytes() != (other / "payments.csv").read_bytes()
    return Demo(
        folder / "orders.csv",
        folder / "payments.csv",
        other / "payments.csv",
        json.loads((folder / "truth.json").read_text()),
    )


@dataclass
class World:
    """The use cases over one in-memory store, blob store and clock."""

    service: UseCases
    uow: MemoryUnitOfWorkFactory
    clock: FakeClock
    blobs: LocalBlobStore
    demo: Demo

    def use_cases(
        self, *, policy: Policy | None = None, approver_policy: ApproverPolicy | None = None
    ) -> UseCases:
        """Other use cases on the same store, blobs and clock (another process, or a restart)."""
        settings = self.service.deps.settings
        if policy is not None:
            settings = replace(settings, policy=policy)
        if approver_policy is not None:
            settings = replace(settings, approver_policy=approver_policy)
        return build_use_cases(
            Dependencies(self.uow, self.blobs, OfflineModel(), self.clock, settings)
        )

    def start(self, service: UseCases | None = None) -> ApprovalRequest:
        """A new case on both demo files, up to its first request (a confirmation)."""
        started = (service or self.service).intake.start(
            uploads(self.demo.orders, self.demo.payments), requested_by="alice"
        )
        assert started.request is not None
        return started.request

    # -- the committed store, read without opening a unit of work ------------------------------

    def pause(self, pause_id: str) -> StoredPause:
        return self.uow.store.pauses[pause_id]

    def status(self, pause_id: str) -> PauseStatus:
        return self.uow.store.pauses[pause_id].state.status

    def investigation(self, investigation_id: str) -> Investigation:
        return self.uow.store.investigations[investigation_id]

    def decisions(self, investigation_id: str) -> list[Decision]:
        return [d for d in self.uow.store.decisions if d.investigation_id == investigation_id]

    def outcomes(self, investigation_id: str) -> list[Outcome]:
        return [o for o in self.uow.store.outcomes if o.investigation_id == investigation_id]


def make_world(tmp_path: Path, demo: Demo, approver_policy: ApproverPolicy | None = None) -> World:
    uow = MemoryUnitOfWorkFactory()
    blobs = LocalBlobStore(tmp_path / "blobs")
    clock = FakeClock()
    settings = WorkflowSettings(
        approval_ttl=TTL,
        approver_policy=approver_policy or ApproverPolicy(),
        workdir=tmp_path / "work",
        claim_lease=LEASE,
    )
    service = build_use_cases(Dependencies(uow, blobs, OfflineModel(), clock, settings))
    return World(service, uow, clock, blobs, demo)


@pytest.fixture
def world(tmp_path: Path, demo: Demo) -> World:
    return make_world(tmp_path, demo)


def uploads(*paths: Path) -> list[Upload]:
    return [Upload(io.BytesIO(path.read_bytes()), path.name) for path in paths]
