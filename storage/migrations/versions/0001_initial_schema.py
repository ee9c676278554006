"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-30 11:27:55.564865
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this migration."""
    op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("hash", sa.String(length=80), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    # The chain starts from a fixed genesis hash.
    op.bulk_insert(
        sa.table("audit_head", sa.column("id"), sa.column("seq"), sa.column("hash")),
        [{"id": 1, "seq": 0, "hash": "sha256:" + "0" * 64}],
    )
    op.create_table(
        "audit_log",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("at", sa.String(length=40), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("investigation_id", sa.String(length=40), nullable=True),
        sa.Column("pause_id", sa.String(length=40), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(length=80), nullable=False),
        sa.Column("hash", sa.String(length=80), nullable=False),
        sa.PrimaryKeyConstraint("seq"),
    )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index("ix_audit_investigation", ["investigation_id", "seq"], unique=False)

    op.create_table(
        "conversations",
        sa.Column("investigation_id", sa.String(length=40), nullable=False),
        sa.Column("messages", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("investigation_id"),
    )
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("pause_id", sa.String(length=40), nullable=False),
        sa.Column("investigation_id", sa.String(length=40), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("accepted", sa.Boolean(), nullable=False),
        sa.Column("refusal", sa.String(length=32), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_decisions_investigation", ["investigation_id", "id"], unique=False
        )

    op.create_table(
        "investigations",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("requested_by", sa.String(length=200), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=True),
        sa.Column("thread_ts", sa.String(length=64), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("investigations", schema=None) as batch_op:
        batch_op.create_index("ix_investigations_channel", ["channel", "created_at"], unique=False)

    op.create_table(
        "slack_events",
        sa.Column("event_id", sa.String(length=100), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_table(
        "tool_executions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("investigation_id", sa.String(length=40), nullable=False),
        sa.Column("invocation_id", sa.String(length=40), nullable=False),
        sa.Column("phase", sa.String(length=32), nullable=False),
        sa.Column("tool_use_id", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("tool_executions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_tool_executions_investigation", ["investigation_id", "id"], unique=False
        )

    op.create_table(
        "pauses",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("investigation_id", sa.String(length=40), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("snapshot", sa.Text(), nullable=False),
        sa.Column("snapshot_digest", sa.String(length=80), nullable=False),
        sa.Column("authorization_identity", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message_ts", sa.String(length=64), nullable=True),
        sa.Column("decided_by", sa.String(length=200), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("claim_owner", sa.String(length=200), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigations.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("pauses", schema=None) as batch_op:
        batch_op.create_index(
            "ix_pauses_investigation", ["investigation_id", "created_at"], unique=False
        )
        batch_op.create_index("ix_pauses_status", ["status", "expires_at"], unique=False)

    op.create_table(
        "revisions",
        sa.Column("investigation_id", sa.String(length=40), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("input_identity", sa.String(length=80), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigations.id"],
        ),
        sa.PrimaryKeyConstraint("investigation_id", "number"),
    )
    op.create_table(
        "datasets",
        sa.Column("investigation_id", sa.String(length=40), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("digest", sa.String(length=80), nullable=False),
        sa.Column("slack_file_id", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(
            ["investigation_id", "revision"],
            ["revisions.investigation_id", "revisions.number"],
        ),
        sa.PrimaryKeyConstraint("investigation_id", "revision", "role"),
    )
    op.create_table(
        "outcomes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("investigation_id", sa.String(length=40), nullable=False),
        sa.Column("pause_id", sa.String(length=40), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["investigation_id"],
            ["investigations.id"],
        ),
        sa.ForeignKeyConstraint(
            ["pause_id"],
            ["pauses.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("pause_id"),
    )


def downgrade() -> None:
    """Undo this migration."""
    op.drop_table("outcomes")
    op.drop_table("datasets")
    op.drop_table("revisions")
    with op.batch_alter_table("pauses", schema=None) as batch_op:
        batch_op.drop_index("ix_pauses_status")
        batch_op.drop_index("ix_pauses_investigation")

    op.drop_table("pauses")
    with op.batch_alter_table("tool_executions", schema=None) as batch_op:
        batch_op.drop_index("ix_tool_executions_investigation")

    op.drop_table("tool_executions")
    op.drop_table("slack_events")
    with op.batch_alter_table("investigations", schema=None) as batch_op:
        batch_op.drop_index("ix_investigations_channel")

    op.drop_table("investigations")
    with op.batch_alter_table("decisions", schema=None) as batch_op:
        batch_op.drop_index("ix_decisions_investigation")

    op.drop_table("decisions")
    op.drop_table("conversations")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index("ix_audit_investigation")

    op.drop_table("audit_log")
    op.drop_table("audit_head")
