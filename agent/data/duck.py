"""The process's one DuckDB instance: one buffer pool and one memory limit for all its work.

DuckDB bounds memory per database instance: `memory_limit` caps the buffer manager of one
instance, and what does not fit spills to its `temp_directory`. Every step of the data engine
(the parse of each file, each validation, each reconciliation) works on the one instance of the
process, so the process's DuckDB memory is one cap however many steps run at once, and memory
one step gives back is the next one's.

- `session()`: a new connection to the instance, for work that makes no tables (a parse);
- `workspace()`: a connection with a catalog of its own, an in-memory database attached to the
  instance, for work that makes tables (a validation, a reconciliation). Two workspaces never
  see each other's tables or macros; a workspace's catalog is detached, its memory and spill
  given back, once its connection is garbage collected;
- `cursor(con)`: another connection to `con`'s catalog, for a second thread of the same work.

Settings that concurrent work may want differently are set per connection (session scope),
never for the instance: `preserve_insertion_order` in particular (a parse and a load keep file
order, the engine's own tables need not).
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

import duckdb

logger = logging.getLogger(__name__)

MEMORY_LIMIT_BYTES = 500_000_000
MEMORY_LIMIT = f"{MEMORY_LIMIT_BYTES // 1_000_000}MB"
"""DuckDB's buffer memory for the whole process; what does not fit spills to disk. DuckDB
allocates beside its buffer manager too (about 150 MB more at 10M rows), and Python with the
bot's libraries holds about 300 MB: the whole flow at 10M orders x 10M payments peaks at about
930 MiB (scripts/flow_benchmark.py)."""


@dataclass
class _Instance:
    """The process's instance: its base connection, the process it belongs to, its spill
    folder (made by DuckDB when it first spills) and whether it was seen made."""

    base: duckdb.DuckDBPyConnection
    pid: int
    folder: Path
    made: bool = False


_lock = threading.Lock()
_names = itertools.count()
_current: _Instance | None = None
_kept_after_fork: list[duckdb.DuckDBPyConnection] = []
_workspaces: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, str]
_workspaces = weakref.WeakKeyDictionary()


def spill_folder(spill: Path | None = None) -> Path:
    """The folder the process's instance spills into: `duckdb-spill-<pid>` in `spill` (the
    work directory), by default in the system's temporary folder; never the current directory
    (DuckDB's own default)."""
    root = spill if spill is not None else Path(tempfile.gettempdir())
    return root / f"duckdb-spill-{os.getpid()}"


def instance(spill: Path | None = None) -> duckdb.DuckDBPyConnection:
    """The base connection of the process's DuckDB instance, created on first use.

    The instance's memory limit and spill folder are set once, when it is created: the first
    caller's `spill` decides the folder (later callers get the same instance whatever theirs).
    DuckDB makes the folder when it first spills and removes it when the instance closes; a
    folder something else removed meanwhile is made again (DuckDB would fail to spill). A
    process forked from one that had an instance gets its own (an instance does not survive a
    fork).
    """
    global _current
    with _lock:
        if _current is None or _current.pid != os.getpid():
            if _current is not None:
                _kept_after_fork.append(_current.base)  # never closed: its threads stayed behind
            _current = _open(spill_folder(spill))
        folder = _current.folder
        if folder.is_dir():
            _current.made = True
        elif _current.made or not folder.parent.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
        return _current.base


def _open(folder: Path) -> _Instance:
    """A new instance with the process's memory limit, spilling into `folder`."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    base = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "temp_directory": str(folder)})
    base.execute("SET GLOBAL TimeZone = 'UTC'")
    logger.info("memory_limit=%s spill=<%s> | the process's DuckDB instance", MEMORY_LIMIT, folder)
    return _Instance(base, os.getpid(), folder)


def session(spill: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A new connection to the process's instance: UTC, no progress bar drawn on a terminal,
    rows kept in insertion order (set for this connection only)."""
    return _set_up(instance(spill).cursor())


def workspace(spill: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A new connection to the process's instance whose tables and macros go to a catalog of
    its own, detached once the connection is garbage collected (see `session`)."""
    base = instance(spill)
    name = f"workspace_{next(_names)}"
    con = _set_up(base.cursor())
    con.execute(f"ATTACH ':memory:' AS {name}")
    con.execute(f"USE {name}")
    with _lock:
        _workspaces[con] = name
    done = weakref.finalize(con, _detach, base, name)
    done.atexit = False  # at exit the instance goes as a whole
    return con


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Another connection to the catalog of `con`, with the same session settings, for work
    on another thread (a DuckDB connection runs one statement at a time)."""
    with _lock:
        name = _workspaces.get(con)
    if name is None:  # not a workspace: a connection of its own instance
        return con.cursor()
    other = _set_up(con.cursor())
    other.execute(f"USE {name}")
    return other


def workspace_name(con: duckdb.DuckDBPyConnection) -> str | None:
    """The catalog of a workspace connection (None for any other connection)."""
    with _lock:
        return _workspaces.get(con)


def _set_up(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Set a new connection's session settings (each connection its own, whatever another
    connection of the instance sets for itself)."""
    con.execute("SET SESSION TimeZone = 'UTC'")
    con.execute("SET SESSION enable_progress_bar = false")  # never drawn on a terminal
    con.execute("SET SESSION preserve_insertion_order = true")
    return con


def _detach(base: duckdb.DuckDBPyConnection, name: str) -> None:
    """Detach a workspace's catalog: its tables' memory and spill go back to the instance."""
    try:
        detaching = base.cursor()
        try:
            detaching.execute(f"DETACH DATABASE IF EXISTS {name}")
        finally:
            detaching.close()
    except duckdb.Error as error:  # a closed instance has nothing left to give back
        logger.warning("workspace=%s error=<%s> | not detached", name, type(error).__name__)


@atexit.register
def _close() -> None:
    """Close this process's instance and remove its spill folder (not a parent's: a forked
    child leaves its parent's instance alone)."""
    global _current
    with _lock:
        current, _current = _current, None
    if current is None or current.pid != os.getpid():
        return
    current.base.close()
    shutil.rmtree(current.folder, ignore_errors=True)
