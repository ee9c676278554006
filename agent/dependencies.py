"""What the core is given to work with: state, files, the model, time, and its settings.

Built once by the composition root (the settings are read there, once) and shared by the use
cases and the agent's turns.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from strands.models import Model

from agent.data.policy import Policy
from agent.domain import ApproverPolicy
from agent.ports import BlobStore, Clock, UnitOfWorkFactory

SYSTEM_ACTOR = "reconbot"
"""Who the audit log names for what reconbot does by itself (expiry, recovery)."""

Progress = Callable[[str], None]
"""Told the name of each tool as the agent finishes it, so a caller can show progress."""


@dataclass(frozen=True)
class WorkflowSettings:
    """The settings the use cases need (read once by the caller, passed in)."""

    approval_ttl: timedelta = timedelta(hours=24)
    approver_policy: ApproverPolicy = field(default_factory=ApproverPolicy)
    max_upload_bytes: int = 200 << 20
    workdir: Path = Path("var/work")
    claim_lease: timedelta = timedelta(minutes=15)
    policy: Policy = field(default_factory=Policy)


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
    owner: str = field(
        default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    )


def utc_now() -> datetime:
    """The current time in UTC (the default clock's reading)."""
    return datetime.now(UTC)


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """The current time, UTC."""
        return utc_now()
