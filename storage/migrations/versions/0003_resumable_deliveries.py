"""keep the payload of deliveries whose work must survive a crash

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 13:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this migration: an upload cut off by a crash is picked up again."""
    with op.batch_alter_table("slack_events") as batch:
        batch.add_column(sa.Column("payload", sa.Text(), nullable=True))
        batch.add_column(sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("slack_events") as batch:
        batch.drop_column("finished_at")
        batch.drop_column("claimed_until")
        batch.drop_column("payload")
