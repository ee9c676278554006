"""A file's records as raw text columns in Parquet: parsed once, read again under any mapping.

Every later step (each validation of a mapping, the reconciliation) reads these columns instead
of the CSV: a Parquet scan of the columns a mapping uses costs a fraction of parsing the text
again. The columns are the file's cells exactly as text (`c0`, `c1`, … in header order, rows in
file order), so reading options that decide how values parse (number and date formats, units,
id patterns) apply on top of them unchanged; only the layout (encoding, delimiter, header row)
decides what the columns are.

While DuckDB parses the file, two threads read its bytes beside it: one hashes them (the
digest stored with the columns is the digest of the bytes that were parsed, so a reconciliation
proves which bytes it read without reading them again), one counts its records independently of
DuckDB (the ledger's count: a parse that loses or invents rows is refused).

DuckDB parses on the process's one instance (`agent.data.duck`), under the memory limit every
other step shares, so two files parsed at once while a validation runs stay within one budget.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path

import duckdb

from agent.data.duck import session
from agent.data.ingest.counting import count_csv_records, scan_records
from agent.data.ingest.diagnosis import diagnose, swallowed_rows
from agent.data.ingest.digest import digest_and_utf8
from agent.data.ingest.layout import CsvLayout, fallback_to_cp1252
from agent.data.ingest.reader import duckdb_source, read_csv_sql, sql_string
from agent.errors import HeaderOnlyError, LedgerError

logger = logging.getLogger(__name__)

RowProgress = Callable[[str, int, float], None]
"""Told (file name, records read so far, share of the file's bytes read) while a file is read."""

PROGRESS_EVERY = 1.0
"""Seconds between two progress reports of one file."""


Reread = Callable[[duckdb.DuckDBPyConnection, str, str], CsvLayout]
"""Reads a file's bytes again into a table (`con`, `table`, `query` as `load_columns` takes
them) and returns the layout with the records read."""


@dataclass(frozen=True)
class Columns:
    """One file's records as text columns in a Parquet file, and what they were read from.

    `digest` is the sha256 of the bytes parsed (`sha256:…`), `layout` the layout they were read
    with (a late fallback to Windows-1252 is in its notes), its `records` the data records that
    the independent count found and the Parquet file holds.
    """

    parquet: Path
    digest: str
    layout: CsvLayout
    reread: Reread | None = field(default=None, compare=False, repr=False)
    """For a file read straight into tables (`read_into`), whose `parquet` is not written:
    reads the file's bytes again into a table, for a step that needs it under another reading
    (`load_columns`)."""
    table: str | None = field(default=None, compare=False)
    """The same text columns as a table of the workspace a step loads in (its first read kept
    them there, `read_into` with every column): read from it in place of `parquet`."""

    @property
    def records(self) -> int:
        """The file's data records (header excluded)."""
        assert self.layout.records is not None, "columns are built with their records counted"
        return self.layout.records

    def sql(self) -> str:
        """A DuckDB table expression reading the columns, in file order."""
        if self.table is not None:
            return self.table
        return f"read_parquet({sql_string(str(self.parquet))})"


def build_columns(
    path: Path,
    layout: CsvLayout,
    target: Path,
    *,
    scratch: Path | None = None,
    progress: RowProgress | None = None,
) -> Columns:
    """Parse the file at `path` as `layout` says into the Parquet file `target`.

    Raises the typed error of the first bad record (`diagnose`) for a file DuckDB refuses, reads
    a file whose invalid UTF-8 starts past the sniffed head again as Windows-1252 (noted in the
    layout), HeaderOnlyError for a file without data rows, and LedgerError when the rows parsed
    differ from the records counted. `target` appears only once complete.
    """
    partial = target.with_name(f".{target.name}.{threading.get_ident()}.part")
    con = session(scratch)  # the process's DuckDB instance: its memory limit, its spill

    def write(source: str) -> int:
        con.execute(
            f"COPY (SELECT * FROM {source}) TO {sql_string(str(partial))} "
            "(FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)"
        )
        row = con.execute(f"SELECT count(*) FROM read_parquet({sql_string(str(partial))})")
        return int(row.fetchone()[0])  # type: ignore[index]

    try:
        digest, read = _read_counted(
            path, layout, write, scratch=scratch, progress=progress, blame_file=True
        )
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        con.close()
    partial.replace(target)
    return Columns(target, digest, read)


def read_into(
    con: duckdb.DuckDBPyConnection,
    table: str,
    query: str,
    path: Path,
    layout: CsvLayout,
    *,
    scratch: Path | None = None,
    progress: RowProgress | None = None,
    parallel: bool = True,
) -> tuple[str, CsvLayout]:
    """Create `table` in `con` from `query`, whose `{source}` is the file at `path` read as
    `layout` says (text columns `c0`, `c1`, … as `build_columns` writes them), without writing
    the columns anywhere: for a file's first read, when nothing says it will be read again.
    With `parallel` false, DuckDB reads the file on one thread (`read_csv_sql`).

    Returns the digest of the bytes read and the layout with the records counted; rows keep
    file order (data row n is `rowid + 1`). Raises what `build_columns` raises, for the same
    files (a file whose invalid UTF-8 is in a column `query` does not read is read as
    Windows-1252, as `build_columns` reads it), and what loading `query` from the columns
    raises (a reading DuckDB refuses is not blamed on the file); a table that would lose or
    invent rows is dropped.
    """

    def create(source: str) -> int:
        con.execute("SET SESSION preserve_insertion_order = true")  # this connection's reads
        con.execute(f"CREATE OR REPLACE TABLE {table} AS " + query.replace("{source}", source))
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0

    try:
        try:
            return _read_counted(
                path, layout, create, scratch=scratch, progress=progress, parallel=parallel
            )
        except _RefusedError:
            # The file, or the reading: the columns alone say which (an error path only).
            with tempfile.TemporaryDirectory(prefix=".scratch-", dir=scratch) as folder:
                built = build_columns(path, layout, Path(folder) / "columns.parquet")
                return built.digest, load_columns(con, table, query, built)
    except BaseException:
        with suppress(duckdb.Error):  # the error that stopped the read is the one to report
            con.execute(f"DROP TABLE IF EXISTS {table}")
        raise


class _RefusedError(Exception):
    """DuckDB refused a read that also applied a query: the file or the query may be at fault."""


def _read_counted(
    path: Path,
    layout: CsvLayout,
    run: Callable[[str], int],
    *,
    scratch: Path | None,
    progress: RowProgress | None,
    blame_file: bool = False,
    parallel: bool = True,
) -> tuple[str, CsvLayout]:
    """Run `run` on a `read_csv` table expression of the file (it returns the rows it read)
    while two threads hash the file's bytes (checking them as UTF-8) and count its records;
    return the digest and the layout with its records. Raises as `build_columns` says; with
    `blame_file` false, a read DuckDB refuses for another reason than its encoding raises
    `_RefusedError` instead of the file's diagnosis."""
    size = max(1, path.stat().st_size)
    with (
        tempfile.TemporaryDirectory(prefix=".scratch-", dir=scratch) as folder,
        ThreadPoolExecutor(max_workers=2, thread_name_prefix="columns") as helpers,
    ):
        digest = helpers.submit(digest_and_utf8, path)
        for attempt in range(2):
            source, skip = duckdb_source(path, layout, Path(folder))
            counted = helpers.submit(
                scan_records, source, _reporter(layout.file_name, size, progress)
            )
            first_utf8 = attempt == 0 and layout.encoding == "utf-8"
            try:
                read = run(read_csv_sql(source, layout, skip, parallel=parallel))
            except duckdb.InvalidInputException:
                counted.cancel()
                if first_utf8 and not digest.result()[1]:  # refused for its invalid UTF-8
                    layout = fallback_to_cp1252(layout)
                    continue
                if not blame_file:
                    raise _RefusedError from None
                raise diagnose(path, layout) from None
            if first_utf8 and not digest.result()[1]:  # invalid UTF-8 in a column not read
                counted.cancel()
                layout = fallback_to_cp1252(layout)
                continue
            break
        records, quoted_breaks = counted.result()
        records -= skip
        if read != records and count_csv_records(source, layout.delimiter) - skip == read:
            # A quote inside an unquoted cell (an inch mark): text to both readers.
            logger.info("file=<%s> | a second count agrees with the read", layout.file_name)
            records = read
        if read != records:
            raise LedgerError(
                f"{layout.file_name}: reading the file gave {read:,} rows, but it holds "
                f"{records:,} data records; nothing is reported from a read that loses or "
                "invents rows"
            )
        if read == 0:
            raise HeaderOnlyError(
                "the file has a header row but no data rows", file_name=layout.file_name
            )
        if quoted_breaks and (swallowed := swallowed_rows(source, layout)) is not None:
            layout = replace(layout, warnings=(*layout.warnings, swallowed))
        if progress is not None:
            progress(layout.file_name, records, 1.0)
        return digest.result()[0], replace(layout, records=records)


def _reporter(
    file_name: str, size: int, progress: RowProgress | None
) -> Callable[[int, int], None] | None:
    """A counting callback that reports at most once per `PROGRESS_EVERY` seconds."""
    if progress is None:
        return None
    last = time.monotonic()

    def report(records: int, consumed: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= PROGRESS_EVERY:
            last = now
            try:
                progress(file_name, records, min(1.0, consumed / size))
            except Exception:  # a progress display never stops a read
                logger.warning("file=<%s> | progress report failed", file_name, exc_info=True)

    return report


def load_columns(
    con: duckdb.DuckDBPyConnection, table: str, query: str, columns: Columns
) -> CsvLayout:
    """Create `table` in DuckDB from `query`, whose `{source}` is the file's columns.

    Rows keep file order, so data row n is `rowid + 1` of the table. Returns the file's layout
    with its records; a table whose row count differs from them raises LedgerError. Columns
    whose Parquet file was never written (a file read straight, `Columns.reread`) are read
    again from the file's bytes.
    """
    if columns.table is None and columns.reread is not None and not columns.parquet.exists():
        return columns.reread(con, table, query)
    con.execute("SET SESSION preserve_insertion_order = true")  # this connection's reads only
    con.execute(f"CREATE OR REPLACE TABLE {table} AS " + query.replace("{source}", columns.sql()))
    row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    read = int(row[0]) if row else 0
    if read != columns.records:
        raise LedgerError(
            f"{columns.layout.file_name}: reading the file gave {read:,} rows, but it holds "
            f"{columns.records:,} data records; nothing is reported from a read that loses or "
            "invents rows"
        )
    return columns.layout


def read_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    query: str,
    path: Path,
    layout: CsvLayout,
    workdir: Path | None = None,
) -> CsvLayout:
    """Read the whole file at `path` as `layout` into `table` through `query` (`{source}` is the
    file's columns), without keeping the columns: for a file read once (`read_into`)."""
    return read_into(con, table, query, path, layout, scratch=workdir)[1]
