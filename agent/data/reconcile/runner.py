"""The SQL runner: the engine's connection, and its `.sql` files run with bound parameters.

The reconciliation SQL lives in `sql/*.sql` beside this module (package data, read with
`importlib.resources`). Its values (the policy's tolerance, windows and status words, the
approved row kinds) are never written into the SQL text: each statement names them as
`$parameters`, and `run_sql` binds to each statement the ones it names.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import duckdb

# DuckDB's memory for validating or reconciling; what does not fit spills to disk. With the
# parse of `ingest.columnar` (two files at once) and Python itself, a process stays within 1 GiB.
MEMORY_LIMIT = "700MB"
PACKAGE = "agent.data.reconcile"
_SPILLS = itertools.count()


def connect(spill: Path | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection set up for reconciling: UTC, bounded memory, spilling
    what does not fit into `spill` (default: the system's temporary folder; never the current
    directory, DuckDB's own default)."""
    folder = spill if spill is not None else Path(tempfile.gettempdir())
    con = duckdb.connect(
        config={
            "memory_limit": MEMORY_LIMIT,
            "temp_directory": str(folder / f"duckdb-spill-{os.getpid()}-{next(_SPILLS)}"),
        }
    )
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # never drawn on a person's terminal
    return con


@cache
def sql_text(name: str) -> str:
    """The text of the package's `sql/<name>.sql`, read once per process."""
    return files(PACKAGE).joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")


def run_sql(
    con: duckdb.DuckDBPyConnection, name: str, params: Mapping[str, Any] | None = None
) -> duckdb.DuckDBPyConnection:
    """Run every statement of `sql/<name>.sql` in order; returns the last one's result.

    DuckDB binds prepared parameters to one statement at a time, so a file of several
    statements is split with DuckDB's own parser and each gets exactly the `$names` it uses
    (a name it uses and `params` lacks raises KeyError).
    """
    values = params or {}
    statements = con.extract_statements(sql_text(name))
    result = con
    for statement in statements:
        bound = {key: values[key] for key in statement.named_parameters}
        result = con.execute(statement, bound)
    return result
