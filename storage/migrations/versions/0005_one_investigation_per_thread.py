"""one investigation per Slack thread

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 10:00:00

The thread index becomes unique: two processes racing on one upload can no longer each start
an investigation for the same thread. Rows without a thread (terminal investigations) are not
concerned: a unique index lets any number of NULLs through, on SQLite and PostgreSQL alike.

A database may already hold several investigations for one thread. The bot only ever found
the newest of them (`by_thread`: newest `created_at` first), so that one keeps the thread; the
older ones keep everything else (their channel, files, pauses, decisions, audit entries) but
their `thread_ts` is cleared, as they were unreachable from the thread already. How many were
changed, and which, is logged. The downgrade does not give them their thread back.
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

logger = logging.getLogger(__name__)

_investigations = sa.table(
    "investigations",
    sa.column("id", sa.String),
    sa.column("channel", sa.String),
    sa.column("thread_ts", sa.String),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
_CHUNK = 500  # ids per UPDATE, well under SQLite's limit on bound parameters


def upgrade() -> None:
    """Apply this migration: detach the older duplicates of a thread, then make it unique."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        # No new duplicate may be written between the clean-up and the index (reads go on).
        op.execute("LOCK TABLE investigations IN SHARE ROW EXCLUSIVE MODE")
    detached = _older_duplicates(bind)
    for start in range(0, len(detached), _CHUNK):
        bind.execute(
            _investigations.update()
            .where(_investigations.c.id.in_(detached[start : start + _CHUNK]))
            .values(thread_ts=None)
        )
    if detached:
        logger.warning(
            "migration=0005 | %d older investigation(s) shared a thread with a newer one; "
            "their thread_ts is cleared (the newest keeps the thread): %s",
            len(detached),
            ", ".join(detached),
        )
    with op.batch_alter_table("investigations") as batch:
        batch.drop_index("ix_investigations_thread")
        batch.create_index("uq_investigations_thread", ["channel", "thread_ts"], unique=True)


def downgrade() -> None:
    """Revert this migration (cleared threads stay cleared)."""
    with op.batch_alter_table("investigations") as batch:
        batch.drop_index("uq_investigations_thread")
        batch.create_index("ix_investigations_thread", ["channel", "thread_ts"], unique=False)


def _older_duplicates(bind: sa.Connection) -> list[str]:
    """The ids of every investigation but the newest of each thread that has several, in the
    order `by_thread` ranks them (newest `created_at` first; the id breaks a tie)."""
    inv = _investigations
    shared = (
        sa.select(inv.c.channel, inv.c.thread_ts)
        .where(inv.c.channel.is_not(None), inv.c.thread_ts.is_not(None))
        .group_by(inv.c.channel, inv.c.thread_ts)
        .having(sa.func.count() > 1)
        .subquery()
    )
    rows = bind.execute(
        sa.select(inv.c.id, inv.c.channel, inv.c.thread_ts)
        .join(
            shared,
            sa.and_(inv.c.channel == shared.c.channel, inv.c.thread_ts == shared.c.thread_ts),
        )
        .order_by(inv.c.channel, inv.c.thread_ts, inv.c.created_at.desc(), inv.c.id.desc())
    ).all()
    older: list[str] = []
    kept: set[tuple[str, str]] = set()
    for row in rows:
        thread = (row.channel, row.thread_ts)
        if thread in kept:
            older.append(row.id)
        else:
            kept.add(thread)
    return older
