"""Alembic environment: runs migrations on the engine reconbot hands over (no alembic.ini)."""

from __future__ import annotations

from alembic import context

from storage.tables import metadata

engine = context.config.attributes["engine"]
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
