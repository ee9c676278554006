"""Bytes to table: decide how an uploaded export is written, then read it whole with DuckDB.

Nothing here trusts a file name or a column position. The layout (encoding, delimiter, the line
the real header is on) is decided once per file from its first bytes; the whole file is then
read by DuckDB with exactly that layout, every cell as text, so that number and date formats are
decided later, per column, by `profile`. Every problem becomes a typed `InputFileError` that names
the file and, where it helps, the 1-based data row (the n-th record after the header; blank lines
are not records).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import re
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

import duckdb

from agent.errors import (
    CellTooLargeError,
    DuplicateHeaderError,
    EmptyFileError,
    EncodingError,
    FileTooLargeError,
    HeaderOnlyError,
    InputFileError,
    LedgerError,
    MissingHeaderError,
    NotCsvError,
    RaggedRowsError,
    UnclosedQuoteError,
)

DELIMITERS = (",", ";", "\t", "|")
MAX_CELL_BYTES = 1 << 20
HEAD_BYTES = 4 << 20
SAMPLE_ROWS = 20_000
SNIFF_RECORDS = 60
MAX_COLUMNS = 1_000

_MAGIC = [
    (b"PK\x03\x04", "an Excel workbook (.xlsx) or a zip archive"),
    (b"\xd0\xcf\x11\xe0", "a legacy Excel workbook (.xls)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
]
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_LOOKS_LIKE_DATA = re.compile(r"^[\s\-+(]*[$€£¥]?\s*[\d.,:/' ]+\)?$")


@dataclass(frozen=True)
class CsvLayout:
    """How one file is written: what the reading options of a mapping record about a file.

    `header_line` is the number of physical lines (ended by CR, LF or CRLF, quoted or not) above
    the header record; only Python's own line reader interprets it, and DuckDB reads from the
    header's first byte, so a title cell spanning two lines cannot shift the rows. `records` is
    the number of data records counted by `count_records` once the whole file has been read.
    """

    file_name: str
    encoding: str
    delimiter: str
    header_line: int
    columns: tuple[str, ...]
    notes: tuple[str, ...] = ()
    records: int | None = None

    @property
    def delimiter_name(self) -> str:
        """The delimiter in words, for messages."""
        return _DELIMITER_NAMES[self.delimiter]


@dataclass(frozen=True)
class CsvSample:
    """The layout of a file and its first data records, for profiling and inference."""

    layout: CsvLayout
    rows: list[list[str]]
    complete: bool


def inspect_csv(path: Path, file_name: str, *, max_bytes: int) -> CsvSample:
    """Decide the layout of the export at `path` and return it with its first records.

    `file_name` is what the uploader called the file; it appears in every error message.
    Raises an `InputFileError` subclass for anything that is not a readable CSV export.
    """
    size = path.stat().st_size
    if size > max_bytes:
        raise FileTooLargeError(
            f"the file is {_megabytes(size)}, over the upload limit of {_megabytes(max_bytes)}",
            file_name=file_name,
        )
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    complete = len(head) == size
    if not head.strip():
        raise EmptyFileError("the file is empty", file_name=file_name)
    encoding, text, notes = _decode_head(head, file_name, complete=complete)
    delimiter, header_index, records, header_line = _sniff(text, file_name, complete=complete)
    columns = _header(records[header_index], file_name)
    layout = CsvLayout(file_name, encoding, delimiter, header_line, columns, notes)
    data = records[header_index + 1 :]
    if not complete and data:
        data = data[:-1]  # the last record of a cut-off head may itself be cut off
    if complete:
        problem = _first_problem(io.StringIO(text, newline=""), layout)
        if problem is not None:
            raise problem
    rows: list[list[str]] = []
    for number, record in enumerate(data[:SAMPLE_ROWS], start=1):
        if len(record) != len(columns):
            raise _ragged(file_name, number, len(record), len(columns), delimiter)
        rows.append(record)
    if not rows:
        if complete:
            raise HeaderOnlyError("the file has a header row but no data rows", file_name=file_name)
        raise CellTooLargeError(
            "the first data row is larger than the size this reader accepts; "
            "check for a quote that is never closed",
            file_name=file_name,
            row=1,
        )
    return CsvSample(layout, rows, complete and len(data) <= SAMPLE_ROWS)


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
    with path.open("r", encoding=_python_codec(layout.encoding), newline="") as source:
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


_BLANK_LINE = re.compile(rb"\n(?=\n)")


def count_records(path: Path) -> int:
    """The non-blank CSV records of a UTF-8 (or other ASCII-based) file, header included.

    The ledger's independent count: a quote-aware scan of the bytes, separate from DuckDB's
    parser, so that rows a reader loses (a skipped title, a header that swallows a line) show as
    a difference instead of vanishing. A record ends at CR, LF or CRLF outside quotes; a line
    with nothing on it is not a record.
    """
    records = 0
    in_quote = False
    at_start = True
    pending_cr = False
    with path.open("rb") as handle:
        if handle.read(3) != codecs.BOM_UTF8:
            handle.seek(0)
        while chunk := handle.read(1 << 22):
            if pending_cr and chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    continue
            parts = chunk.split(b'"')
            outside = b'"'.join(parts[1 if in_quote else 0 :: 2])
            if b"\r" in outside:
                outside = outside.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            ends = outside.count(b"\n")
            blanks = len(_BLANK_LINE.findall(outside)) if b"\n\n" in outside else 0
            if at_start and not in_quote and outside[:1] == b"\n":
                blanks += 1
            records += ends - blanks
            if len(parts) % 2 == 0:
                in_quote = not in_quote
            last = chunk[-1:]
            pending_cr = not in_quote and last == b"\r"
            at_start = not in_quote and last in (b"\n", b"\r")
    return records + (0 if at_start else 1)


def read_csv_sql(path: Path, layout: CsvLayout, skip: int = 1) -> str:
    """A DuckDB `read_csv(...)` table expression reading a `duckdb_source` file as `layout` says.

    The file starts at the header record (skipped as one record, never as a count of lines) or,
    with `skip=0`, at the first data record. Columns come out as VARCHAR named `c0`, `c1`, … in
    header order; rows in file order.
    """
    columns = ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(layout.columns)))
    return (
        f"read_csv({_sql_string(str(path))}, auto_detect=false, header=false, "
        f"skip={int(skip)}, delim={_sql_string(layout.delimiter)}, quote='\"', "
        f"escape='\"', strict_mode=true, null_padding=false, max_line_size={MAX_CELL_BYTES}, "
        f"columns={{{columns}}})"
    )


def read_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    query: str,
    path: Path,
    layout: CsvLayout,
    workdir: Path | None = None,
) -> CsvLayout:
    """Create `table` in DuckDB from `query`, whose `{source}` is the whole file read as `layout`.

    Rows keep file order, so data row n is `rowid + 1`. A file whose invalid UTF-8 starts past
    the sniffed head is read again as Windows-1252 (and says so in the returned layout's notes);
    any other refusal becomes the typed error of the first bad row (`diagnose`). The returned
    layout carries the file's data records as `count_records` counts them; a table whose row
    count differs raises LedgerError.
    """
    con.execute("SET preserve_insertion_order = true")
    with (
        tempfile.TemporaryDirectory(dir=workdir) as scratch,
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="count") as counter,
    ):
        for attempt in range(2):
            source, skip = duckdb_source(path, layout, Path(scratch))
            counted = counter.submit(count_records, source)
            sql = f"CREATE OR REPLACE TABLE {table} AS " + query.replace(
                "{source}", read_csv_sql(source, layout, skip)
            )
            try:
                con.execute(sql)
                break
            except duckdb.InvalidInputException as error:
                if attempt == 0 and layout.encoding == "utf-8" and "unicode" in str(error).lower():
                    layout = fallback_to_cp1252(layout)
                    continue
                raise diagnose(path, layout) from None
        records = counted.result() - skip
    row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    read = int(row[0]) if row else 0
    if read != records:
        raise LedgerError(
            f"{layout.file_name}: reading the file gave {read:,} rows, but it holds {records:,} "
            "data records; nothing is reported from a read that loses or invents rows"
        )
    if read == 0:
        raise HeaderOnlyError(
            "the file has a header row but no data rows", file_name=layout.file_name
        )
    return replace(layout, records=records)


def diagnose(path: Path, layout: CsvLayout) -> InputFileError:
    """Find the first structural problem in the whole file, for a read that DuckDB refused.

    Streams the file once with Python's csv module and returns (does not raise) the typed error
    for the first bad record, naming its data row.
    """
    try:
        with path.open("r", encoding=_python_codec(layout.encoding), newline="") as handle:
            problem = _first_problem(handle, layout)
    except UnicodeDecodeError:
        return EncodingError(
            f"the file is not valid {layout.encoding} text past its first part; "
            "export it again as UTF-8",
            file_name=layout.file_name,
        )
    if problem is None and _mixed_line_endings(path):
        return NotCsvError(
            "the file mixes line endings (some rows end with CR alone, others with LF); "
            "export it again or save it with one kind of line ending",
            file_name=layout.file_name,
        )
    return problem or NotCsvError("the file could not be read as CSV", file_name=layout.file_name)


def _mixed_line_endings(path: Path) -> bool:
    """Whether rows end with a lone CR somewhere and with LF elsewhere (DuckDB refuses that)."""
    lone_cr = newline = False
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            lone_cr = lone_cr or chunk.count(b"\r") > chunk.count(b"\r\n")
            newline = newline or b"\n" in chunk
            if lone_cr and newline:
                return True
    return False


def _first_problem(handle: IO[str], layout: CsvLayout) -> InputFileError | None:
    """The typed error of the first record that breaks `layout`, or None if all fit."""
    name = layout.file_name
    csv.field_size_limit(MAX_CELL_BYTES)
    for _ in range(layout.header_line):
        handle.readline()
    reader = csv.reader(handle, delimiter=layout.delimiter, strict=True)
    row = 0
    try:
        next(reader, None)
        for row, record in _numbered(reader):
            if len(record) != len(layout.columns):
                return _ragged(name, row, len(record), len(layout.columns), layout.delimiter)
    except csv.Error as error:
        text = str(error)
        if "field larger than field limit" in text:
            return CellTooLargeError(
                f"a cell is larger than {_megabytes(MAX_CELL_BYTES)}; "
                "check for a quote that is never closed",
                file_name=name,
                row=row + 1,
            )
        if "unexpected end of data" in text or "EOF" in text:
            return UnclosedQuoteError(
                "a quoted cell starts here and its closing quote never comes",
                file_name=name,
                row=row + 1,
            )
        return NotCsvError(f"the CSV structure is broken ({text})", file_name=name, row=row + 1)
    return None


def _numbered(reader: Iterator[list[str]]) -> Iterator[tuple[int, list[str]]]:
    number = 0
    for record in reader:
        if not record:
            continue
        number += 1
        yield number, record


def _decode_head(
    head: bytes, file_name: str, *, complete: bool
) -> tuple[str, str, tuple[str, ...]]:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8", head[3:].decode("utf-8", errors="ignore"), ()
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = codecs.getincrementaldecoder("utf-16")().decode(head, final=complete)
        return "utf-16", text, ("read as UTF-16",)
    for magic, what in _MAGIC:
        if head.startswith(magic):
            raise NotCsvError(
                f"this is {what}, not a CSV file; export it as CSV and upload that",
                file_name=file_name,
            )
    if b"\x00" in head:
        raise NotCsvError(
            "the file contains binary data, not CSV text; export it as CSV and upload that",
            file_name=file_name,
        )
    try:
        return "utf-8", codecs.getincrementaldecoder("utf-8")().decode(head, final=complete), ()
    except UnicodeDecodeError:
        pass
    try:
        text = head.decode("cp1252")
    except UnicodeDecodeError as error:
        raise EncodingError(
            "the file is neither UTF-8 nor Windows-1252 text; export it again as UTF-8",
            file_name=file_name,
        ) from error
    return "cp1252", text, ("not UTF-8: read as Windows-1252",)


def _sniff(text: str, file_name: str, *, complete: bool) -> tuple[str, int, list[list[str]], int]:
    """Pick the delimiter and the header record.

    The table's width is the most common record width (two columns or more) under the
    delimiter that gives the most records of one width; the header is the first record of that
    width, and records above it are a preamble (report titles, totals). Rows of another width
    below the header are ragged rows, reported later with their row numbers.
    """
    best: tuple[tuple[int, int], str, int] | None = None
    for delimiter in DELIMITERS:
        records, _ = _records(text, delimiter, limit=SNIFF_RECORDS)
        usable = records if complete or len(records) < 2 else records[:-1]
        widths = [len(record) for record in usable]
        counts: dict[int, int] = {}
        for width in widths:
            if width >= 2:
                counts[width] = counts.get(width, 0) + 1
        if not counts:
            continue
        width = max(counts, key=lambda w: (counts[w], w))
        score = (counts[width], width)
        if best is None or score > best[0]:
            best = (score, delimiter, widths.index(width))
    if best is None:
        raise NotCsvError(
            "no columns found: expected values separated by commas, semicolons, tabs or pipes",
            file_name=file_name,
        )
    _, delimiter, index = best
    records, lines = _records(text, delimiter, limit=SAMPLE_ROWS + index + 2)
    return delimiter, index, records, lines[index]


def _records(text: str, delimiter: str, *, limit: int) -> tuple[list[list[str]], list[int]]:
    """Non-blank records of `text`, each with the number of physical lines before it."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    records: list[list[str]] = []
    starts: list[int] = []
    before = 0
    try:
        for record in reader:
            if record and any(cell.strip() for cell in record):
                records.append(record)
                starts.append(before)
                if len(records) >= limit:
                    break
            before = reader.line_num
    except csv.Error:
        pass
    return records, starts


def _header(record: list[str], file_name: str) -> tuple[str, ...]:
    if len(record) > MAX_COLUMNS:
        raise NotCsvError(
            f"the header has {len(record):,} columns; reconbot reads exports of at most "
            f"{MAX_COLUMNS:,} columns: export only the columns you need, or check that the "
            "file is an orders or payments export",
            file_name=file_name,
        )
    names = [cell.strip().lstrip("\ufeff").strip() for cell in record]
    filled = [name for name in names if name]
    if filled and sum(1 for n in filled if _LOOKS_LIKE_DATA.match(n)) * 2 > len(filled):
        raise MissingHeaderError(
            "the first row holds values, not column names; add the header row of the export",
            file_name=file_name,
        )
    columns = [name or f"(unnamed column {i + 1})" for i, name in enumerate(names)]
    seen: dict[str, str] = {}
    for name in columns:
        key = name.casefold()
        if key in seen:
            raise DuplicateHeaderError(
                f'two columns are both named "{name}"; rename one of them and upload again',
                file_name=file_name,
            )
        seen[key] = name
    return tuple(columns)


def _ragged(file_name: str, row: int, found: int, expected: int, delimiter: str) -> RaggedRowsError:
    return RaggedRowsError(
        f"this row has {found} cells but the header has {expected} "
        f"(separated by {_DELIMITER_NAMES[delimiter]}s); check for a stray separator or quote",
        file_name=file_name,
        row=row,
    )


def _python_codec(encoding: str) -> str:
    return {"utf-8": "utf-8-sig", "utf-16": "utf-16", "cp1252": "cp1252"}[encoding]


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"


def layout_from_options(
    path: Path, file_name: str, *, encoding: str, delimiter: str, header_row: int
) -> CsvLayout:
    """The layout that approved reading options describe, with the header read from the file.

    Used when reconciling: the file is read exactly as approved, never sniffed again.
    """
    with path.open("r", encoding=_python_codec(encoding), newline="") as handle:
        for _ in range(header_row - 1):
            handle.readline()
        record = next(csv.reader(handle, delimiter=delimiter), [])
    return CsvLayout(file_name, encoding, delimiter, header_row - 1, _header(record, file_name))


def fallback_to_cp1252(layout: CsvLayout) -> CsvLayout:
    """The same layout read as Windows-1252: for a file whose invalid UTF-8 starts late."""
    return replace(
        layout, encoding="cp1252", notes=(*layout.notes, "not UTF-8: read as Windows-1252")
    )


def file_digest(path: Path) -> str:
    """`sha256:` + the hex sha256 of the file's bytes, read in one streaming pass."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()
