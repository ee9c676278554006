"""Conversions between stored rows and the domain's values, shared by the repositories."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from agent.domain import (
    ApprovalRequest,
    Investigation,
    InvestigationStatus,
    PauseState,
    PauseStatus,
    Revision,
)


def utc(value: datetime | None) -> datetime | None:
    """A stored time as timezone-aware UTC (SQLite reads them back naive; all are UTC)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def now() -> datetime:
    """The wall-clock time, UTC: for bookkeeping columns (`updated_at`, audit times)."""
    return datetime.now(UTC)


def to_investigation(row: sa.Row[Any]) -> Investigation:
    """An `investigations` row as an `Investigation`."""
    return Investigation(
        id=row.id,
        status=InvestigationStatus(row.status),
        requested_by=row.requested_by,
        channel=row.channel,
        thread_ts=row.thread_ts,
        team=row.team,
        revision=row.revision,
        created_at=utc(row.created_at) or now(),
    )


def to_pause_state(row: sa.Row[Any]) -> PauseState:
    """A `pauses` row as a `PauseState` (its snapshot parsed back into the request)."""
    return PauseState(
        request=ApprovalRequest.model_validate_json(row.snapshot),
        status=PauseStatus(row.status),
        decided_by=row.decided_by,
        decided_at=utc(row.decided_at),
        reason=row.reason,
        message_ts=row.message_ts,
    )


def revision_detail(revision: Revision) -> dict[str, Any]:
    """What the audit log records of a revision: its number, input identity and file digests."""
    return {
        "revision": revision.number,
        "input_identity": revision.input_identity,
        "files": {role.value: ref.digest for role, ref in revision.files.items()},
    }
