"""What the core is given to work with: state, files, the model, time, and its settings.

Built once by the composition root (the settings are read there, once) and shared by the use
cases and the agent's turns.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Protocol

from strands.models import Model

from agent.casefiles import CaseFiles, SampleCache
from agent.channel_policy import channel_key
from agent.data.policy import Policy
from agent.domain import ApproverPolicy
from agent.ports import BlobStore, Clock, UnitOfWork, UnitOfWorkFactory

SYSTEM_ACTOR = "reconbot"
"""Who the audit log names for what reconbot does by itself (expiry, recovery)."""


class Progress(Protocol):
    """Told what a step is doing while it works, so a caller can show it (Slack's progress
    message, a line on a terminal's stderr)."""

    def tool_started(self, name: str) -> None:
        """The agent started the tool `name` (a long step: validating every row, reconciling)."""
        ...

    def tool_done(self, name: str) -> None:
        """The agent finished the tool `name`."""
        ...

    def rows_read(self, file_name: str, rows: int, share: float) -> None:
        """A file is being read: `rows` data rows so far, `share` of its bytes (0 to 1)."""
        ...


@dataclass(frozen=True)
class WorkflowSettings:
    """The settings the use cases need (read once by the caller, passed in)."""

    approval_ttl: timedelta = timedelta(hours=24)
    approver_policy: ApproverPolicy = field(default_factory=ApproverPolicy)
    max_upload_bytes: int = 200 << 20
    workdir: Path = Path("var/work")
    cache_max_bytes: int = 4 << 30
    cache_max_age: timedelta = timedelta(days=2)
    claim_lease: timedelta = timedelta(minutes=15)
    policy: Policy = field(default_factory=Policy)
    """The seed: every channel's policy until a change is approved for it (`policy_for`)."""
    seal_while_waiting: bool = True
    """Reconcile while a confirmation request waits, sealed until it is approved."""


@dataclass(frozen=True)
class Dependencies:
    """The outside world of the use cases: state, files, the model, time, settings.

    `owner` names this process in the claims it takes (host, pid, a random part), so that
    recovery can tell a claim whose process died from one still running.
    """

    uow: UnitOfWorkFactory
    blobs: BlobStore
    model: Model
    clock: Clock
    settings: WorkflowSettings
    samples: SampleCache = field(default_factory=SampleCache)
    """The heads and proposals of files, kept by the composition root across requests."""
    owner: str = field(
        default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    )

    def policy_for(self, channel: str | None, uow: UnitOfWork | None = None) -> Policy:
        """The policy in force in `channel` (None: the terminal's cases): the latest version
        put in force there, else the seed (`WorkflowSettings.policy`). Read in `uow` when
        given (a decision's own transaction), else in a unit of its own."""
        key = channel_key(channel)
        if uow is None:
            with self.uow() as work:
                record = work.policies.in_force(key)
        else:
            record = uow.policies.in_force(key)
        return record.policy() if record is not None else self.settings.policy

    def policy_of_version(
        self, channel: str | None, version: str, uow: UnitOfWork | None = None
    ) -> Policy | None:
        """The rules of `version` as they were in force in `channel` (a version put in force
        there, or the seed), or None when it never was (or its rules no longer make that
        version): what an approval given under that version reconciles under, though another
        was put in force since. Read in `uow` when given, else in a unit of its own."""
        if uow is None:
            with self.uow() as work:
                history = work.policies.history(channel_key(channel))
        else:
            history = uow.policies.history(channel_key(channel))
        for record in reversed(history):
            if record.version == version and record.policy().version == version:
                return record.policy()
        seed = self.settings.policy
        return seed if seed.version == version else None

    @cached_property
    def files(self) -> CaseFiles:
        """The one door to the cases' files (built once, on first use), with every cache of
        them: what the agent's turns, its tools and the use cases read files through."""
        settings = self.settings
        return CaseFiles(
            self.blobs,
            settings.workdir,
            policy=settings.policy,
            samples=self.samples,
            max_bytes=settings.cache_max_bytes,
            max_age=settings.cache_max_age,
        )


def utc_now() -> datetime:
    """The current time in UTC (the default clock's reading)."""
    return datetime.now(UTC)


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """The current time, UTC."""
        return utc_now()
