"""Loaded tables kept in the process's DuckDB from a validation to the reconciliation after it.

A validation loads both files under the proposed mapping (`orders_rows`, `payments_rows` in a
workspace of the process's DuckDB instance). The reconciliation that follows its approval needs
the same tables: loading them again costs as much as the first time (at 1M rows about a second
a file), and copying them between workspaces costs as much as loading. So the validation's
workspace is kept here, under the pair of files it read, with the load key of each table it
holds; the next validation of the same files (an edit) and the reconciliation take it over,
load only the tables whose key differs, and run in it.

Nothing here is needed for a correct result: a workspace that was not kept (another process, a
restart, evicted for room) only means loading again. A kept workspace is taken by one step at a
time (taking removes it), or lent to a step that changes none of its tables (a sealed
reconciliation; a step that takes it meanwhile waits for it to be given back), and at most
`max_kept` are held, each at most `max_age`: DuckDB keeps
their tables within the process's one memory limit, spilling to disk what does not fit.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta

import duckdb
from cachetools import TTLCache

from agent.data.normalize.answers import CheckAnswers
from agent.data.normalize.report import ValidationReport
from agent.data.schema import DatasetMapping, Role

logger = logging.getLogger(__name__)


LENT_WAIT_SECONDS = 60.0
"""How long a step waits for a lent workspace (its borrower was told to stop) before it loads
the files again instead."""


@dataclass
class KeptWorkspace:
    """A workspace connection and, by role, the load key of the table it holds (`loaded`),
    and the checks of a table already made on it (`checked`: by role, the key the validation
    memo would keep the report under, and the report), for the validation that follows."""

    con: duckdb.DuckDBPyConnection
    loaded: dict[Role, str] = field(default_factory=dict)
    checked: dict[Role, tuple[str, ValidationReport]] = field(default_factory=dict)
    keyed: dict[Role, str] = field(default_factory=dict)
    """By role, the id reading its table's join keys were read under (`id_keys`)."""
    parts: dict[Role, DatasetMapping] = field(default_factory=dict)
    """By role, the part of the mapping its table was loaded under (with `loaded`'s key): what
    an edit compares its own part with, to read again only the columns it changed."""
    texts: dict[Role, str] = field(default_factory=dict)
    """By role, the columns (`Columns.parquet`'s name: the bytes and their reading) whose
    every column the workspace keeps as text (`load.text_table`), from the file's first read."""
    answers: CheckAnswers = field(default_factory=CheckAnswers)
    """The answers of the checks made on its tables, for the next validation (an edit) to ask
    again only those whose columns it read again (`answers`)."""


class _Workspaces(TTLCache[str, KeptWorkspace]):
    """Kept workspaces by the pair of files, each for `ttl` seconds, the oldest dropped for
    room. Expired ones go at the next `take` or `keep` of any case, so that one nobody comes
    back for gives its memory back; a dropped workspace's tables are given back to DuckDB once
    nothing else holds it."""

    def popitem(self) -> tuple[str, KeptWorkspace]:
        """Drop the oldest workspace for room (cachetools' eviction hook), saying so."""
        dropped, workspace = super().popitem()
        logger.info("files=<%s> | a kept workspace was dropped for room", dropped[:24])
        return dropped, workspace


class KeptTables:
    """The few most recent validations' workspaces, by the pair of files they read."""

    def __init__(self, *, max_kept: int = 2, max_age: timedelta = timedelta(hours=1)) -> None:
        self.max_kept = max_kept
        self.max_age = max_age
        self._lock = threading.Lock()
        self._returned = threading.Condition(self._lock)
        self._kept = _Workspaces(maxsize=max(max_kept, 0), ttl=max_age.total_seconds())
        self._lent: set[str] = set()

    def take(self, files: str, *, wait: float = LENT_WAIT_SECONDS) -> KeptWorkspace | None:
        """The workspace kept for `files` (removed from here: one step uses it at a time), or
        None when there is none or it is older than `max_age`. A workspace lent out (`lend`)
        is waited for, at most `wait` seconds: the step that borrowed it was told to stop."""
        deadline = time.monotonic() + wait
        with self._lock:
            while files in self._lent and (left := deadline - time.monotonic()) > 0:
                self._returned.wait(left)
            if files in self._lent:
                logger.warning("files=<%s> | a lent workspace was not given back", files[:24])
                return None
            self._kept.expire()
            return self._kept.pop(files, None)

    def lend(self, files: str) -> KeptWorkspace | None:
        """The workspace kept for `files`, lent to a step that reads its tables and changes
        none of them (a reconciliation sealed while its request waits): until it is given back
        (`give_back`), a step that takes it waits. None when none is kept (or one is lent)."""
        with self._lock:
            self._kept.expire()
            if files in self._lent:
                return None
            found = self._kept.pop(files, None)
            if found is not None:
                self._lent.add(files)
            return found

    def give_back(self, files: str, workspace: KeptWorkspace) -> None:
        """Return a workspace `lend` gave, as it was lent, to the steps waiting for it (unless
        a step that stopped waiting kept a newer one meanwhile: that one stays)."""
        with self._lock:
            self._lent.discard(files)
            if self.max_kept > 0 and files not in self._kept:
                self._kept[files] = workspace
            self._returned.notify_all()

    def peek(self, files: str) -> KeptWorkspace | None:
        """The workspace kept for `files`, left kept (for a step that only reads its text
        beside the steps that take it: `reconcile.run.beside_kept`), or None."""
        with self._lock:
            self._kept.expire()
            return self._kept.get(files)

    def keep(self, files: str, workspace: KeptWorkspace) -> None:
        """Keep `workspace` for the next step on `files`, dropping the oldest beyond `max_kept`
        (a dropped workspace's tables are given back to DuckDB once nothing else holds it)."""
        if self.max_kept <= 0 or not (workspace.loaded or workspace.texts):
            return
        with self._lock:
            self._kept[files] = workspace  # kept anew: its age and place start again
