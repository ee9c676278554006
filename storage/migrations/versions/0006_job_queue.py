"""the durable job queue (procrastinate) on PostgreSQL; the progress message of a delivery

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 00:30:00

On PostgreSQL this applies procrastinate's own schema (its tables, types and functions, all
named `procrastinate_*`) in the database's schema, so `reconbot migrate` prepares everything
the web processes and the workers need. SQLite runs jobs in its one process and needs none.
A later procrastinate release that changes its schema comes with a migration of ours that
applies procrastinate's migration files for it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from procrastinate.schema import SchemaManager

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_DROP_QUEUE = """
DO $$
DECLARE item record;
BEGIN
  FOR item IN SELECT tablename FROM pg_tables
      WHERE schemaname = current_schema() AND tablename LIKE 'procrastinate%' LOOP
    EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', item.tablename);
  END LOOP;
  FOR item IN SELECT p.oid::regprocedure AS signature FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = current_schema() AND p.proname LIKE 'procrastinate%' LOOP
    EXECUTE format('DROP FUNCTION IF EXISTS %s CASCADE', item.signature);
  END LOOP;
  FOR item IN SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = current_schema() AND t.typname LIKE 'procrastinate%'
        AND t.typtype IN ('e', 'c') AND t.typcategory <> 'A' LOOP
    EXECUTE format('DROP TYPE IF EXISTS %I CASCADE', item.typname);
  END LOOP;
END $$;
"""


def _run_script(bind: sa.Connection, script: str) -> None:
    """Run a SQL script as written (no parameter markers: its `%` signs are its own), in the
    migration's transaction."""
    bind.connection.driver_connection.execute(script)  # type: ignore[union-attr]


def upgrade() -> None:
    """Apply this migration: jobs survive any process; a cut-off step's message is fixed."""
    with op.batch_alter_table("slack_events") as batch:
        batch.add_column(sa.Column("progress_ts", sa.String(32), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    present = bind.execute(sa.text("SELECT to_regclass('procrastinate_jobs')")).scalar()
    if present is None:
        _run_script(bind, SchemaManager.get_schema())


def downgrade() -> None:
    """Revert this migration (the queue's jobs go with it)."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        _run_script(bind, _DROP_QUEUE)
    with op.batch_alter_table("slack_events") as batch:
        batch.drop_column("progress_ts")
