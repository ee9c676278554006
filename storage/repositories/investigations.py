"""Investigations and the revisions of their inputs (`agent.ports.InvestigationRepository`)."""

from __future__ import annotations

import sqlalchemy as sa

from agent.data.schema import Role
from agent.domain import DatasetRef, Investigation, InvestigationStatus, Revision
from storage import tables as t
from storage.repositories.audit import SqlAuditLog
from storage.repositories.rows import now, revision_detail, to_investigation, utc


class SqlInvestigationRepository:
    """Investigations on one unit of work's connection; changes are audited in it."""

    def __init__(self, conn: sa.Connection, audit: SqlAuditLog) -> None:
        self._conn = conn
        self._audit = audit

    def add(self, investigation: Investigation, revision: Revision) -> bool:
        """Save a new investigation with its first revision (audited "investigation_started").

        False, and nothing written, when its chat thread has an investigation already (the
        unique thread index refused it; on PostgreSQL the insert waits for a concurrent one
        to commit first). The insert runs in a SAVEPOINT, so the refusal leaves the unit of
        work usable (PostgreSQL aborts the whole transaction otherwise). Any other integrity
        problem raises `sqlalchemy.exc.IntegrityError`.
        """
        try:
            with self._conn.begin_nested():
                self._conn.execute(
                    t.investigations.insert().values(
                        id=investigation.id,
                        status=investigation.status.value,
                        requested_by=investigation.requested_by,
                        channel=investigation.channel,
                        thread_ts=investigation.thread_ts,
                        team=investigation.team,
                        revision=revision.number,
                        created_at=investigation.created_at,
                        updated_at=investigation.created_at,
                    )
                )
        except sa.exc.IntegrityError:
            channel, thread_ts = investigation.channel, investigation.thread_ts
            if channel is None or thread_ts is None or self.by_thread(channel, thread_ts) is None:
                raise  # not the thread taken: some other integrity problem
            return False
        self._insert_revision(revision)
        self._audit.append(
            "investigation_started",
            actor=investigation.requested_by,
            investigation_id=investigation.id,
            detail=revision_detail(revision),
        )
        return True

    def get(self, investigation_id: str) -> Investigation | None:
        """The investigation, or None."""
        row = self._conn.execute(
            sa.select(t.investigations).where(t.investigations.c.id == investigation_id)
        ).one_or_none()
        return None if row is None else to_investigation(row)

    def set_status(
        self,
        investigation_id: str,
        status: InvestigationStatus,
        *,
        actor: str,
        only_from: tuple[InvestigationStatus, ...] = (),
    ) -> bool:
        """Record where the investigation stands; with `only_from`, only if it stands at one of
        those now (one conditional update). True if it changed (audited "investigation_status").
        """
        query = t.investigations.update().where(t.investigations.c.id == investigation_id)
        if only_from:
            query = query.where(t.investigations.c.status.in_([s.value for s in only_from]))
        changed = self._conn.execute(query.values(status=status.value, updated_at=now()))
        if changed.rowcount != 1:
            return False
        self._audit.append(
            "investigation_status",
            actor=actor,
            investigation_id=investigation_id,
            detail={"status": status.value},
        )
        return True

    def add_revision(self, revision: Revision, *, actor: str) -> None:
        """Make `revision` the investigation's current one (audited "revision_added").

        Nothing else changes: superseding the case's pending pauses is the caller's decision.
        """
        self._insert_revision(revision)
        self._conn.execute(
            t.investigations.update()
            .where(t.investigations.c.id == revision.investigation_id)
            .values(revision=revision.number, updated_at=now())
        )
        self._audit.append(
            "revision_added",
            actor=actor,
            investigation_id=revision.investigation_id,
            detail=revision_detail(revision),
        )

    def revisions(self, investigation_id: str) -> list[Revision]:
        """All revisions, oldest first, each with its files."""
        rows = self._conn.execute(
            sa.select(t.revisions)
            .where(t.revisions.c.investigation_id == investigation_id)
            .order_by(t.revisions.c.number)
        ).all()
        files = self._conn.execute(
            sa.select(t.datasets).where(t.datasets.c.investigation_id == investigation_id)
        ).all()
        by_revision: dict[int, dict[Role, DatasetRef]] = {}
        for f in files:
            by_revision.setdefault(f.revision, {})[Role(f.role)] = DatasetRef(
                role=Role(f.role),
                name=f.name,
                size=f.size,
                digest=f.digest,
                slack_file_id=f.slack_file_id,
            )
        return [
            Revision(
                investigation_id=investigation_id,
                number=row.number,
                files=by_revision.get(row.number, {}),
                input_identity=row.input_identity,
                created_at=utc(row.created_at) or now(),
                added_by=row.added_by,
            )
            for row in rows
        ]

    def recent(self, *, channel: str | None = None, limit: int = 20) -> list[Investigation]:
        """Recent investigations, newest first, optionally of one channel."""
        query = sa.select(t.investigations).order_by(t.investigations.c.created_at.desc())
        if channel is not None:
            query = query.where(t.investigations.c.channel == channel)
        return [to_investigation(row) for row in self._conn.execute(query.limit(limit))]

    def by_thread(self, channel: str, thread_ts: str) -> Investigation | None:
        """The investigation anchored on a chat thread (there is at most one), or None."""
        row = self._conn.execute(
            sa.select(t.investigations)
            .where(t.investigations.c.channel == channel)
            .where(t.investigations.c.thread_ts == thread_ts)
            .order_by(t.investigations.c.created_at.desc())
            .limit(1)
        ).one_or_none()
        return None if row is None else to_investigation(row)

    def _insert_revision(self, revision: Revision) -> None:
        self._conn.execute(
            t.revisions.insert().values(
                investigation_id=revision.investigation_id,
                number=revision.number,
                input_identity=revision.input_identity,
                created_at=revision.created_at,
                added_by=revision.added_by,
            )
        )
        for ref in revision.files.values():
            self._conn.execute(
                t.datasets.insert().values(
                    investigation_id=revision.investigation_id,
                    revision=revision.number,
                    role=ref.role.value,
                    name=ref.name,
                    size=ref.size,
                    digest=ref.digest,
                    slack_file_id=ref.slack_file_id,
                )
            )
