"""each channel's policy versions: the policy in force in a channel is its latest row; a
channel without one reconciles under the configured policy (the seed)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06 18:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create `channel_policies` (empty: every channel starts under the seed)."""
    op.create_table(
        "channel_policies",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("version", sa.String(80), nullable=False),
        sa.Column("rules", sa.Text, nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("by", sa.String(200), nullable=False),
        sa.Column("source", sa.String(500), nullable=False),
        sa.Column("pause_id", sa.String(40)),
        sa.Column("seq", sa.Integer, nullable=False),
    )
    op.create_index("ix_channel_policies_channel", "channel_policies", ["channel", "id"])
    op.create_index("uq_channel_policies_seq", "channel_policies", ["channel", "seq"], unique=True)


def downgrade() -> None:
    """Drop `channel_policies`: every channel is back under the configured policy."""
    op.drop_index("uq_channel_policies_seq", table_name="channel_policies")
    op.drop_index("ix_channel_policies_channel", table_name="channel_policies")
    op.drop_table("channel_policies")
