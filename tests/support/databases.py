"""Test databases: SQLite in a temporary folder always, PostgreSQL when configured.

`RECONBOT_TEST_POSTGRES_URL` (set by `.ci/run`) points at a server; each test gets a schema of
its own there, dropped afterwards, so tests never see each other's rows.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from storage.database import create_engine

POSTGRES_URL = os.environ.get("RECONBOT_TEST_POSTGRES_URL")
DATABASES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def postgres_schema_url(base: str) -> tuple[str, str]:
    """A fresh schema on the test server and a URL whose connections use it."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    admin.dispose()
    separator = "&" if "?" in base else "?"
    return f"{base}{separator}options=-csearch_path%3D{schema}", schema


def drop_schema(base: str, schema: str) -> None:
    """Drop a schema made by `postgres_schema_url`."""
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


def database_urls(kind: str, tmp_path: Path) -> Iterator[str]:
    """Yield a database URL of `kind` for one test and clean it up afterwards."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'reconbot.db'}"
        return
    if not POSTGRES_URL:
        pytest.skip("RECONBOT_TEST_POSTGRES_URL is not set")
    url, schema = postgres_schema_url(POSTGRES_URL)
    yield url
    drop_schema(POSTGRES_URL, schema)
