"""The interfaces the core needs from the outside world; `storage` implements them.

Every method that changes a status is one conditional update: it returns False (or None) when
another caller got there first, and it appends its audit entry in the same transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from agent.domain import (
    ApprovalRequest,
    Decision,
    Investigation,
    InvestigationStatus,
    Outcome,
    PauseState,
    PauseStatus,
    Revision,
    ToolExecution,
)


@dataclass(frozen=True)
class StoredBlob:
    """Bytes kept by a blob store: their digest (`sha256:…`, also their key) and size."""

    digest: str
    size: int


class BlobStore(Protocol):
    """Content-addressed storage for uploaded files and exports."""

    def put(self, stream: BinaryIO, *, max_bytes: int | None = None) -> StoredBlob:
        """Store the bytes read from `stream`, hashing them in the same pass."""
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


class Repository(Protocol):
    """The saved state of investigations, pauses, decisions, outcomes, traces and the audit log."""

    # Investigations and revisions
    def create_investigation(self, investigation: Investigation, revision: Revision) -> None:
        """Save a new investigation with its first revision."""
        ...

    def get_investigation(self, investigation_id: str) -> Investigation | None:
        """The investigation, or None."""
        ...

    def set_investigation_status(
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

    def add_revision(self, revision: Revision, *, actor: str, reason: str) -> list[str]:
        """Make `revision` current; supersede pending pauses. Returns the superseded pause ids."""
        ...

    def revisions(self, investigation_id: str) -> list[Revision]:
        """All revisions, oldest first."""
        ...

    def list_investigations(
        self, *, channel: str | None = None, limit: int = 20
    ) -> list[Investigation]:
        """Recent investigations, newest first, optionally of one channel."""
        ...

    def find_investigation(self, channel: str, thread_ts: str) -> Investigation | None:
        """The newest investigation anchored on a chat thread, or None."""
        ...

    # Pauses and decisions
    def record_pause(self, request: ApprovalRequest) -> list[str]:
        """Save the snapshot as a pending pause; supersede other pending pauses of the case."""
        ...

    def get_pause(self, pause_id: str) -> PauseState | None:
        """The pause and its status, or None."""
        ...

    def pauses(self, investigation_id: str) -> list[PauseState]:
        """All pauses of an investigation, oldest first."""
        ...

    def set_message_ts(self, pause_id: str, message_ts: str) -> None:
        """Remember the chat message that shows the pause (not part of the snapshot)."""
        ...

    def transition_pause(
        self,
        pause_id: str,
        *,
        from_statuses: tuple[PauseStatus, ...],
        to: PauseStatus,
        actor: str,
        reason: str | None = None,
        claim: Claim | None = None,
    ) -> bool:
        """Move a pause from one of `from_statuses` to `to`; False if another caller won."""
        ...

    def take_over_claim(self, pause_id: str, *, old_owner: str, claim: Claim) -> bool:
        """Move a stale claim to a new owner (recovery); False if another caller won."""
        ...

    def stale_claims(self, now: datetime) -> list[tuple[str, Claim, int]]:
        """Claimed pauses with (pause id, claim, attempts) for recovery to examine."""
        ...

    def due_pauses(self, now: datetime) -> list[str]:
        """Pending pauses whose expiry has passed."""
        ...

    def record_decision(self, decision: Decision) -> None:
        """Append a decision (accepted or refused) and its audit entry."""
        ...

    def decisions(self, investigation_id: str) -> list[Decision]:
        """All decisions of an investigation, oldest first."""
        ...

    # Outcomes
    def complete(self, outcome: Outcome, *, owner: str) -> bool:
        """Save the outcome and mark its pause consumed, in one transaction; False if not ours."""
        ...

    def get_outcome(self, investigation_id: str) -> Outcome | None:
        """The newest outcome of an investigation, or None."""
        ...

    # The agent's memory and trace
    def record_tool_executions(self, executions: list[ToolExecution]) -> None:
        """Append the tool executions of one invocation."""
        ...

    def tool_executions(self, investigation_id: str) -> list[ToolExecution]:
        """The trace, in order."""
        ...

    def append_conversation(self, investigation_id: str, messages: list[dict[str, Any]]) -> None:
        """Append one invocation's messages to the saved conversation, atomically."""
        ...

    def load_conversation(self, investigation_id: str) -> list[dict[str, Any]]:
        """The saved conversation, or an empty one."""
        ...

    # Audit and Slack deliveries
    def audit(
        self,
        event: str,
        *,
        actor: str,
        investigation_id: str | None = None,
        pause_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append an entry to the hash-chained audit log."""
        ...

    def verify_audit(self) -> tuple[int, int | None]:
        """Check the chain: (entries checked, sequence of the first broken entry or None)."""
        ...

    def audit_entries(self, investigation_id: str) -> Iterator[dict[str, Any]]:
        """The audit entries of an investigation, in order."""
        ...

    def mark_event_processed(
        self,
        event_id: str,
        payload: dict[str, Any] | None = None,
        hold_until: datetime | None = None,
    ) -> bool:
        """Record a delivered event id; False if it was already processed. With `payload`,
        its work resumes elsewhere unless finished before `hold_until`."""
        ...

    def finish_event(self, event_id: str) -> None:
        """The event's work is done; never resume it."""
        ...

    def take_unfinished_events(
        self, now: datetime, hold_until: datetime
    ) -> list[tuple[str, dict[str, Any]]]:
        """Take the unfinished events whose hold ran out (each by one caller only)."""
        ...
