"""How DuckDB reads a whole file exactly as its layout says, every cell as text.

Number and date formats are decided later, per column, by `profile`; `columnar` runs the read.
"""

from __future__ import annotations

import codecs
import csv
import shutil
from collections.abc import Iterator
from pathlib import Path

from agent.data.ingest.layout import MAX_CELL_BYTES, CsvLayout, python_codec


def duckdb_source(path: Path, layout: CsvLayout, workdir: Path) -> tuple[Path, int]:
    """A UTF-8 file for DuckDB whose first record is a one-line header, and the records to skip.

    `path` itself (skip 1) when it is UTF-8 with the header on its first line and no line break
    inside a header cell. Otherwise a copy in `workdir` that starts at the first data record:
    the preamble and the header are cut by Python's line reader (the one reader that counts
    them), so DuckDB never counts lines to find the header, and never guesses the file's line
    ending from a line break inside a header cell (Excel's Alt+Enter), which it gets wrong: the
    copy gets a one-line stand-in header that ends like the records.
    """
    multiline_header = any("\n" in c or "\r" in c for c in layout.columns)
    if layout.encoding == "utf-8" and layout.header_line == 0 and not multiline_header:
        return path, 1
    target = workdir / f"{path.name}.data.csv"
    with path.open("r", encoding=python_codec(layout.encoding), newline="") as source:
        consumed = [source.readline() for _ in range(layout.header_line)]

        def lines() -> Iterator[str]:
            while line := source.readline():
                consumed.append(line)
                yield line

        csv.field_size_limit(MAX_CELL_BYTES)
        next(csv.reader(lines(), delimiter=layout.delimiter), None)
        if layout.encoding == "utf-8":
            with path.open("rb") as raw:
                bom = len(codecs.BOM_UTF8) if raw.read(3) == codecs.BOM_UTF8 else 0
                raw.seek(bom + len("".join(consumed).encode("utf-8")))
                with target.open("wb") as raw_sink:
                    raw_sink.write(_plain_header(layout, consumed).encode("utf-8"))
                    shutil.copyfileobj(raw, raw_sink, 1 << 20)
            return target, 1
        with target.open("w", encoding="utf-8", newline="") as sink:
            sink.write(_plain_header(layout, consumed))
            while chunk := source.read(1 << 20):
                sink.write(chunk)
    return target, 1


def _plain_header(layout: CsvLayout, consumed: list[str]) -> str:
    """A one-line stand-in header ending like the file's records: DuckDB guesses the line
    ending from the first line break, so it must be the records' own (an explicit CRLF
    `new_line` is misread by DuckDB 2.0)."""
    names = layout.delimiter.join(f"c{i}" for i in range(len(layout.columns)))
    return names + _line_ending(consumed[-1] if consumed else "")


def _line_ending(line: str) -> str:
    """The line ending a physical line ends with (LF when it has none)."""
    if line.endswith("\r\n"):
        return "\r\n"
    return "\r" if line.endswith("\r") else "\n"


def read_csv_sql(path: Path, layout: CsvLayout, skip: int = 1, *, parallel: bool = True) -> str:
    """A DuckDB `read_csv(...)` table expression reading a `duckdb_source` file as `layout` says.

    The file starts at the header record (skipped as one record, never as a count of lines) or,
    with `skip=0`, at the first data record. Columns come out as VARCHAR named `c0`, `c1`, … in
    header order; rows in file order. With `parallel` false the file is read on one thread (for
    a read that runs beside another one: see `preload`).
    """
    columns = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(layout.columns)))
    one_thread = "" if parallel else "parallel=false, "
    return (
        f"read_csv({sql_string(str(path))}, auto_detect=false, {one_thread}header=false, "
        f"skip={int(skip)}, delim={sql_string(layout.delimiter)}, quote='\"', "
        f"escape='\"', strict_mode=true, null_padding=false, max_line_size={MAX_CELL_BYTES}, "
        f"columns={{{columns}}})"
    )


def sql_string(value: str) -> str:
    """`value` as a SQL string literal."""
    return "'" + value.replace("'", "''") + "'"
