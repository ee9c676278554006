"""what a tool execution says about itself in the trace (a reconcile that published a result
sealed while its request waited says when it was sealed)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the nullable `detail` column: executions recorded before it say nothing more."""
    with op.batch_alter_table("tool_executions") as batch:
        batch.add_column(sa.Column("detail", sa.String(200), nullable=True))


def downgrade() -> None:
    """Drop the `detail` column."""
    with op.batch_alter_table("tool_executions") as batch:
        batch.drop_column("detail")
