"""What the use cases share: uploads, ids, and reading an investigation inside a unit of work."""

from __future__ import annotations

from agent.domain import ApprovalRequest, Investigation, PauseState, PauseStatus, Revision
from agent.errors import UnknownInvestigationError, WorkflowError
from agent.ports import UnitOfWork
from agent.ports import Upload as Upload  # where the use cases' callers have found it


def investigation_in(uow: UnitOfWork, investigation_id: str) -> Investigation:
    """The investigation, or UnknownInvestigationError naming the id a person gave."""
    investigation = uow.investigations.get(investigation_id)
    if investigation is None:
        raise unknown_investigation(investigation_id)
    return investigation


def current_revision(uow: UnitOfWork, investigation_id: str) -> Revision:
    """The investigation's newest revision (every investigation has one)."""
    revisions = uow.investigations.revisions(investigation_id)
    if not revisions:
        raise WorkflowError(f"Investigation {investigation_id} has no files yet.")
    return revisions[-1]


def pending_in(uow: UnitOfWork, investigation_id: str) -> ApprovalRequest | None:
    """The case's request awaiting a decision, if any (there is at most one)."""
    for state in reversed(uow.pauses.of_investigation(investigation_id)):
        if state.status is PauseStatus.PENDING:
            return state.request
    return None


def unknown_investigation(investigation_id: str) -> UnknownInvestigationError:
    """The error for an id with no investigation; the bot words one a person may not see the
    same way, so that an answer never tells the two apart."""
    return UnknownInvestigationError(f"There is no investigation {investigation_id}.")


def request_stood(pauses: list[PauseState], revision: Revision) -> bool:
    """Whether a request of `revision` stands or stood (pending, decided, expired): one that
    was only superseded does not count, so a turn cut off after an edit left none."""
    return any(
        p.request.revision == revision.number and p.status is not PauseStatus.SUPERSEDED
        for p in pauses
    )
