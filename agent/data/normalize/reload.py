"""An edit reads again only what it changed: a loaded table made from the text its file's first
read kept is brought to another mapping by reading again, from that text, the columns whose
reading the edit changed, in place (rows, their order and their numbers unchanged).

Loading a whole table again from the text costs about half a second per million rows; reading
one amount column again costs a fraction of that. Whatever this cannot do exactly as a whole
load would (the columns themselves differ, or a column would change its type) is left to the
whole load: the result is the same table either way.
"""

from __future__ import annotations

import logging

import duckdb

from agent.data.ingest.columnar import Columns
from agent.data.normalize.columns import derived_pairs, select_columns
from agent.data.normalize.load import ORDER_INDEX, ORDER_INDEX_QUERY, table_name
from agent.data.normalize.zones import apply_zones
from agent.data.schema import DatasetMapping, Role
from agent.data.timestamp_formats import ZONE_SUFFIX

logger = logging.getLogger(__name__)

INDEXED = frozenset({"order_key", "order_amount", "order_amount_filled"})
"""The orders' columns their index is made from (`load.ORDER_INDEX_QUERY`)."""

KEY_INPUTS = frozenset({"order_id"})
"""The read columns the join keys are computed from (`columns.key_columns`)."""

CODE_INPUTS = frozenset({"currency"})
"""The read columns the currency code is computed from (`columns.derived_pairs`)."""


def reload_changed(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    columns: Columns,
    before: DatasetMapping,
    after: DatasetMapping,
) -> bool | None:
    """Bring `role`'s loaded table, read under `before` from the kept text `columns` names, to
    `after` by reading again only the columns whose reading differs, in place.

    Returns None when it was not done (the caller loads the table whole): `columns` is not
    text kept in this workspace's reach, the two mappings read different sets of columns, or a
    changed column would change its type. Otherwise whether the join keys were read again
    (True: under `after`'s id reading; False: they are as they were, for `rekey` to read again
    if the id reading differs).
    """
    if columns.table is None:
        return None
    try:
        return _reload(con, role, columns, before, after)
    except duckdb.InterruptException:
        raise
    except duckdb.Error as error:  # the whole load replaces whatever was done
        kind = type(error).__name__  # never its text: it may quote a cell
        logger.warning("role=%s error=<%s> | not read again in place", role.value, kind)
        return None


def _reload(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    columns: Columns,
    before: DatasetMapping,
    after: DatasetMapping,
) -> bool | None:
    old = select_columns(role, columns.layout, before)
    new = select_columns(role, columns.layout, after)
    if [name for name, _ in old] != [name for name, _ in new]:
        return None
    changed = [(name, expr) for (name, expr), (_, was) in zip(new, old, strict=True) if expr != was]
    names = {name for name, _ in changed}
    keys_again = bool(names & KEY_INPUTS)
    derived = [
        (name, expr)
        for (name, expr), (_, was) in zip(
            derived_pairs(role, after), derived_pairs(role, before), strict=True
        )
        if (name == "currency_code" and (expr != was or names & CODE_INPUTS))
        or (name != "currency_code" and keys_again)
    ]
    table = table_name(role)
    if changed and not _same_types(con, table, columns.sql(), changed):
        return None
    if changed:
        reads = ", ".join(f"{expr} AS {name}" for name, expr in changed)
        sets = ", ".join(f"{name} = changed_.{name}" for name, _ in changed)
        con.execute(
            f"UPDATE {table} SET {sets} FROM (SELECT rowid AS row_, {reads} FROM "
            f"{columns.sql()}) AS changed_ WHERE {table}.rowid = changed_.row_"
        )
    if derived:
        con.execute(f"UPDATE {table} SET " + ", ".join(f"{n} = {e}" for n, e in derived))
    _finish_changed(con, role, before, after, names | {name for name, _ in derived})
    logger.info(
        "role=%s columns=%s | read again in place: only what the edit changed",
        role.value,
        len(changed) + len(derived),
    )
    return keys_again


def _same_types(
    con: duckdb.DuckDBPyConnection, table: str, source: str, changed: list[tuple[str, str]]
) -> bool:
    """Whether each changed column read again has the type the table's column has (a whole
    load would give it the new type: then only a whole load gives the same table)."""
    reads = ", ".join(f"{expr} AS {name}" for name, expr in changed)
    new = {
        row[0]: row[1] for row in con.execute(f"DESCRIBE SELECT {reads} FROM {source}").fetchall()
    }
    have = {row[0]: row[1] for row in con.execute(f"DESCRIBE {table}").fetchall()}
    return all(have.get(name) == kind for name, kind in new.items())


def _finish_changed(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    before: DatasetMapping,
    after: DatasetMapping,
    changed: set[str],
) -> None:
    """What a whole load does after reading the rows (`load._finish`), for what changed: zoned
    times read again, or whose default zone changed, made points in time again, and the orders'
    index made again when a column it is made from changed."""
    for name, stamp in after.options.timestamps.items():
        zoned = stamp.zone_column is not None or stamp.pattern.endswith(ZONE_SUFFIX)
        was = before.options.timestamps.get(name)
        moved = was is None or was.timezone != stamp.timezone
        read = changed & {f"{name}_local", f"{name}_zone"}
        if zoned and name in after.columns and (read or moved):
            apply_zones(con, table_name(role), name, stamp.timezone)
    if role is Role.ORDERS and changed & INDEXED:
        con.execute(f"CREATE OR REPLACE TABLE {ORDER_INDEX} AS {ORDER_INDEX_QUERY}")
