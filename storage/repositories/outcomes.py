"""The results of resumed phases (`agent.ports.OutcomeRepository`)."""

from __future__ import annotations

import sqlalchemy as sa

from agent.domain import Outcome
from storage import tables as t
from storage.repositories.audit import SqlAuditLog

# `OutcomeRepository.add` names no actor: the outcome is reconbot's own work.
SYSTEM_ACTOR = "reconbot"


class SqlOutcomeRepository:
    """Outcomes on one unit of work's connection; each is audited in it."""

    def __init__(self, conn: sa.Connection, audit: SqlAuditLog) -> None:
        self._conn = conn
        self._audit = audit

    def add(self, outcome: Outcome) -> None:
        """Save an outcome (audited "outcome_saved"). A pause has at most one: a second raises
        `sqlalchemy.exc.IntegrityError`. Consuming the pause is a separate transition."""
        self._conn.execute(
            t.outcomes.insert().values(
                investigation_id=outcome.investigation_id,
                pause_id=outcome.pause_id,
                document=outcome.model_dump_json(),
                created_at=outcome.created_at,
            )
        )
        self._audit.append(
            "outcome_saved",
            actor=SYSTEM_ACTOR,
            investigation_id=outcome.investigation_id,
            pause_id=outcome.pause_id,
            detail={"counts": outcome.counts, "export_digest": outcome.export_digest},
        )

    def latest(self, investigation_id: str) -> Outcome | None:
        """The newest outcome of an investigation, or None."""
        document = self._conn.execute(
            sa.select(t.outcomes.c.document)
            .where(t.outcomes.c.investigation_id == investigation_id)
            .order_by(t.outcomes.c.id.desc())
            .limit(1)
        ).scalar_one_or_none()
        return None if document is None else Outcome.model_validate_json(document)

    def latest_in_channel(self, channel: str | None) -> Outcome | None:
        """The newest outcome of a chat channel's cases (None: the cases outside any), or
        None: one query, however many cases the channel has."""
        cases = t.investigations
        where = cases.c.channel.is_(None) if channel is None else cases.c.channel == channel
        document = self._conn.execute(
            sa.select(t.outcomes.c.document)
            .join(cases, cases.c.id == t.outcomes.c.investigation_id)
            .where(where)
            .order_by(t.outcomes.c.created_at.desc(), t.outcomes.c.id.desc())
            .limit(1)
        ).scalar_one_or_none()
        return None if document is None else Outcome.model_validate_json(document)

    def count(self, pause_id: str) -> int:
        """How many outcomes a pause has (never more than one; for tests and checks)."""
        return int(
            self._conn.execute(
                sa.select(sa.func.count()).where(t.outcomes.c.pause_id == pause_id)
            ).scalar_one()
        )
