"""Queries: what people and the bot read about cases; nothing here changes state."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from agent.data.schema import Role
from agent.dependencies import Dependencies
from agent.domain import (
    ApprovalRequest,
    Investigation,
    InvestigationStatusReport,
    Outcome,
    PauseState,
    ToolExecution,
)
from agent.usecases.common import investigation_in, pending_in


class Queries:
    """Read-only views of investigations, requests, outcomes and files."""

    def __init__(self, deps: Dependencies) -> None:
        self.deps = deps

    def status(self, investigation_id: str) -> InvestigationStatusReport:
        """Everything saved about an investigation: snapshots as written, decisions, outcome."""
        with self.deps.uow() as uow:
            return InvestigationStatusReport(
                investigation=investigation_in(uow, investigation_id),
                revisions=uow.investigations.revisions(investigation_id),
                pauses=uow.pauses.of_investigation(investigation_id),
                decisions=uow.decisions.of_investigation(investigation_id),
                outcome=uow.outcomes.latest(investigation_id),
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
            fetch = partial(self.deps.blobs.local_copy, ref.digest)
            sample = self.deps.samples.sample(ref.digest, ref.name, fetch)
            found[ref.role] = list(sample.layout.columns)
        return found
