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

    def add(self, record: PolicyRecord, *, after: PolicyRecord | None) -> PolicyRecord:
        """Put `record` in force for its channel on top of `after` (audited
        "policy_in_force", with the version and the rules); returns it with its number.
        Raises PolicyConflictError when `after` is no longer the channel's latest: the
        number after it is taken, by another transaction committed or not (the unique index
        waits for it), so two decisions that read the same version never both write."""
        stored = record.model_copy(update={"number": (after.number if after else 0) + 1})
        try:
            self._insert(stored)
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
        return stored

    def _insert(self, record: PolicyRecord) -> None:
        self._conn.execute(
            t.channel_policies.insert().values(
                channel=record.channel,
                version=record.version,
                rules=json.dumps(record.rules, sort_keys=True, ensure_ascii=False),
                since=record.since,
                by=record.by,
                source=record.source,
                pause_id=record.pause_id,
                seq=record.number,
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
        number=values["seq"],
    )
