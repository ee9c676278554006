"""A guard on the engine's queries: what a query collects into one value must not grow with
the files.

`make bench-10m` found a check that ran out of DuckDB's memory at 10M rows and not at 1M: it
collected every row of a status into one list. DuckDB spills joins, sorts and groups to disk,
but a value being built (a list of rows) must fit in memory whole, so such a value's size must
not grow with the file. A run at 10M takes minutes; the tests that run the engine on the
project's fixtures instead watch every query it runs (DuckDB's own query log, `logged_queries`)
and refuse a list built across a whole table or across the few large groups of a value column
(a status, a kind, a currency) (`assert_bounded`): a list may only be built per row or per id
(an order, a payment, a reference), whose rows are few. The first rows of a large set are taken
with `min(x, n)`, which keeps n values, never with a slice of a whole list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import duckdb

from agent.data.duck import instance

COLLECTING = frozenset({"list", "array_agg", "string_agg", "group_concat", "listagg", "histogram"})
"""Aggregates whose value holds every value of its group."""
PER_ID = re.compile(r"^(r|rowid|t|ref|[a-z_]+_r|[a-z_]+_key|[a-z_]+_id)$")
"""Group keys that name a row or an id (a row number, an order's key, a reference, a token)."""
WHOLE_FILE = {
    "FROM ledger_rows WHERE role = 'orders' AND bucket = 'unreadable'": (
        "the summary names every order row left out as unreadable, each by its number"
    ),
    "FROM ledger_rows WHERE role = 'payments' AND bucket = 'unreadable'": (
        "the summary names every payment row left out as unreadable, each by its number"
    ),
}
"""Lists across a whole table that are kept on purpose, each with why (a known cost at 10M)."""


@contextmanager
def logged_queries() -> Iterator[Callable[[], list[str]]]:
    """What says every query the process's DuckDB instance ran since the block began (DuckDB's
    own query log, on every connection and workspace of the instance)."""
    base = instance()
    base.execute("CALL truncate_duckdb_logs()")
    base.execute("CALL enable_logging('QueryLog')")

    def logged() -> list[str]:
        rows = base.execute("SELECT message FROM duckdb_logs WHERE type = 'QueryLog'").fetchall()
        return [str(row[0]) for row in rows]

    try:
        yield logged
    finally:
        base.execute("CALL disable_logging()")
        base.execute("CALL truncate_duckdb_logs()")


def assert_bounded(logged: list[str]) -> None:
    """Fail, naming them, for the queries of `logged` that collect a list growing with a file."""
    growing = [
        (function, keys, sql[:300])
        for sql in statements(logged)
        for function, keys in collecting(sql)
        if not any(PER_ID.match(key) for key in keys)
        and not any(fragment in " ".join(sql.split()) for fragment in WHOLE_FILE)
    ]
    assert growing == [], json.dumps(growing, indent=1)


def statements(logged: list[str]) -> list[str]:
    """Each statement of the logged queries (a script of the engine logs as one)."""
    parser = duckdb.connect()
    found = []
    for query in logged:
        try:
            found.extend(statement.query for statement in parser.extract_statements(query))
        except duckdb.Error:
            found.append(query)
    return found


def collecting(sql: str) -> list[tuple[str, list[str]]]:
    """Each collecting aggregate of the SELECT in `sql` (a CREATE TABLE AS or INSERT's too),
    with the names of the group keys of the SELECT it is in ([] for a whole table)."""
    select = re.sub(
        r"(?is)^\s*(?:--[^\n]*\n\s*)*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?"
        r"TABLE\s+\S+\s+AS|INSERT\s+INTO\s+\S+(?:\s*\([^)]*\))?)\s+",
        "",
        sql,
    )
    parser = duckdb.connect()
    tree = json.loads(parser.execute("SELECT json_serialize_sql(?)", [select]).fetchone()[0])
    if tree.get("error"):
        return []  # not a query that reads rows (a SET, a DROP, a macro)
    found: list[tuple[str, list[str]]] = []
    _walk(tree, [], found)
    return found


def _walk(node: Any, keys: list[str], found: list[tuple[str, list[str]]]) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item, keys, found)
        return
    if not isinstance(node, dict):
        return
    if node.get("type") == "SELECT_NODE":
        keys = _group_keys(node)
    if node.get("class") == "FUNCTION":
        name = str(node.get("function_name", "")).lower()
        if name in COLLECTING:
            found.append((name, keys))
    for value in node.values():
        _walk(value, keys, found)


def _group_keys(select: dict[str, Any]) -> list[str]:
    """The names of a SELECT node's group keys (a position, `GROUP BY 1`, names its column)."""
    listed = select.get("select_list", [])
    if select.get("aggregate_handling") == "FORCE_AGGREGATES":  # GROUP BY ALL
        return [str(key["column_names"][-1]).lower() for key in listed if key.get("column_names")]
    names = []
    for key in select.get("group_expressions", []):
        if key.get("class") == "CONSTANT":
            position = int(key["literal"]["text"]) - 1
            key = listed[position] if 0 <= position < len(listed) else key
        column = key.get("column_names") or [key.get("alias") or ""]
        names.append(str(column[-1]).lower())
    return names
