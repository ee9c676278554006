"""Each channel's policy versions (`agent.ports.PolicyRepository`)."""

from __future__ import annotations

import json

import sqlalchemy as sa

from agent.channel_policy import PolicyRecord
from agent.errors import PolicyConflictError
from storage import tables as t
from storage.repositories.audit import SqlAuditLog


class SqlPolicyRepository:
    """Channel policies on one unit of work's connection; each change is audited in it."""

    def __init__(self, conn: sa.Connection, audit: SqlAuditLog) -> None:
        self._conn = conn
        self._audit = audit

    def in_force(self, channel: str) -> PolicyRecord | None:
        """The channel's latest record, or None (the channel is under the seed)."""
        row = self._conn.execute(
            sa.select(t.channel_policies)
            .where(t.channel_policies.c.channel == channel)
            .order_by(t.channel_policies.c.id.desc())
            .limit(1)
        ).first()
        return None if row is None else _record(row)

    def history(self, channel: str) -> list[PolicyRecord]:
        """The channel's records, oldest first."""
        rows = self._conn.execute(
            sa.select(t.channel_policies)
            .where(t.channel_policies.c.channel == channel)
            .order_by(t.channel_policies.c.id)
        )
        return [_record(row) for row in rows]

    def add(self, record: PolicyRecord) -> None:
        """Put `record` in force for its channel (audited "policy_in_force", with the
        version and the rules). Raises PolicyConflictError when another transaction put a
        version in force in the channel meanwhile (the channel's next number is taken)."""
        table = t.channel_policies
        last = self._conn.execute(
            sa.select(sa.func.max(table.c.seq)).where(table.c.channel == record.channel)
        ).scalar_one_or_none()
        try:
            self._insert(record, int(last or 0) + 1)
        except sa.exc.IntegrityError:
            raise PolicyConflictError(
                f"The policy of {record.channel} was changed by another decision meanwhile."
            ) from None
        self._audit.append(
            "policy_in_force",
            actor=record.by,
            pause_id=record.pause_id,
            detail={"channel": record.channel, "version": record.version, "rules": record.rules},
        )

    def _insert(self, record: PolicyRecord, seq: int) -> None:
        self._conn.execute(
            t.channel_policies.insert().values(
                channel=record.channel,
                version=record.version,
                rules=json.dumps(record.rules, sort_keys=True, ensure_ascii=False),
                since=record.since,
                by=record.by,
                source=record.source,
                pause_id=record.pause_id,
                seq=seq,
            )
        )


def _record(row: sa.Row[tuple[object, ...]]) -> PolicyRecord:
    values = row._mapping
    return PolicyRecord(
        channel=values["channel"],
        version=values["version"],
        rules=json.loads(values["rules"]),
        since=values["since"],
        by=values["by"],
        source=values["source"],
        pause_id=values["pause_id"],
    )
