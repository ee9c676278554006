"""index investigations by their Slack thread

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 12:40:00
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this migration: replies and new files in a thread find their investigation."""
    op.create_index("ix_investigations_thread", "investigations", ["channel", "thread_ts"])


def downgrade() -> None:
    """Revert this migration."""
    op.drop_index("ix_investigations_thread", table_name="investigations")
