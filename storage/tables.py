"""The database tables (SQLAlchemy Core). Alembic's migrations create them; this is their shape.

Snapshots and conversations are stored as JSON text exactly as written, so that what a person
approved can be read back byte for byte and its digest checked.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

investigations = sa.Table(
    "investigations",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("requested_by", sa.String(200), nullable=False),
    sa.Column("channel", sa.String(64)),
    sa.Column("thread_ts", sa.String(64)),
    sa.Column("team", sa.String(64)),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_investigations_channel", "channel", "created_at"),
    # One investigation per chat thread (migration 0005); rows without one are not concerned.
    sa.Index("uq_investigations_thread", "channel", "thread_ts", unique=True),
)

revisions = sa.Table(
    "revisions",
    metadata,
    sa.Column("investigation_id", sa.ForeignKey("investigations.id"), primary_key=True),
    sa.Column("number", sa.Integer, primary_key=True),
    sa.Column("input_identity", sa.String(80)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("added_by", sa.String(200)),
)

datasets = sa.Table(
    "datasets",
    metadata,
    sa.Column("investigation_id", sa.String(40), primary_key=True),
    sa.Column("revision", sa.Integer, primary_key=True),
    sa.Column("role", sa.String(16), primary_key=True),
    sa.Column("name", sa.String(500), nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("digest", sa.String(80), nullable=False),
    sa.Column("slack_file_id", sa.String(64)),
    sa.ForeignKeyConstraint(
        ["investigation_id", "revision"], ["revisions.investigation_id", "revisions.number"]
    ),
)

pauses = sa.Table(
    "pauses",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("investigation_id", sa.ForeignKey("investigations.id"), nullable=False),
    sa.Column("revision", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("snapshot", sa.Text, nullable=False),
    sa.Column("snapshot_digest", sa.String(80), nullable=False),
    sa.Column("authorization_identity", sa.String(80), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("message_ts", sa.String(64)),
    sa.Column("decided_by", sa.String(200)),
    sa.Column("decided_at", sa.DateTime(timezone=True)),
    sa.Column("reason", sa.Text),
    sa.Column("claim_owner", sa.String(200)),
    sa.Column("lease_until", sa.DateTime(timezone=True)),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Index("ix_pauses_investigation", "investigation_id", "created_at"),
    sa.Index("ix_pauses_status", "status", "expires_at"),
)

decisions = sa.Table(
    "decisions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("pause_id", sa.String(40), nullable=False),
    sa.Column("investigation_id", sa.String(40), nullable=False),
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("actor", sa.String(200), nullable=False),
    sa.Column("reason", sa.Text),
    sa.Column("accepted", sa.Boolean, nullable=False),
    sa.Column("refusal", sa.String(32)),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_decisions_investigation", "investigation_id", "id"),
)

outcomes = sa.Table(
    "outcomes",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("investigation_id", sa.ForeignKey("investigations.id"), nullable=False),
    sa.Column("pause_id", sa.ForeignKey("pauses.id"), nullable=False, unique=True),
    sa.Column("document", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

tool_executions = sa.Table(
    "tool_executions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("investigation_id", sa.String(40), nullable=False),
    sa.Column("invocation_id", sa.String(40), nullable=False),
    sa.Column("phase", sa.String(32), nullable=False),
    sa.Column("tool_use_id", sa.String(200), nullable=False),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("duration_ms", sa.Integer, nullable=False),
    sa.Column("detail", sa.String(200), nullable=True),
    sa.Index("ix_tool_executions_investigation", "investigation_id", "id"),
)

conversations = sa.Table(
    "conversations",
    metadata,
    sa.Column("investigation_id", sa.String(40), primary_key=True),
    sa.Column("messages", sa.Text, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

channel_policies = sa.Table(
    "channel_policies",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("version", sa.String(80), nullable=False),
    sa.Column("rules", sa.Text, nullable=False),
    sa.Column("since", sa.DateTime(timezone=True), nullable=False),
    sa.Column("by", sa.String(200), nullable=False),
    sa.Column("source", sa.String(500), nullable=False),
    sa.Column("pause_id", sa.String(40)),
    # Each channel's versions in order: two decisions that put a version in force at once
    # both take the same number, and the second is refused (migration 0008).
    sa.Column("seq", sa.Integer, nullable=False),
    # The policy in force in a channel is its latest row.
    sa.Index("ix_channel_policies_channel", "channel", "id"),
    sa.Index("uq_channel_policies_seq", "channel", "seq", unique=True),
)

audit_log = sa.Table(
    "audit_log",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("at", sa.String(40), nullable=False),
    sa.Column("event", sa.String(64), nullable=False),
    sa.Column("actor", sa.String(200), nullable=False),
    sa.Column("investigation_id", sa.String(40)),
    sa.Column("pause_id", sa.String(40)),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.String(80), nullable=False),
    sa.Column("hash", sa.String(80), nullable=False),
    sa.Index("ix_audit_investigation", "investigation_id", "seq"),
)

# One row: the head of the audit chain. Appending locks it, so the chain never forks.
audit_head = sa.Table(
    "audit_head",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("hash", sa.String(80), nullable=False),
)

slack_events = sa.Table(
    "slack_events",
    metadata,
    sa.Column("event_id", sa.String(100), primary_key=True),
    sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
    # Work that must survive a crash (a file upload): the event, held by one process until
    # `claimed_until`, done at `finished_at`. Other deliveries keep only their id.
    sa.Column("payload", sa.Text),
    sa.Column("claimed_until", sa.DateTime(timezone=True)),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
    # The progress message of the run working on it, so a later run can say it was cut off.
    sa.Column("progress_ts", sa.String(32)),
)
