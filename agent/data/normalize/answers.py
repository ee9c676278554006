"""The answers of a loaded table's checks, remembered by what they read, so that an edit asks
again only the checks whose columns it changed.

A loaded table's column holds values that follow from the file's bytes and reading (its
`Columns`) and the expression that read them (`column_sources`): the same check over columns
read by the same expressions from the same file has the same answer, whatever else the mapping
changed. So each answer is kept under the check's SQL and the expressions of the columns that
SQL names. A check that names a column whose values follow from something else (the join keys,
read again in place under the id reading) is never remembered.

An edit of one amount column at 1M rows asks again that column's checks only, not the other
fields' (about a tenth of a second of the edit's half second).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.data.ingest import CsvLayout
from agent.data.normalize.columns import derived_pairs, key_columns, select_columns
from agent.data.normalize.memo import memo_key
from agent.data.schema import DatasetMapping, Role
from agent.data.timestamp_formats import ZONE_SUFFIX

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
UNKNOWN = "(not known from the mapping)"
"""The source of a column whose values the load does not decide alone (the join keys)."""


def column_sources(role: Role, layout: CsvLayout, mapping: DatasetMapping) -> dict[str, str]:
    """By column of `role`'s loaded table, what its values follow from: the expression that
    read it, and for a time whose zone is applied after the load (`zones.apply_zones`), the
    reading of that time too. The join keys are `UNKNOWN`: they are read again in place when
    the id reading changes, and only the gates read them."""
    sources = dict(select_columns(role, layout, mapping))
    for name, stamp in mapping.options.timestamps.items():
        zoned = stamp.zone_column is not None or stamp.pattern.endswith(ZONE_SUFFIX)
        if zoned and name in sources:  # its values: its local time and zone, read in that zone
            local, zone = sources.get(f"{name}_local"), sources.get(f"{name}_zone")
            sources[name] = f"{local} in {zone} zoned:{stamp.model_dump_json()}"
    keys = key_columns(role, mapping)
    for name, expression in derived_pairs(role, mapping):  # read from the columns above
        read = {n: sources[n] for n in sorted(set(_NAME.findall(expression))) if n in sources}
        sources[name] = UNKNOWN if name in keys else f"{expression} from {read}"
    return sources


@dataclass
class CheckAnswers:
    """The answers of the checks made on one workspace's tables, by key (kept with the
    workspace, and gone with it)."""

    _found: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def of_table(self, file: str, sources: Mapping[str, str]) -> TableAnswers:
        """The answers of the checks on the table loaded from `file` (its columns' name)
        whose columns were read as `sources` says (`column_sources`)."""
        return TableAnswers(self, file, dict(sources))

    def recall(self, key: str) -> tuple[Any, ...] | None:
        """The answer kept under `key`, if any."""
        with self._lock:
            return self._found.get(key)

    def remember(self, key: str, answer: tuple[Any, ...]) -> None:
        """Keep `answer` under `key`."""
        with self._lock:
            self._found[key] = answer


@dataclass(frozen=True)
class TableAnswers:
    """The answers of the checks on one loaded table (`CheckAnswers.of_table`)."""

    store: CheckAnswers
    file: str
    sources: dict[str, str]

    def key(self, *sql: str) -> str | None:
        """The key of a check made of the SQL fragments `sql`: the fragments and the sources
        of every column they name. None when one of those columns does not follow from the
        mapping alone (the check is then made every time)."""
        named = set(_NAME.findall(" ".join(sql)))
        read = {name: source for name, source in self.sources.items() if name in named}
        if UNKNOWN in read.values():
            return None
        return memo_key("answer", self.file, list(sql), read)

    def recall(self, key: str | None) -> tuple[Any, ...] | None:
        """The answer kept under `key` (None: no key, or nothing kept)."""
        return None if key is None else self.store.recall(key)

    def remember(self, key: str | None, answer: tuple[Any, ...]) -> None:
        """Keep `answer` under `key` (nothing without a key)."""
        if key is not None:
            self.store.remember(key, answer)
