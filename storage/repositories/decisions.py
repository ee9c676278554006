"""Every decision, accepted or refused (`agent.ports.DecisionRepository`)."""

from __future__ import annotations

import sqlalchemy as sa

from agent.domain import Decision, RefusalReason
from storage import tables as t
from storage.repositories.audit import SqlAuditLog
from storage.repositories.rows import now, utc


class SqlDecisionRepository:
    """Decisions on one unit of work's connection; each is audited in it."""

    def __init__(self, conn: sa.Connection, audit: SqlAuditLog) -> None:
        self._conn = conn
        self._audit = audit

    def add(self, decision: Decision) -> None:
        """Append a decision (audited "decision_accepted" or "decision_refused")."""
        refusal = decision.refusal.value if decision.refusal else None
        self._conn.execute(
            t.decisions.insert().values(
                pause_id=decision.pause_id,
                investigation_id=decision.investigation_id,
                action=decision.action,
                actor=decision.actor,
                reason=decision.reason,
                accepted=decision.accepted,
                refusal=refusal,
                at=decision.at,
            )
        )
        self._audit.append(
            "decision_accepted" if decision.accepted else "decision_refused",
            actor=decision.actor,
            investigation_id=decision.investigation_id or None,
            pause_id=decision.pause_id,
            detail={"action": decision.action, "reason": decision.reason, "refusal": refusal},
        )

    def of_investigation(self, investigation_id: str) -> list[Decision]:
        """All decisions of an investigation, oldest first."""
        rows = self._conn.execute(
            sa.select(t.decisions)
            .where(t.decisions.c.investigation_id == investigation_id)
            .order_by(t.decisions.c.id)
        ).all()
        return [
            Decision(
                pause_id=row.pause_id,
                investigation_id=row.investigation_id,
                action=row.action,
                actor=row.actor,
                reason=row.reason,
                accepted=row.accepted,
                refusal=RefusalReason(row.refusal) if row.refusal else None,
                at=utc(row.at) or now(),
            )
            for row in rows
        ]
