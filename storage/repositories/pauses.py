"""Pauses: the snapshot written once, and where it stands (`agent.ports.PauseRepository`).

A pause's status changes only by `apply`, which persists a transition of `agent.pause.RULES`
as one conditional UPDATE: the row count says whether this caller won. The rules are the
table's; nothing here decides which status follows which.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from agent.domain import ApprovalRequest, PauseState, PauseStatus
from agent.identity import canonical_json, digest
from agent.pause import OPEN_STATUSES, RULES, Transition
from agent.ports import Claim
from storage import tables as t
from storage.repositories.audit import SqlAuditLog
from storage.repositories.rows import to_pause_state, utc

# A claimed pause always has a lease (claiming sets one); should a row lack it, it is reported
# as long over, so that recovery examines the claim rather than trusting it forever.
_NO_LEASE = datetime.min.replace(tzinfo=UTC)


class SqlPauseRepository:
    """Pauses on one unit of work's connection; changes are audited in it."""

    def __init__(self, conn: sa.Connection, audit: SqlAuditLog) -> None:
        self._conn = conn
        self._audit = audit

    def add(self, request: ApprovalRequest) -> None:
        """Save the snapshot as a new pending pause (audited "pause_recorded").

        Only the insert: superseding older pauses and the case's status are the caller's.
        """
        document = request.model_dump(mode="json")
        snapshot_digest = digest(document)
        self._conn.execute(
            t.pauses.insert().values(
                id=request.pause_id,
                investigation_id=request.investigation_id,
                revision=request.revision,
                kind=request.kind.value,
                status=PauseStatus.PENDING.value,
                snapshot=canonical_json(document).decode(),
                snapshot_digest=snapshot_digest,
                authorization_identity=request.authorization_identity,
                created_at=request.created_at,
                expires_at=request.expires_at,
            )
        )
        self._audit.append(
            "pause_recorded",
            actor=request.requested_by,
            investigation_id=request.investigation_id,
            pause_id=request.pause_id,
            detail={
                "kind": request.kind.value,
                "revision": request.revision,
                "snapshot_digest": snapshot_digest,
                "authorization_identity": request.authorization_identity,
            },
        )

    def get(self, pause_id: str) -> PauseState | None:
        """The pause and its status, or None."""
        row = self._conn.execute(sa.select(t.pauses).where(t.pauses.c.id == pause_id)).one_or_none()
        return None if row is None else to_pause_state(row)

    def lock(self, pause_id: str) -> PauseState | None:
        """The pause, its row locked until the unit of work ends (`FOR UPDATE`), or None.

        On SQLite the transaction already holds the database's write lock (`BEGIN IMMEDIATE`).
        """
        row = self._conn.execute(
            sa.select(t.pauses).where(t.pauses.c.id == pause_id).with_for_update()
        ).one_or_none()
        return None if row is None else to_pause_state(row)

    def of_investigation(self, investigation_id: str) -> list[PauseState]:
        """All pauses of an investigation, oldest first."""
        rows = self._conn.execute(
            sa.select(t.pauses)
            .where(t.pauses.c.investigation_id == investigation_id)
            .order_by(t.pauses.c.created_at, t.pauses.c.id)
        ).all()
        return [to_pause_state(row) for row in rows]

    def open_in_channel(self, channel: str | None) -> list[PauseState]:
        """The pauses of a chat channel's cases (None: the cases outside any) that a person
        may still approve: pending, or failed (Approve retries them); oldest first."""
        where = (
            t.investigations.c.channel.is_(None)
            if channel is None
            else t.investigations.c.channel == channel
        )
        rows = self._conn.execute(
            sa.select(t.pauses)
            .join(t.investigations, t.investigations.c.id == t.pauses.c.investigation_id)
            .where(where, t.pauses.c.status.in_([s.value for s in OPEN_STATUSES]))
            .order_by(t.pauses.c.created_at, t.pauses.c.id)
        ).all()
        return [to_pause_state(row) for row in rows]

    def apply(
        self,
        pause_id: str,
        transition: Transition,
        *,
        actor: str,
        at: datetime,
        reason: str | None = None,
        claim: Claim | None = None,
        owner: str | None = None,
    ) -> bool:
        """Persist `transition` if the pause stands where its rule allows it from (and, for an
        owner-only rule, `owner` holds the claim): one conditional UPDATE, audited with the
        rule's event. False, and nothing written, if another caller moved the pause first.

        Raises ValueError when the rule needs a `claim` (it takes one) or an `owner` (it is
        owner-only) and none is given.
        """
        rule = RULES[transition]
        pauses = t.pauses.c
        query = t.pauses.update().where(
            pauses.id == pause_id, pauses.status.in_(sorted(s.value for s in rule.sources))
        )
        values: dict[str, Any] = {"status": rule.target.value}
        if rule.records_decider:
            values |= {"decided_by": actor, "decided_at": at, "reason": reason}
        elif reason is not None:
            values["reason"] = reason
        if rule.takes_claim:
            if claim is None:
                raise ValueError(f"{transition.value} takes a claim: pass claim=")
            values |= {"claim_owner": claim.owner, "lease_until": claim.lease_until}
            if rule.counts_attempt:
                values["attempts"] = pauses.attempts + 1
        if rule.owner_only:
            if owner is None:
                raise ValueError(f"only the claim's owner may {transition.value}: pass owner=")
            query = query.where(pauses.claim_owner == owner)
        row = self._conn.execute(
            query.values(values).returning(pauses.investigation_id)
        ).one_or_none()
        if row is None:
            return False
        detail: dict[str, Any] = {"reason": reason} if reason else {}
        if transition is Transition.TAKE_OVER:
            detail["previous_owner"] = owner
        self._audit.append(
            rule.audit_event,
            actor=actor,
            investigation_id=row.investigation_id,
            pause_id=pause_id,
            detail=detail,
        )
        return True

    def claims(self) -> list[tuple[str, Claim, int]]:
        """Claimed pauses with (pause id, claim, attempts so far), for recovery to examine."""
        rows = self._conn.execute(
            sa.select(
                t.pauses.c.id, t.pauses.c.claim_owner, t.pauses.c.lease_until, t.pauses.c.attempts
            )
            .where(t.pauses.c.status == PauseStatus.CLAIMED.value)
            .order_by(t.pauses.c.id)
        ).all()
        return [
            (row.id, Claim(row.claim_owner or "", utc(row.lease_until) or _NO_LEASE), row.attempts)
            for row in rows
        ]

    def due(self, now: datetime) -> list[str]:
        """Pending pauses whose expiry has passed at `now`."""
        return list(
            self._conn.execute(
                sa.select(t.pauses.c.id)
                .where(
                    t.pauses.c.status == PauseStatus.PENDING.value,
                    t.pauses.c.expires_at <= now,
                )
                .order_by(t.pauses.c.expires_at, t.pauses.c.id)
            ).scalars()
        )
