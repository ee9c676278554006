"""The interfaces the core needs from the outside world; `storage` implements them.

State is reached through a unit of work: `with uow_factory() as uow:` opens one transaction,
and the repositories of every aggregate (`uow.investigations`, `uow.pauses`, ...) work inside
it; leaving the block commits, an exception rolls everything back. So one decision (its checks'
reads, the claim, the decision record, the case's status) is one transaction. Never hold a unit
of work open across an agent turn: turns take minutes.

A method that changes a status is one conditional update: it returns False when another caller
got there first. Repositories persist what the core decided (a transition from `agent.pause`,
a record); they do not decide. They append the matching audit entry in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, Protocol

from agent.channel_policy import PolicyRecord
from agent.domain import (
    ApprovalRequest,
    Decision,
    Investigation,
    InvestigationStatus,
    Outcome,
    PauseState,
    Revision,
    ToolExecution,
)
from agent.pause import Transition


@dataclass(frozen=True)
class StoredBlob:
    """Bytes kept by a blob store: their digest (`sha256:…`, also their key) and size."""

    digest: str
    size: int


class BlobStore(Protocol):
    """Content-addressed storage for uploaded files and exports."""

    def put(
        self,
        stream: BinaryIO,
        *,
        max_bytes: int | None = None,
        on_readable: Callable[[StoredBlob], None] | None = None,
    ) -> StoredBlob:
        """Store the bytes read from `stream`, hashing them in the same pass; return once they
        are durable (synced to disk, or in the bucket).

        `on_readable`, if given, hears the blob once, before `put` returns, as soon as
        `local_copy` reads its bytes: possibly before they are durable, so that work that only
        reads them (a file's first read) runs while they are synced. What it raises is
        logged, not raised. Nothing may be recorded about the blob before `put` returns: a
        crash before then may lose it.
        """
        ...

    def local_copy(self, digest: str) -> AbstractContextManager[Path]:
        """A path on local disk holding the blob's bytes, for as long as the context lasts."""
        ...

    def exists(self, digest: str) -> bool:
        """Whether the store holds a blob with this digest."""
        ...


class Clock(Protocol):
    """The time, so that expiry and leases can be tested."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


@dataclass(frozen=True)
class Claim:
    """Who holds a claimed pause and until when (a lease that recovery may take over)."""

    owner: str
    lease_until: datetime


class InvestigationRepository(Protocol):
    """Investigations and the revisions of their inputs."""

    def add(self, investigation: Investigation, revision: Revision) -> bool:
        """Save a new investigation with its first revision. A chat thread has at most one
        investigation: False, and nothing saved, when another caller got there first."""
        ...

    def get(self, investigation_id: str) -> Investigation | None:
        """The investigation, or None."""
        ...

    def set_status(
        self,
        investigation_id: str,
        status: InvestigationStatus,
        *,
        actor: str,
        only_from: tuple[InvestigationStatus, ...] = (),
    ) -> bool:
        """Record where the investigation stands; with `only_from`, only from those statuses
        (one conditional update). True if it changed."""
        ...

    def add_revision(self, revision: Revision, *, actor: str) -> None:
        """Make `revision` the investigation's current one."""
        ...

    def revisions(self, investigation_id: str) -> list[Revision]:
        """All revisions, oldest first."""
        ...

    def recent(self, *, channel: str | None = None, limit: int = 20) -> list[Investigation]:
        """Recent investigations, newest first, optionally of one channel."""
        ...

    def by_thread(self, channel: str, thread_ts: str) -> Investigation | None:
        """The investigation anchored on a chat thread (there is at most one), or None."""
        ...


class PauseRepository(Protocol):
    """Pauses: the snapshot written once, and where it stands."""

    def add(self, request: ApprovalRequest) -> None:
        """Save the snapshot as a new pending pause."""
        ...

    def get(self, pause_id: str) -> PauseState | None:
        """The pause and its status, or None."""
        ...

    def lock(self, pause_id: str) -> PauseState | None:
        """The pause, locked until the unit of work ends, or None.

        Decisions read a pause this way: two decisions on one pause queue, and the second sees
        the first one's outcome, so the guard's answer and the change it allows are one step.
        """
        ...

    def of_investigation(self, investigation_id: str) -> list[PauseState]:
        """All pauses of an investigation, oldest first."""
        ...

    def open_in_channel(self, channel: str | None) -> list[PauseState]:
        """The pauses of a chat channel's cases (None: the cases outside any) a person may
        still approve: pending or failed (`pause.OPEN_STATUSES`), oldest first."""
        ...

    def apply(
        self,
        pause_id: str,
        transition: Transition,
        *,
        actor: str,
        at: datetime,
        reason: str | None = None,
        claim: Claim | None = None,
        owner: str | None = None,
    ) -> bool:
        """Persist `transition` (its rule in `agent.pause.RULES`) if the pause still stands
        where the rule allows it from (and, for owner-only rules, `owner` holds its claim);
        False if another caller moved it first."""
        ...

    def claims(self) -> list[tuple[str, Claim, int]]:
        """Claimed pauses with (pause id, claim, attempts), for recovery to examine."""
        ...

    def due(self, now: datetime) -> list[str]:
        """Pending pauses whose expiry has passed."""
        ...


class DecisionRepository(Protocol):
    """Every decision, accepted or refused: the audit trail people read."""

    def add(self, decision: Decision) -> None:
        """Append a decision."""
        ...

    def of_investigation(self, investigation_id: str) -> list[Decision]:
        """All decisions of an investigation, oldest first."""
        ...


class OutcomeRepository(Protocol):
    """The results of resumed phases."""

    def add(self, outcome: Outcome) -> None:
        """Save an outcome."""
        ...

    def latest(self, investigation_id: str) -> Outcome | None:
        """The newest outcome of an investigation, or None."""
        ...

    def latest_in_channel(self, channel: str | None) -> Outcome | None:
        """The newest outcome of a chat channel's cases (None: the cases outside any), or
        None."""
        ...


class TraceRepository(Protocol):
    """The tool executions of the agent's invocations."""

    def add(self, executions: list[ToolExecution]) -> None:
        """Append the tool executions of one invocation."""
        ...

    def of_investigation(self, investigation_id: str) -> list[ToolExecution]:
        """The trace, in order."""
        ...


class ConversationRepository(Protocol):
    """The agent's memory of an investigation."""

    def append(self, investigation_id: str, messages: list[dict[str, Any]]) -> None:
        """Append one invocation's messages, keeping what another process appended meanwhile."""
        ...

    def load(self, investigation_id: str) -> list[dict[str, Any]]:
        """The saved conversation, or an empty one."""
        ...


class PolicyRepository(Protocol):
    """Each channel's policy versions, as they were put in force (`agent.channel_policy`)."""

    def in_force(self, channel: str) -> PolicyRecord | None:
        """The channel's policy in force: its latest record (None: none yet, the seed)."""
        ...

    def history(self, channel: str) -> list[PolicyRecord]:
        """The channel's records, oldest first."""
        ...

    def add(self, record: PolicyRecord, *, after: PolicyRecord | None) -> PolicyRecord:
        """Put `record` in force for its channel on top of `after`, the record in force when
        the decision read it (None: the seed, no record yet); audited. Returns it as stored
        (with its number). Raises PolicyConflictError when `after` is no longer the channel's
        latest: another decision put a version in force meanwhile (never both)."""
        ...


class AuditLog(Protocol):
    """The hash-chained audit log."""

    def append(
        self,
        event: str,
        *,
        actor: str,
        investigation_id: str | None = None,
        pause_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append an entry."""
        ...

    def verify(self) -> tuple[int, int | None]:
        """Check the chain: (entries checked, sequence of the first broken entry or None)."""
        ...

    def entries(self, investigation_id: str) -> Iterator[dict[str, Any]]:
        """The audit entries of an investigation, in order."""
        ...


class UnitOfWork(Protocol):
    """One transaction over every aggregate's repository (see the module docstring)."""

    investigations: InvestigationRepository
    pauses: PauseRepository
    decisions: DecisionRepository
    outcomes: OutcomeRepository
    traces: TraceRepository
    conversations: ConversationRepository
    policies: PolicyRepository
    audit: AuditLog

    def __enter__(self) -> UnitOfWork:
        """Begin the transaction."""
        ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Commit if the block ended normally, roll back if it raised."""
        ...


class UnitOfWorkFactory(Protocol):
    """Opens units of work: `with uow() as work: ...`."""

    def __call__(self) -> UnitOfWork:
        """A new unit of work, not yet begun."""
        ...


@dataclass
class Upload:
    """A file handed to the investigation: its bytes, its name, and where it came from."""

    stream: BinaryIO
    name: str
    slack_file_id: str | None = None
    # A file the operator named on their own machine (the terminal): no upload limit applies.
    local: bool = False
