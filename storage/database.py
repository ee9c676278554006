"""Database engines and migrations: SQLite by default (WAL, foreign keys), PostgreSQL in production.

On SQLite every transaction begins with `BEGIN IMMEDIATE`: a read followed by a write in one
transaction would otherwise fail under concurrency instead of waiting its turn.
"""

from __future__ import annotations

import fcntl
import logging
from pathlib import Path
from typing import IO, Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from agent.errors import ConfigurationError

logger = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000


def create_engine(url: str) -> sa.Engine:
    """An engine for `url`, set up for reconbot's transactions; creates a SQLite file's folder."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError as error:
        raise ConfigurationError(
            f"RECONBOT_DATABASE_URL is not a database URL ({error}); "
            "use e.g. sqlite:///var/reconbot.db or postgresql://user@host/db"
        ) from None
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return sa.create_engine(parsed, pool_pre_ping=True)


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # let the "begin" hook below start transactions
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(connection: sa.Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _alembic_config(engine: sa.Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


def migrate(engine: sa.Engine) -> str | None:
    """Apply every migration not yet applied; returns the revision the database is now at."""
    command.upgrade(_alembic_config(engine), "head")
    return current_revision(engine)


def current_revision(engine: sa.Engine) -> str | None:
    """The migration revision the database is at (None: never migrated)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    """The newest migration this code knows."""
    return ScriptDirectory(str(MIGRATIONS)).get_current_head()


def is_sqlite(engine: sa.Engine) -> bool:
    """Whether the engine talks to SQLite (which upgrades itself at start)."""
    return engine.dialect.name == "sqlite"


class SingleProcessLock:
    """Held by the one bot process an embedded SQLite database allows; released at exit."""

    def __init__(self, handle: IO[bytes] | None) -> None:
        self._handle = handle

    def release(self) -> None:
        """Let another process serve the database."""
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def hold_single_process(engine: sa.Engine) -> SingleProcessLock:
    """Take the SQLite database's bot lock, or refuse with a sentence: SQLite runs the bot's
    jobs in one process, and a second would run them twice and lose them on a crash. Commands
    that only read or decide (`status`, `decide`) do not take it."""
    database = engine.url.database
    if not is_sqlite(engine) or not database or database == ":memory:":
        return SingleProcessLock(None)
    path = Path(f"{database}.bot-lock")
    handle = path.open("ab")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise ConfigurationError(
            f"Another reconbot process already runs the bot on {database}. SQLite allows one "
            "bot process; for more web processes or workers, use PostgreSQL "
            "(RECONBOT_DATABASE_URL=postgresql://…, then `reconbot migrate`)."
        ) from None
    return SingleProcessLock(handle)
