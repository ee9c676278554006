"""What the tests read back from the saved state, each read its own unit of work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from agent.domain import Decision, Investigation, Outcome, PauseState, ToolExecution
from agent.ports import Claim, UnitOfWork, UnitOfWorkFactory

T = TypeVar("T")


class Saved:
    """Read-only views of the database a test's use cases wrote to."""

    def __init__(self, uow: UnitOfWorkFactory) -> None:
        self.uow = uow

    def _read(self, read: Callable[[UnitOfWork], T]) -> T:
        with self.uow() as uow:
            return read(uow)

    def pause(self, pause_id: str) -> PauseState | None:
        return self._read(lambda u: u.pauses.get(pause_id))

    def outcome(self, investigation_id: str) -> Outcome | None:
        return self._read(lambda u: u.outcomes.latest(investigation_id))

    def outcome_count(self, pause_id: str) -> int:
        return self._read(lambda u: u.outcomes.count(pause_id))  # type: ignore[attr-defined,no-any-return]

    def decisions(self, investigation_id: str) -> list[Decision]:
        return self._read(lambda u: u.decisions.of_investigation(investigation_id))

    def investigation(self, investigation_id: str) -> Investigation | None:
        return self._read(lambda u: u.investigations.get(investigation_id))

    def investigations(self) -> list[Investigation]:
        return self._read(lambda u: u.investigations.recent())

    def conversation(self, investigation_id: str) -> list[dict[str, Any]]:
        return self._read(lambda u: u.conversations.load(investigation_id))

    def claims(self) -> list[tuple[str, Claim, int]]:
        return self._read(lambda u: u.pauses.claims())

    def trace(self, investigation_id: str) -> list[ToolExecution]:
        return self._read(lambda u: u.traces.of_investigation(investigation_id))

    def verify_audit(self) -> tuple[int, int | None]:
        return self._read(lambda u: u.audit.verify())

    def audit_entries(self, investigation_id: str) -> list[dict[str, Any]]:
        return self._read(lambda u: list(u.audit.entries(investigation_id)))
