"""What the agent did and said: tool executions (`agent.ports.TraceRepository`) and the saved
conversation (`agent.ports.ConversationRepository`)."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from agent.domain import ToolExecution
from storage import tables as t
from storage.repositories.rows import now


class SqlTraceRepository:
    """Tool executions on one unit of work's connection."""

    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def add(self, executions: list[ToolExecution]) -> None:
        """Append the tool executions of one invocation, in order."""
        if executions:
            self._conn.execute(t.tool_executions.insert(), [e.model_dump() for e in executions])

    def of_investigation(self, investigation_id: str) -> list[ToolExecution]:
        """The trace, in order."""
        rows = self._conn.execute(
            sa.select(t.tool_executions)
            .where(t.tool_executions.c.investigation_id == investigation_id)
            .order_by(t.tool_executions.c.id)
        ).all()
        return [
            ToolExecution(
                investigation_id=row.investigation_id,
                invocation_id=row.invocation_id,
                phase=row.phase,
                tool_use_id=row.tool_use_id,
                name=row.name,
                status=row.status,
                duration_ms=row.duration_ms,
                detail=row.detail,
            )
            for row in rows
        ]


class SqlConversationRepository:
    """The agent's memory of each investigation, on one unit of work's connection."""

    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def append(self, investigation_id: str, messages: list[dict[str, Any]]) -> None:
        """Append one invocation's messages, keeping what another process appended meanwhile.

        The row is read `FOR UPDATE` (on SQLite the transaction holds the write lock already),
        so concurrent appends queue and each adds to the other's. Two first appends race on the
        insert: the loser's insert runs in a SAVEPOINT, so its IntegrityError leaves the unit of
        work usable (PostgreSQL aborts the whole transaction otherwise); it then re-reads the
        winner's row, locked, and appends to it.
        """
        current = self._locked(investigation_id)
        if current is None:
            text = _dump(messages)
            try:
                with self._conn.begin_nested():
                    self._conn.execute(
                        t.conversations.insert().values(
                            investigation_id=investigation_id, messages=text, updated_at=now()
                        )
                    )
                return
            except sa.exc.IntegrityError:
                current = self._locked(investigation_id)
                if current is None:
                    raise  # not a race on the first insert: some other integrity problem
        self._conn.execute(
            t.conversations.update()
            .where(t.conversations.c.investigation_id == investigation_id)
            .values(messages=_dump([*current, *messages]), updated_at=now())
        )

    def load(self, investigation_id: str) -> list[dict[str, Any]]:
        """The saved conversation, or an empty one."""
        text = self._conn.execute(
            sa.select(t.conversations.c.messages).where(
                t.conversations.c.investigation_id == investigation_id
            )
        ).scalar_one_or_none()
        return [] if text is None else list(json.loads(text))

    def _locked(self, investigation_id: str) -> list[dict[str, Any]] | None:
        text = self._conn.execute(
            sa.select(t.conversations.c.messages)
            .where(t.conversations.c.investigation_id == investigation_id)
            .with_for_update()
        ).scalar_one_or_none()
        return None if text is None else list(json.loads(text))


def _dump(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, ensure_ascii=False, default=str)
