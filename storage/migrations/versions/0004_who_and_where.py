"""who made each revision, and the Slack workspace an investigation belongs to

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 22:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this migration: four-eyes counts every uploader; a click must come from the
    investigation's workspace."""
    with op.batch_alter_table("revisions") as batch:
        batch.add_column(sa.Column("added_by", sa.String(200), nullable=True))
    with op.batch_alter_table("investigations") as batch:
        batch.add_column(sa.Column("team", sa.String(64), nullable=True))


def downgrade() -> None:
    """Revert this migration."""
    with op.batch_alter_table("investigations") as batch:
        batch.drop_column("team")
    with op.batch_alter_table("revisions") as batch:
        batch.drop_column("added_by")
