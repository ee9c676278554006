"""Loading: a whole file into DuckDB under an approved mapping, one row per data row."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb

from agent.data.ingest import CsvLayout, layout_from_options, read_table
from agent.data.normalize.columns import derived_columns, select_list
from agent.data.normalize.zones import apply_zones
from agent.data.schema import DatasetMapping, Mapping, Role

SOURCE = "{source}"


def table_name(role: Role) -> str:
    """The table holding `role`'s rows after loading."""
    return f"{role.value}_rows"


def load_dataset(
    con: duckdb.DuckDBPyConnection,
    role: Role,
    path: Path,
    file_name: str,
    mapping: DatasetMapping,
    workdir: Path | None = None,
    *,
    keep_raw: bool = False,
) -> CsvLayout:
    """Read the file at `path` as `role` into `table_name(role)`, one row per data row.

    With `keep_raw`, the text of every parsed field is kept beside it for `validate`; without,
    only what reconciling needs is read (faster, less memory).

    The row number of data row n (1-based, header excluded) is `rowid + 1` of the table.
    Raises UnknownColumnError for a mapped column the file lacks, and the typed input errors of
    `ingest` for a file DuckDB cannot read as approved.
    """
    options = mapping.options
    layout = layout_from_options(
        path,
        file_name,
        encoding=options.encoding,
        delimiter=options.delimiter,
        header_row=options.header_row,
    )
    select = select_list(role, layout, mapping, keep_raw=keep_raw)
    derived = derived_columns(role, mapping)
    query = f"SELECT *, {derived} FROM (SELECT {select} FROM {SOURCE})"
    read = read_table(con, table_name(role), query, path, layout, workdir)
    for name, stamp in options.timestamps.items():
        if stamp.zone_column is not None and name in mapping.columns:
            apply_zones(con, table_name(role), name, stamp.timezone)
    return read


def load_both(
    con: duckdb.DuckDBPyConnection,
    files: dict[Role, tuple[Path, str]],
    mapping: Mapping,
    workdir: Path | None = None,
    *,
    keep_raw: bool = False,
) -> dict[Role, CsvLayout]:
    """Load the orders and the payments file at once, each on its own cursor.

    DuckDB interleaves the two scans, which keeps both cores busy through the phases where one
    scan alone would not. `files` maps each role to (path on disk, the uploader's file name).
    Returns each file's layout as read, with its data records counted (`CsvLayout.records`).
    """
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="load") as pool:
        loads = [
            pool.submit(
                load_dataset,
                con.cursor(),
                role,
                files[role][0],
                files[role][1],
                mapping.for_role(role),
                workdir,
                keep_raw=keep_raw,
            )
            for role in Role
        ]
        return {role: load.result() for role, load in zip(Role, loads, strict=True)}
