"""Loading: a whole file into DuckDB under an approved mapping, one row per data row.

A file is parsed once into its raw text columns (`ingest.columnar`, kept by the columnar cache);
loading reads those columns under the mapping's parse expressions.
"""

from __future__ import annotations

from collections.abc import Mapping as AnyMapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import duckdb

from agent.data.cache import ColumnCache, Fetch, Reading
from agent.data.duck import cursor
from agent.data.ingest import CsvLayout, layout_from_options
from agent.data.ingest.columnar import Columns, RowProgress, load_columns, read_into
from agent.data.normalize.columns import derived_columns, key_columns, select_list
from agent.data.normalize.zones import apply_zones
from agent.data.schema import DatasetMapping, Mapping, Role
from agent.data.timestamp_formats import ZONE_SUFFIX

SOURCE = "{source}"


@dataclass(frozen=True)
class Source:
    """One uploaded file as the engine reads it: the uploader's name for it, how to get its
    bytes on local disk, and, when known, the digest they must have (the cache's key)."""

    name: str
    fetch: Fetch
    digest: str | None = None
    size: int | None = None
    """The file's size in bytes, when known before it is fetched."""

    @classmethod
    def at(cls, path: Path, name: str) -> Source:
        """A file already on local disk."""
        return cls(name, lambda: nullcontext(path))


Files = AnyMapping[Role, Source] | AnyMapping[Role, tuple[Path, str]]
"""Each role's file: a `Source`, or (path on local disk, the uploader's file name)."""


def as_source(file: Source | tuple[Path, str]) -> Source:
    """A role's file as a `Source`."""
    return file if isinstance(file, Source) else Source.at(*file)


def table_name(role: Role) -> str:
    """The table holding `role`'s rows after loading."""
    return f"{role.value}_rows"


def text_table(role: Role) -> str:
    """The table holding every column of `role`'s file as text, as its first read found them
    (`read_file_as` with `keep_text`): what an edit loads `table_name(role)` from again."""
    return f"{role.value}_text"


def reading_of(mapping: DatasetMapping) -> Reading:
    """The reading options that decide a file's columns."""
    options = mapping.options
    return Reading(options.encoding, options.delimiter, options.header_row)


def parse_both(
    files: Files,
    mapping: Mapping,
    cache: ColumnCache,
    progress: RowProgress | None = None,
) -> dict[Role, Columns]:
    """Both files' columns, from `cache` or parsed into it, the two files at once.

    Raises the typed input errors of `ingest` for a file that cannot be read as `mapping`
    says, and LedgerError for a parse that loses or invents rows.
    """
    sources = {role: as_source(file) for role, file in files.items()}
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="parse") as pool:
        futures = {
            role: pool.submit(
                cache.columns,
                source.name,
                reading_of(mapping.for_role(role)),
                source.fetch,
                digest=source.digest,
                progress=progress,
            )
            for role, source in sources.items()
        }
        return {role: futures[role].result() for role in Role}


def load_columns_as(
    con: duckdb.DuckDBPyConnection, role: Role, columns: Columns, mapping: DatasetMapping
) -> CsvLayout:
    """Read `columns` as `role` under `mapping` into `table_name(role)`, one row per data row.

    The table holds what validation checks and reconciling reads (`select_list`). The row
    number of data row n (1-based, header excluded) is `rowid + 1` of the table. Raises
    UnknownColumnError for a mapped column the file lacks.
    """
    layout = load_columns(con, table_name(role), load_query(role, columns.layout, mapping), columns)
    _finish(con, role, mapping)
    return layout


def read_file_as(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    path: Path,
    layout: CsvLayout,
    mapping: DatasetMapping,
    *,
    scratch: Path | None = None,
    progress: RowProgress | None = None,
    parallel: bool = True,
    keep_text: bool = False,
) -> tuple[str, CsvLayout]:
    """Make the table `load_columns_as` makes straight from the file's bytes at `path`, read as
    `layout` says: for a file's first read, which then costs one parse and no Parquet (on one
    thread with `parallel` false: `read_csv_sql`). With `keep_text`, every column of the file
    is kept as text beside it (`text_table`), so that an edit of the mapping loads the table
    again from there instead of parsing the file again.

    Returns the digest of the bytes read and the layout with their records. Raises the typed
    input errors of `ingest`, LedgerError for a read that loses or invents rows, and
    UnknownColumnError for a mapped column the file lacks.
    """
    query = load_query(role, layout, mapping)
    target = text_table(role) if keep_text else table_name(role)
    found = read_into(
        con,
        target,
        "SELECT * FROM {source}" if keep_text else query,
        path,
        layout,
        scratch=scratch,
        progress=progress,
        parallel=parallel,
    )
    if keep_text:
        con.execute(
            f"CREATE OR REPLACE TABLE {table_name(role)} AS "
            + query.replace(SOURCE, text_table(role))
        )
    _finish(con, role, mapping)
    return found


def _finish(con: duckdb.DuckDBPyConnection, role: Role, mapping: DatasetMapping) -> None:
    """What every load does after reading the rows: local times with a zone column (or a zone
    after the time) turned into points in time, and the orders' ids indexed (`ORDER_INDEX`)."""
    for name, stamp in mapping.options.timestamps.items():
        zoned = stamp.zone_column is not None or stamp.pattern.endswith(ZONE_SUFFIX)
        if zoned and name in mapping.columns:
            apply_zones(con, table_name(role), name, stamp.timezone)
    if role is Role.ORDERS:
        con.execute(f"CREATE OR REPLACE TABLE {ORDER_INDEX} AS {ORDER_INDEX_QUERY}")


def rekey(con: duckdb.DuckDBPyConnection, role: Role, mapping: DatasetMapping) -> None:
    """Read a loaded table's join keys again under `mapping`'s id reading, in place (rows and
    their numbers unchanged), and the orders' index with them: an id reading proposed from the
    files, or edited, costs one pass over the key column, not a second read of the file."""
    keys = key_columns(role, mapping)
    sets = ", ".join(f"{name} = {expression}" for name, expression in keys.items())
    con.execute(f"UPDATE {table_name(role)} SET {sets}")
    if role is Role.ORDERS:
        con.execute(f"CREATE OR REPLACE TABLE {ORDER_INDEX} AS {ORDER_INDEX_QUERY}")


ORDER_INDEX = "order_index"
"""The table of the loaded orders' ids, made with `orders_rows` by every load (so it always
describes the rows loaded): one row per order id (`order_key`) with its head row `r` (the
first row that carries an amount, else its first row), its rows (`n_rows`), the rows that
carry an amount (`n_filled`), and whether those amounts differ (`differ`). The gates and the
engine read it instead of grouping a million text keys each."""

ORDER_INDEX_QUERY = """
    SELECT order_key,
           coalesce(min(rowid) FILTER (WHERE order_amount_filled), min(rowid)) AS r,
           count(*) AS n_rows,
           count(*) FILTER (WHERE order_amount_filled) AS n_filled,
           min(order_amount) FILTER (WHERE order_amount_filled)
               <> max(order_amount) FILTER (WHERE order_amount_filled) AS differ
    FROM orders_rows WHERE order_key IS NOT NULL GROUP BY 1
"""


def load_query(role: Role, layout: CsvLayout, mapping: DatasetMapping) -> str:
    """The query loading reads a file's columns with (`{source}` names them)."""
    select = select_list(role, layout, mapping)
    derived = derived_columns(role, mapping)
    return f"SELECT *, {derived} FROM (SELECT {select} FROM {SOURCE})"


def load_dataset(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    path: Path,
    file_name: str,
    mapping: DatasetMapping,
    workdir: Path | None = None,
) -> CsvLayout:
    """Read the file at `path` as `role` into `table_name(role)`, parsing it for this read only
    (no cache): see `load_columns_as`. Raises the typed input errors of `ingest` for a file
    DuckDB cannot read as approved."""
    options = mapping.options
    layout = layout_from_options(
        path,
        file_name,
        encoding=options.encoding,
        delimiter=options.delimiter,
        header_row=options.header_row,
    )
    return read_file_as(con, role, path, layout, mapping, scratch=workdir)[1]


def load_both(
    con: duckdb.DuckDBPyConnection,
    columns: dict[Role, Columns],
    mapping: Mapping,
    *,
    roles: tuple[Role, ...] = tuple(Role),
) -> dict[Role, CsvLayout]:
    """Load the orders and the payments columns at once, each on its own connection to `con`'s
    catalog (`duck.cursor`).

    DuckDB interleaves the two scans, which keeps both cores busy through the phases where one
    scan alone would not. Returns each file's layout, with its data records
    (`CsvLayout.records`). `roles` limits the load to some of the files.
    """
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="load") as pool:
        loads = {
            role: pool.submit(
                load_columns_as,
                cursor(con),
                role,
                columns[role],
                mapping.for_role(role),
            )
            for role in roles
        }
        return {role: load.result() for role, load in loads.items()}
