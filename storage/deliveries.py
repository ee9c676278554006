"""The chat bot's bookkeeping of deliveries: which events were seen, which work is unfinished,
which message shows a pause. Each method is its own short transaction (not a unit of work's):
the bot records these around the work, not inside it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from storage import tables as t
from storage.repositories.rows import now as _now


class SqlDeliveries:
    """Delivered events and pause messages, on SQLite or PostgreSQL."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def first(
        self,
        delivery_id: str,
        work: dict[str, Any] | None = None,
        hold_until: datetime | None = None,
    ) -> bool:
        """Record a delivery's id; False if it was recorded before (a retry: skip it).

        With `work`, the delivery is resumable: held by this process until `hold_until`, then
        `take_unfinished` hands it to another process unless `done` was called.
        """
        values: dict[str, Any] = {"event_id": delivery_id, "received_at": _now()}
        if work is not None:
            values |= {"payload": json.dumps(work), "claimed_until": hold_until}
        try:
            with self.engine.begin() as conn:
                conn.execute(t.slack_events.insert().values(**values))
        except sa.exc.IntegrityError:
            return False
        return True

    def done(self, delivery_id: str) -> None:
        """The delivery's work is done (or was answered with a problem): never resume it."""
        with self.engine.begin() as conn:
            conn.execute(
                t.slack_events.update()
                .where(t.slack_events.c.event_id == delivery_id)
                .values(finished_at=_now(), payload=None, progress_ts=None)
            )

    def take_unfinished(
        self, now: datetime, hold_until: datetime
    ) -> list[tuple[str, dict[str, Any]]]:
        """Deliveries whose work was started, never finished, and whose hold ran out by `now`;
        each is taken (one conditional update) by exactly one caller and held until
        `hold_until`. Returns (delivery id, work) of those this caller took."""
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

    def finished(self, delivery_id: str) -> bool:
        """Whether the delivery's work was done."""
        events = t.slack_events.c
        with self.engine.connect() as conn:
            at = conn.execute(
                sa.select(events.finished_at).where(events.event_id == delivery_id)
            ).scalar_one_or_none()
        return at is not None

    def remember_progress(self, delivery_id: str, message_ts: str | None) -> None:
        """Keep the progress message of the delivery's current run."""
        with self.engine.begin() as conn:
            conn.execute(
                t.slack_events.update()
                .where(t.slack_events.c.event_id == delivery_id)
                .values(progress_ts=message_ts)
            )

    def progress_of(self, delivery_id: str) -> str | None:
        """The progress message of the delivery's last run, while it is unfinished."""
        events = t.slack_events.c
        with self.engine.connect() as conn:
            ts = conn.execute(
                sa.select(events.progress_ts).where(
                    events.event_id == delivery_id, events.finished_at.is_(None)
                )
            ).scalar_one_or_none()
        return str(ts) if ts else None

    def remember_message(self, pause_id: str, message_ts: str) -> None:
        """Remember the chat message that shows the pause (kept beside its snapshot)."""
        with self.engine.begin() as conn:
            conn.execute(
                t.pauses.update().where(t.pauses.c.id == pause_id).values(message_ts=message_ts)
            )
