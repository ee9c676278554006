"""The hash-chained audit log.

Each entry's hash covers the previous entry's hash and the entry itself (canonical JSON), from
`GENESIS`; the one-row `audit_head` table holds the chain's last sequence number and hash.
Writing locks that row (`FOR UPDATE`), so concurrent transactions never fork the chain.

Entries appended in a unit of work are written when it commits (`flush`), as its last step:
the head's lock is then the last lock a transaction takes and is held only while it commits.
Taken earlier, it would be held while the transaction goes on to lock other rows (a pause,
an investigation) that a second transaction may hold while waiting for the head: a deadlock.
A rolled-back unit of work writes nothing, so the chain records only what happened.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from agent.identity import canonical_json
from storage import tables as t
from storage.repositories.rows import now

GENESIS = "sha256:" + "0" * 64


def entry_hash(prev_hash: str, entry: dict[str, Any]) -> str:
    """The hash of `entry` chained after `prev_hash` (the stored format: do not change it)."""
    return "sha256:" + hashlib.sha256(prev_hash.encode() + canonical_json(entry)).hexdigest()


@dataclass(frozen=True)
class _Pending:
    event: str
    actor: str
    investigation_id: str | None
    pause_id: str | None
    detail: dict[str, Any]


class SqlAuditLog:
    """The audit log of one unit of work's connection (`agent.ports.AuditLog`)."""

    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn
        self._pending: list[_Pending] = []

    def append(
        self,
        event: str,
        *,
        actor: str,
        investigation_id: str | None = None,
        pause_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append an entry; it is written with the transaction (see the module docstring)."""
        canonical_json(detail or {})  # refuse what cannot be hashed now, not at commit
        self._pending.append(_Pending(event, actor, investigation_id, pause_id, detail or {}))

    def flush(self) -> None:
        """Write the appended entries to the chain, locking its head until the transaction ends.

        The unit of work calls this just before it commits; reading the log calls it first too.
        """
        if not self._pending:
            return
        head = self._conn.execute(
            sa.select(t.audit_head.c.seq, t.audit_head.c.hash)
            .where(t.audit_head.c.id == 1)
            .with_for_update()
        ).one()
        seq, prev_hash = head.seq, head.hash
        at = now().isoformat()
        for pending in self._pending:
            seq += 1
            entry = {
                "seq": seq,
                "at": at,
                "event": pending.event,
                "actor": pending.actor,
                "investigation_id": pending.investigation_id,
                "pause_id": pending.pause_id,
                "detail": pending.detail,
            }
            hashed = entry_hash(prev_hash, entry)
            self._conn.execute(
                t.audit_log.insert().values(
                    {
                        **entry,
                        "detail": canonical_json(pending.detail).decode(),
                        "prev_hash": prev_hash,
                        "hash": hashed,
                    }
                )
            )
            prev_hash = hashed
        self._conn.execute(
            t.audit_head.update().where(t.audit_head.c.id == 1).values(seq=seq, hash=prev_hash)
        )
        self._pending.clear()

    def verify(self) -> tuple[int, int | None]:
        """Check the chain: (entries checked, sequence number of the first bad entry or None)."""
        self.flush()
        prev = GENESIS
        checked = 0
        for row in self._conn.execute(sa.select(t.audit_log).order_by(t.audit_log.c.seq)):
            entry = {
                "seq": row.seq,
                "at": row.at,
                "event": row.event,
                "actor": row.actor,
                "investigation_id": row.investigation_id,
                "pause_id": row.pause_id,
                "detail": json.loads(row.detail),
            }
            if (
                row.seq != checked + 1
                or row.prev_hash != prev
                or row.hash != entry_hash(prev, entry)
            ):
                return checked, row.seq
            prev = row.hash
            checked += 1
        head = self._conn.execute(sa.select(t.audit_head).where(t.audit_head.c.id == 1)).one()
        if head.seq != checked or head.hash != prev:
            return checked, checked + 1
        return checked, None

    def entries(self, investigation_id: str) -> Iterator[dict[str, Any]]:
        """The audit entries of an investigation, in order (this unit of work's included)."""
        self.flush()
        rows = self._conn.execute(
            sa.select(t.audit_log)
            .where(t.audit_log.c.investigation_id == investigation_id)
            .order_by(t.audit_log.c.seq)
        ).all()
        return iter(
            [
                {
                    "seq": row.seq,
                    "at": row.at,
                    "event": row.event,
                    "actor": row.actor,
                    "pause_id": row.pause_id,
                    "detail": json.loads(row.detail),
                }
                for row in rows
            ]
        )
