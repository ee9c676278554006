"""The SQL runner: the engine's connection, and its `.sql` files run with bound parameters.

The reconciliation SQL lives in `sql/*.sql` beside this module (package data, read with
`importlib.resources`). Its values (the policy's tolerance, windows and status words, the
approved row kinds) are never written into the SQL text: each statement names them as
`$parameters`, and `run_sql` binds to each statement the ones it names.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import duckdb

from agent.data.duck import MEMORY_LIMIT, workspace

PACKAGE = "agent.data.reconcile"

__all__ = ["MEMORY_LIMIT", "connect", "run_sql", "sql_text"]


def connect(spill: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A connection for validating or reconciling: a workspace of the process's DuckDB instance
    (`agent.data.duck`: tables of its own, UTC, the process's one memory limit), spilling what
    does not fit into `spill` (the work directory; default: the system's temporary folder) when
    it is the process's first DuckDB work."""
    return workspace(spill)


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
