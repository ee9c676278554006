"""Queries: what people and the bot read about cases; nothing here changes state."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent.data.schema import Role
from agent.dependencies import Dependencies
from agent.domain import (
    ApprovalRequest,
    BoundApproval,
    Investigation,
    InvestigationStatusReport,
    Outcome,
    PauseState,
    ToolExecution,
    phase_runs,
)
from agent.usecases.common import investigation_in, pending_in


class Queries:
    """Read-only views of investigations, requests, outcomes and files."""

    def __init__(self, deps: Dependencies) -> None:
        self.deps = deps

    def status(self, investigation_id: str) -> InvestigationStatusReport:
        """Everything saved about an investigation: snapshots as written, decisions, outcome,
        and how the outcome was computed (the agent's trace and the approval it ran under)."""
        with self.deps.uow() as uow:
            investigation = investigation_in(uow, investigation_id)
            pauses = uow.pauses.of_investigation(investigation_id)
            outcome = uow.outcomes.latest(investigation_id)
            trace = uow.traces.of_investigation(investigation_id)
            return InvestigationStatusReport(
                investigation=investigation,
                revisions=uow.investigations.revisions(investigation_id),
                pauses=pauses,
                decisions=uow.decisions.of_investigation(investigation_id),
                outcome=outcome,
                trace=trace,
                trace_phases=phase_runs(trace),
                bound_approval=bound_approval(outcome, pauses),
            )

    def pause(self, pause_id: str) -> PauseState | None:
        """A saved pause and where it stands, or None."""
        with self.deps.uow() as uow:
            return uow.pauses.get(pause_id)

    def pending_request(self, investigation_id: str) -> ApprovalRequest | None:
        """The request awaiting a decision, if any."""
        with self.deps.uow() as uow:
            return pending_in(uow, investigation_id)

    def find_by_thread(self, channel: str, thread_ts: str) -> Investigation | None:
        """The investigation a chat thread belongs to, if any."""
        with self.deps.uow() as uow:
            return uow.investigations.by_thread(channel, thread_ts)

    def recent(self, *, channel: str | None = None, limit: int = 10) -> list[Investigation]:
        """The newest investigations, optionally of one channel."""
        with self.deps.uow() as uow:
            return uow.investigations.recent(channel=channel, limit=limit)

    def trace(self, investigation_id: str) -> list[ToolExecution]:
        """The tools the agent ran on an investigation, in order."""
        with self.deps.uow() as uow:
            return uow.traces.of_investigation(investigation_id)

    @contextmanager
    def exceptions_file(self, outcome: Outcome) -> Iterator[Path | None]:
        """A local path to the outcome's exceptions CSV while the block runs (None if none)."""
        if outcome.export_digest is None:
            yield None
            return
        with self.deps.blobs.local_copy(outcome.export_digest) as path:
            yield path

    def columns(self, request: ApprovalRequest) -> dict[Role, list[str]]:
        """The header of each file of a request, for a person choosing a column."""
        found: dict[Role, list[str]] = {}
        for ref in request.files:
            found[ref.role] = self.deps.files.columns_of(ref)
        return found


def bound_approval(outcome: Outcome | None, pauses: list[PauseState]) -> BoundApproval | None:
    """The approval `outcome` was reconciled under, from its saved pause (None without an
    outcome): the request, who approved it and when, and the identities it covered."""
    if outcome is None:
        return None
    state = next((s for s in pauses if s.request.pause_id == outcome.pause_id), None)
    request = state.request if state is not None else None
    return BoundApproval(
        pause_id=outcome.pause_id,
        approved_by=state.decided_by if state is not None else None,
        approved_at=state.decided_at if state is not None else None,
        input_identity=outcome.input_identity,
        mapping_digest=outcome.mapping_digest,
        policy_version=request.policy_version if request is not None else "",
        authorization_identity=request.authorization_identity if request is not None else "",
    )
