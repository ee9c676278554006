"""The SQL repository: the `agent.ports.Repository` on SQLite or PostgreSQL.

Each public method is one transaction. Status changes are single conditional UPDATEs whose row
count says who won; the audit entry of a change is appended in the same transaction, after
locking the chain's head row, so the chain never forks and never records what did not happen.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from agent.data.schema import Role
from agent.domain import (
    ApprovalRequest,
    DatasetRef,
    Decision,
    Investigation,
    InvestigationStatus,
    Outcome,
    PauseState,
    PauseStatus,
    RefusalReason,
    Revision,
    ToolExecution,
)
from agent.identity import canonical_json, digest
from agent.ports import Claim
from storage import tables as t

logger = logging.getLogger(__name__)

GENESIS = "sha256:" + "0" * 64


def _utc(value: datetime | None) -> datetime | None:
    """Datetimes read back from SQLite are naive; every stored time is UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _now() -> datetime:
    return datetime.now(UTC)


def _entry_hash(prev_hash: str, entry: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(prev_hash.encode() + canonical_json(entry)).hexdigest()


class SqlRepository:
    """Investigations, pauses, decisions, outcomes, traces, conversations and the audit log."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    # -- audit -------------------------------------------------------------------------------

    def _append_audit(
        self,
        conn: sa.Connection,
        event: str,
        *,
        actor: str,
        investigation_id: str | None = None,
        pause_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        head = conn.execute(
            sa.select(t.audit_head.c.seq, t.audit_head.c.hash)
            .where(t.audit_head.c.id == 1)
            .with_for_update()
        ).one()
        entry = {
            "seq": head.seq + 1,
            "at": _now().isoformat(),
            "event": event,
            "actor": actor,
            "investigation_id": investigation_id,
            "pause_id": pause_id,
            "detail": detail or {},
        }
        entry_hash = _entry_hash(head.hash, entry)
        conn.execute(
            t.audit_log.insert().values(
                {
                    **entry,
                    "detail": canonical_json(entry["detail"]).decode(),
                    "prev_hash": head.hash,
                    "hash": entry_hash,
                }
            )
        )
        conn.execute(
            t.audit_head.update()
            .where(t.audit_head.c.id == 1)
            .values(seq=entry["seq"], hash=entry_hash)
        )

    def audit(
        self,
        event: str,
        *,
        actor: str,
        investigation_id: str | None = None,
        pause_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append an entry to the hash-chained audit log."""
        with self.engine.begin() as conn:
            self._append_audit(
                conn,
                event,
                actor=actor,
                investigation_id=investigation_id,
                pause_id=pause_id,
                detail=detail,
            )

    def verify_audit(self) -> tuple[int, int | None]:
        """Recompute the chain: (entries checked, sequence number of the first bad entry)."""
        prev = GENESIS
        checked = 0
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.audit_log).order_by(t.audit_log.c.seq))
            for row in rows:
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
                    or row.hash != _entry_hash(prev, entry)
                ):
                    return checked, row.seq
                prev = row.hash
                checked += 1
            head = conn.execute(sa.select(t.audit_head).where(t.audit_head.c.id == 1)).one()
        if head.seq != checked or head.hash != prev:
            return checked, checked + 1
        return checked, None

    def audit_entries(self, investigation_id: str) -> Iterator[dict[str, Any]]:
        """The audit entries of an investigation, in order."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(t.audit_log)
                .where(t.audit_log.c.investigation_id == investigation_id)
                .order_by(t.audit_log.c.seq)
            ).all()
        for row in rows:
            yield {
                "seq": row.seq,
                "at": row.at,
                "event": row.event,
                "actor": row.actor,
                "pause_id": row.pause_id,
                "detail": json.loads(row.detail),
            }

    # -- investigations and revisions ---------------------------------------------------------

    def create_investigation(self, investigation: Investigation, revision: Revision) -> None:
        """Save a new investigation with its first revision."""
        with self.engine.begin() as conn:
            conn.execute(
                t.investigations.insert().values(
                    id=investigation.id,
                    status=investigation.status.value,
                    requested_by=investigation.requested_by,
                    channel=investigation.channel,
                    thread_ts=investigation.thread_ts,
                    revision=revision.number,
                    created_at=investigation.created_at,
                    updated_at=investigation.created_at,
                )
            )
            self._insert_revision(conn, revision)
            self._append_audit(
                conn,
                "investigation_started",
                actor=investigation.requested_by,
                investigation_id=investigation.id,
                detail=_revision_detail(revision),
            )

    def _insert_revision(self, conn: sa.Connection, revision: Revision) -> None:
        conn.execute(
            t.revisions.insert().values(
                investigation_id=revision.investigation_id,
                number=revision.number,
                input_identity=revision.input_identity,
                created_at=revision.created_at,
            )
        )
        for ref in revision.files.values():
            conn.execute(
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

    def get_investigation(self, investigation_id: str) -> Investigation | None:
        """The investigation, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(t.investigations).where(t.investigations.c.id == investigation_id)
            ).one_or_none()
        return None if row is None else _investigation(row)

    def list_investigations(
        self, *, channel: str | None = None, limit: int = 20
    ) -> list[Investigation]:
        """Recent investigations, newest first, optionally of one channel."""
        query = sa.select(t.investigations).order_by(t.investigations.c.created_at.desc())
        if channel is not None:
            query = query.where(t.investigations.c.channel == channel)
        with self.engine.connect() as conn:
            return [_investigation(row) for row in conn.execute(query.limit(limit))]

    def find_investigation(self, channel: str, thread_ts: str) -> Investigation | None:
        """The newest investigation anchored on a chat thread, or None."""
        query = (
            sa.select(t.investigations)
            .where(t.investigations.c.channel == channel)
            .where(t.investigations.c.thread_ts == thread_ts)
            .order_by(t.investigations.c.created_at.desc())
            .limit(1)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).one_or_none()
        return None if row is None else _investigation(row)

    def set_investigation_status(
        self,
        investigation_id: str,
        status: InvestigationStatus,
        *,
        actor: str,
        only_from: tuple[InvestigationStatus, ...] = (),
    ) -> bool:
        """Record where the investigation stands; with `only_from`, only if it stands at one
        of those now (one conditional update: of racing callers one wins). True if changed."""
        query = t.investigations.update().where(t.investigations.c.id == investigation_id)
        if only_from:
            query = query.where(t.investigations.c.status.in_([s.value for s in only_from]))
        with self.engine.begin() as conn:
            changed = conn.execute(query.values(status=status.value, updated_at=_now())).rowcount
            if not changed:
                return False
            self._append_audit(
                conn,
                "investigation_status",
                actor=actor,
                investigation_id=investigation_id,
                detail={"status": status.value},
            )
        return True

    def add_revision(self, revision: Revision, *, actor: str, reason: str) -> list[str]:
        """Make `revision` current and supersede the case's pending pauses, atomically."""
        with self.engine.begin() as conn:
            self._insert_revision(conn, revision)
            conn.execute(
                t.investigations.update()
                .where(t.investigations.c.id == revision.investigation_id)
                .values(revision=revision.number, updated_at=_now())
            )
            self._append_audit(
                conn,
                "revision_added",
                actor=actor,
                investigation_id=revision.investigation_id,
                detail=_revision_detail(revision),
            )
            return self._supersede_pending(conn, revision.investigation_id, actor, reason)

    def _supersede_pending(
        self, conn: sa.Connection, investigation_id: str, actor: str, reason: str
    ) -> list[str]:
        pending = conn.execute(
            sa.select(t.pauses.c.id).where(
                t.pauses.c.investigation_id == investigation_id,
                t.pauses.c.status == PauseStatus.PENDING.value,
            )
        ).scalars()
        superseded = []
        for pause_id in list(pending):
            if self._transition(
                conn, pause_id, (PauseStatus.PENDING,), PauseStatus.SUPERSEDED, actor, reason
            ):
                superseded.append(pause_id)
        return superseded

    def revisions(self, investigation_id: str) -> list[Revision]:
        """All revisions, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(t.revisions)
                .where(t.revisions.c.investigation_id == investigation_id)
                .order_by(t.revisions.c.number)
            ).all()
            files = conn.execute(
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
                created_at=_utc(row.created_at) or _now(),
            )
            for row in rows
        ]

    # -- pauses --------------------------------------------------------------------------------

    def record_pause(self, request: ApprovalRequest) -> list[str]:
        """Save the snapshot as a pending pause; supersede the case's other pending pauses."""
        document = request.model_dump(mode="json")
        snapshot = canonical_json(document).decode()
        with self.engine.begin() as conn:
            superseded = self._supersede_pending(
                conn, request.investigation_id, request.requested_by, "a newer request"
            )
            conn.execute(
                t.pauses.insert().values(
                    id=request.pause_id,
                    investigation_id=request.investigation_id,
                    revision=request.revision,
                    kind=request.kind.value,
                    status=PauseStatus.PENDING.value,
                    snapshot=snapshot,
                    snapshot_digest=digest(document),
                    authorization_identity=request.authorization_identity,
                    created_at=request.created_at,
                    expires_at=request.expires_at,
                )
            )
            conn.execute(
                t.investigations.update()
                .where(t.investigations.c.id == request.investigation_id)
                .values(status=InvestigationStatus.AWAITING_DECISION.value, updated_at=_now())
            )
            self._append_audit(
                conn,
                "pause_recorded",
                actor=request.requested_by,
                investigation_id=request.investigation_id,
                pause_id=request.pause_id,
                detail={
                    "kind": request.kind.value,
                    "revision": request.revision,
                    "snapshot_digest": digest(document),
                    "authorization_identity": request.authorization_identity,
                },
            )
        return superseded

    def get_pause(self, pause_id: str) -> PauseState | None:
        """The pause and its status, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.pauses).where(t.pauses.c.id == pause_id)).one_or_none()
        return None if row is None else _pause_state(row)

    def pauses(self, investigation_id: str) -> list[PauseState]:
        """All pauses of an investigation, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(t.pauses)
                .where(t.pauses.c.investigation_id == investigation_id)
                .order_by(t.pauses.c.created_at, t.pauses.c.id)
            ).all()
        return [_pause_state(row) for row in rows]

    def set_message_ts(self, pause_id: str, message_ts: str) -> None:
        """Remember the chat message that shows the pause (kept beside the snapshot)."""
        with self.engine.begin() as conn:
            conn.execute(
                t.pauses.update().where(t.pauses.c.id == pause_id).values(message_ts=message_ts)
            )

    def _transition(
        self,
        conn: sa.Connection,
        pause_id: str,
        from_statuses: tuple[PauseStatus, ...],
        to: PauseStatus,
        actor: str,
        reason: str | None,
        claim: Claim | None = None,
    ) -> bool:
        values: dict[str, Any] = {"status": to.value}
        if to in (PauseStatus.CLAIMED, PauseStatus.REJECTED):
            values.update(decided_by=actor, decided_at=_now(), reason=reason)
        elif reason is not None:
            values["reason"] = reason
        if claim is not None:
            values.update(
                claim_owner=claim.owner,
                lease_until=claim.lease_until,
                attempts=t.pauses.c.attempts + 1,
            )
        result = conn.execute(
            t.pauses.update()
            .where(
                t.pauses.c.id == pause_id,
                t.pauses.c.status.in_([s.value for s in from_statuses]),
            )
            .values(values)
            .returning(t.pauses.c.investigation_id)
        ).one_or_none()
        if result is None:
            return False
        self._append_audit(
            conn,
            f"pause_{to.value}",
            actor=actor,
            investigation_id=result.investigation_id,
            pause_id=pause_id,
            detail={"reason": reason} if reason else {},
        )
        return True

    def transition_pause(
        self,
        pause_id: str,
        *,
        from_statuses: tuple[PauseStatus, ...],
        to: PauseStatus,
        actor: str,
        reason: str | None = None,
        claim: Claim | None = None,
    ) -> bool:
        """Move a pause from one of `from_statuses` to `to`; False if another caller won."""
        with self.engine.begin() as conn:
            return self._transition(conn, pause_id, from_statuses, to, actor, reason, claim)

    def take_over_claim(self, pause_id: str, *, old_owner: str, claim: Claim) -> bool:
        """Move a stale claim to a new owner; False if another recovering process won."""
        with self.engine.begin() as conn:
            result = conn.execute(
                t.pauses.update()
                .where(
                    t.pauses.c.id == pause_id,
                    t.pauses.c.status == PauseStatus.CLAIMED.value,
                    t.pauses.c.claim_owner == old_owner,
                )
                .values(
                    claim_owner=claim.owner,
                    lease_until=claim.lease_until,
                    attempts=t.pauses.c.attempts + 1,
                )
                .returning(t.pauses.c.investigation_id)
            ).one_or_none()
            if result is None:
                return False
            self._append_audit(
                conn,
                "claim_recovered",
                actor=claim.owner,
                investigation_id=result.investigation_id,
                pause_id=pause_id,
                detail={"previous_owner": old_owner},
            )
            return True

    def stale_claims(self, now: datetime) -> list[tuple[str, Claim, int]]:
        """Claimed pauses, each with its claim and the number of attempts so far."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(
                    t.pauses.c.id,
                    t.pauses.c.claim_owner,
                    t.pauses.c.lease_until,
                    t.pauses.c.attempts,
                ).where(t.pauses.c.status == PauseStatus.CLAIMED.value)
            ).all()
        return [
            (row.id, Claim(row.claim_owner or "", _utc(row.lease_until) or now), row.attempts)
            for row in rows
        ]

    def due_pauses(self, now: datetime) -> list[str]:
        """Pending pauses whose expiry has passed."""
        with self.engine.connect() as conn:
            return list(
                conn.execute(
                    sa.select(t.pauses.c.id).where(
                        t.pauses.c.status == PauseStatus.PENDING.value,
                        t.pauses.c.expires_at <= now,
                    )
                ).scalars()
            )

    # -- decisions and outcomes ------------------------------------------------------------------

    def record_decision(self, decision: Decision) -> None:
        """Append a decision, accepted or refused, with its audit entry."""
        with self.engine.begin() as conn:
            conn.execute(
                t.decisions.insert().values(
                    pause_id=decision.pause_id,
                    investigation_id=decision.investigation_id,
                    action=decision.action,
                    actor=decision.actor,
                    reason=decision.reason,
                    accepted=decision.accepted,
                    refusal=decision.refusal.value if decision.refusal else None,
                    at=decision.at,
                )
            )
            self._append_audit(
                conn,
                "decision_accepted" if decision.accepted else "decision_refused",
                actor=decision.actor,
                investigation_id=decision.investigation_id or None,
                pause_id=decision.pause_id,
                detail={
                    "action": decision.action,
                    "reason": decision.reason,
                    "refusal": decision.refusal.value if decision.refusal else None,
                },
            )

    def decisions(self, investigation_id: str) -> list[Decision]:
        """All decisions of an investigation, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
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
                at=_utc(row.at) or _now(),
            )
            for row in rows
        ]

    def complete(self, outcome: Outcome, *, owner: str) -> bool:
        """Save the outcome and consume its pause in one transaction, if the claim is ours."""
        with self.engine.begin() as conn:
            consumed = conn.execute(
                t.pauses.update()
                .where(
                    t.pauses.c.id == outcome.pause_id,
                    t.pauses.c.status == PauseStatus.CLAIMED.value,
                    t.pauses.c.claim_owner == owner,
                )
                .values(status=PauseStatus.CONSUMED.value)
            ).rowcount
            if consumed != 1:
                return False  # nothing was written: the claim is not ours
            conn.execute(
                t.outcomes.insert().values(
                    investigation_id=outcome.investigation_id,
                    pause_id=outcome.pause_id,
                    document=outcome.model_dump_json(),
                    created_at=outcome.created_at,
                )
            )
            conn.execute(
                t.investigations.update()
                .where(t.investigations.c.id == outcome.investigation_id)
                .values(status=InvestigationStatus.COMPLETED.value, updated_at=_now())
            )
            self._append_audit(
                conn,
                "pause_consumed",
                actor=owner,
                investigation_id=outcome.investigation_id,
                pause_id=outcome.pause_id,
                detail={"counts": outcome.counts, "export_digest": outcome.export_digest},
            )
            return True

    def get_outcome(self, investigation_id: str) -> Outcome | None:
        """The newest outcome of an investigation, or None."""
        with self.engine.connect() as conn:
            document = conn.execute(
                sa.select(t.outcomes.c.document)
                .where(t.outcomes.c.investigation_id == investigation_id)
                .order_by(t.outcomes.c.id.desc())
                .limit(1)
            ).scalar_one_or_none()
        return None if document is None else Outcome.model_validate_json(document)

    def count_outcomes(self, pause_id: str) -> int:
        """How many outcomes a pause has (never more than one)."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count()).where(t.outcomes.c.pause_id == pause_id)
                ).scalar_one()
            )

    # -- trace and conversation ---------------------------------------------------------------

    def record_tool_executions(self, executions: list[ToolExecution]) -> None:
        """Append the tool executions of one invocation."""
        if not executions:
            return
        with self.engine.begin() as conn:
            conn.execute(t.tool_executions.insert(), [e.model_dump() for e in executions])

    def tool_executions(self, investigation_id: str) -> list[ToolExecution]:
        """The trace, in order."""
        with self.engine.connect() as conn:
            rows = conn.execute(
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
            )
            for row in rows
        ]

    def append_conversation(self, investigation_id: str, messages: list[dict[str, Any]]) -> None:
        """Append one invocation's messages to the saved conversation, atomically.

        The row is locked for the read and the write (`FOR UPDATE` on PostgreSQL; SQLite's
        `BEGIN IMMEDIATE` serialises writers), so two processes appending at once both keep
        their turns instead of the last writer replacing the other's.
        """
        column = t.conversations.c
        for attempt in range(2):
            try:
                with self.engine.begin() as conn:
                    current = conn.execute(
                        sa.select(column.messages)
                        .where(column.investigation_id == investigation_id)
                        .with_for_update()
                    ).scalar_one_or_none()
                    merged = [*([] if current is None else json.loads(current)), *messages]
                    text = json.dumps(merged, ensure_ascii=False, default=str)
                    if current is None:
                        conn.execute(
                            t.conversations.insert().values(
                                investigation_id=investigation_id, messages=text, updated_at=_now()
                            )
                        )
                    else:
                        conn.execute(
                            t.conversations.update()
                            .where(column.investigation_id == investigation_id)
                            .values(messages=text, updated_at=_now())
                        )
                return
            except sa.exc.IntegrityError:
                if attempt:
                    raise  # two first appends raced; the second try sees the row

    def load_conversation(self, investigation_id: str) -> list[dict[str, Any]]:
        """The saved conversation, or an empty one."""
        with self.engine.connect() as conn:
            text = conn.execute(
                sa.select(t.conversations.c.messages).where(
                    t.conversations.c.investigation_id == investigation_id
                )
            ).scalar_one_or_none()
        return [] if text is None else list(json.loads(text))

    # -- Slack deliveries -------------------------------------------------------------------

    def mark_event_processed(
        self,
        event_id: str,
        payload: dict[str, Any] | None = None,
        hold_until: datetime | None = None,
    ) -> bool:
        """Record a delivered event id; False if it was already there (a retry).

        With `payload`, the event's work is resumable: held by this process until `hold_until`,
        then `take_unfinished_events` hands it to another unless `finish_event` was called.
        """
        values: dict[str, Any] = {"event_id": event_id, "received_at": _now()}
        if payload is not None:
            values |= {"payload": json.dumps(payload), "claimed_until": hold_until}
        try:
            with self.engine.begin() as conn:
                conn.execute(t.slack_events.insert().values(**values))
        except sa.exc.IntegrityError:
            return False
        return True

    def finish_event(self, event_id: str) -> None:
        """The event's work is done (or was answered with a problem); never resume it."""
        with self.engine.begin() as conn:
            conn.execute(
                t.slack_events.update()
                .where(t.slack_events.c.event_id == event_id)
                .values(finished_at=_now(), payload=None)
            )

    def take_unfinished_events(
        self, now: datetime, hold_until: datetime
    ) -> list[tuple[str, dict[str, Any]]]:
        """Events whose work was started and never finished, and whose hold ran out; each is
        taken (one conditional update) by exactly one caller and held until `hold_until`."""
        events = t.slack_events.c
        unfinished = (
            events.finished_at.is_(None),
            events.payload.is_not(None),
            events.claimed_until <= now,
        )
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(events.event_id, events.payload).where(*unfinished)).all()
        taken = []
        for event_id, payload in rows:
            with self.engine.begin() as conn:
                won = conn.execute(
                    t.slack_events.update()
                    .where(events.event_id == event_id, *unfinished)
                    .values(claimed_until=hold_until)
                ).rowcount
            if won == 1:
                taken.append((str(event_id), dict(json.loads(payload))))
        return taken


def _revision_detail(revision: Revision) -> dict[str, Any]:
    return {
        "revision": revision.number,
        "input_identity": revision.input_identity,
        "files": {role.value: ref.digest for role, ref in revision.files.items()},
    }


def _investigation(row: sa.Row[Any]) -> Investigation:
    return Investigation(
        id=row.id,
        status=InvestigationStatus(row.status),
        requested_by=row.requested_by,
        channel=row.channel,
        thread_ts=row.thread_ts,
        revision=row.revision,
        created_at=_utc(row.created_at) or _now(),
    )


def _pause_state(row: sa.Row[Any]) -> PauseState:
    return PauseState(
        request=ApprovalRequest.model_validate_json(row.snapshot),
        status=PauseStatus(row.status),
        decided_by=row.decided_by,
        decided_at=_utc(row.decided_at),
        reason=row.reason,
        message_ts=row.message_ts,
    )
