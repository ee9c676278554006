"""Typed, row-numbered errors for a file that does not fit its layout.

A reader that refuses a file (DuckDB, or the sample read while detecting the layout) says
little about where or why; these functions stream the file with Python's csv module and name
the first bad record by its 1-based data row (blank lines are not records).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from agent.data.ingest.layout import DELIMITER_NAMES, MAX_CELL_BYTES, CsvLayout, python_codec
from agent.data.ingest.wording import LayoutCode
from agent.data.notes import Note, note
from agent.errors import (
    CellTooLargeError,
    EncodingError,
    InputFileError,
    NotCsvError,
    RaggedRowsError,
    UnclosedQuoteError,
)


def diagnose(path: Path, layout: CsvLayout) -> InputFileError:
    """Find the first structural problem in the whole file, for a read that DuckDB refused.

    Streams the file once with Python's csv module and returns (does not raise) the typed error
    for the first bad record, naming its data row.
    """
    try:
        with path.open("r", encoding=python_codec(layout.encoding), newline="") as handle:
            problem = first_problem(handle, layout)
    except UnicodeDecodeError:
        return EncodingError(
            f"the file is not valid {layout.encoding} text past its first part; "
            "export it again as UTF-8",
            file_name=layout.file_name,
        )
    mixed = _mixed_line_endings(path) if problem is None else None
    if mixed is not None:
        return NotCsvError(
            f"the file mixes line endings ({mixed}); export it again or save it with one kind "
            "of line ending",
            file_name=layout.file_name,
        )
    return problem or NotCsvError("the file could not be read as CSV", file_name=layout.file_name)


def _mixed_line_endings(path: Path) -> str | None:
    """Which line endings the file mixes, in words, with the line where the second kind first
    appears; None when its lines all end alike (DuckDB refuses a mix)."""
    kinds = {b"\r\n": "CRLF", b"\r": "CR alone", b"\n": "LF alone"}
    first: bytes | None = None
    line = 1
    tail = b""
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            text = tail + chunk
            # A CR at the end of a chunk may be the first half of a CRLF: read it with the next.
            tail = b"\r" if text.endswith(b"\r") else b""
            text = text[: len(text) - len(tail)]
            for ending in re.finditer(rb"\r\n|\r|\n", text):
                kind = ending.group()
                if first is None:
                    first = kind
                elif kind != first:
                    return (
                        f"lines end with {kinds[first]} until line {line}, which ends with "
                        f"{kinds[kind]}"
                    )
                line += 1
    return None


def first_problem(handle: IO[str], layout: CsvLayout) -> InputFileError | None:
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
                return ragged_row_error(
                    name, row, len(record), len(layout.columns), layout.delimiter
                )
    except csv.Error as error:
        # csv.Error has no subclasses: its message is the only thing that tells its causes apart.
        text = str(error)
        if "field larger than field limit" in text:
            return CellTooLargeError(
                f"a cell is larger than {megabytes(MAX_CELL_BYTES)}; "
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


def ragged_row_error(
    file_name: str, row: int, found: int, expected: int, delimiter: str
) -> RaggedRowsError:
    """The error for data row `row`, which has `found` cells where the header has `expected`."""
    return RaggedRowsError(
        f"this row has {found} cells but the header has {expected} "
        f"(separated by {DELIMITER_NAMES[delimiter]}s); check for a stray separator or quote",
        file_name=file_name,
        row=row,
    )


def megabytes(size: int) -> str:
    """A byte size in megabytes, for messages."""
    return f"{size / (1 << 20):.1f} MB"


def swallowed_rows(path: Path, layout: CsvLayout, limit: int = 3) -> Note | None:
    """A warning naming the cells that hold a line break and, on a line of their own, as many
    separators as a row has; None when no cell does.

    A quote left open in one cell and closed rows later is valid CSV: the rows between read
    as that cell's text, and the file's count agrees, so nothing else would show they are
    gone. `path` is a UTF-8 file that starts at its header record (`duckdb_source`). The
    warning names the file (`LayoutCode.ROWS_SWALLOWED`).
    """
    csv.field_size_limit(MAX_CELL_BYTES)
    separators = len(layout.columns) - 1
    found: list[list[int | str]] = []
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        records = (r for r in csv.reader(handle, delimiter=layout.delimiter) if r)
        next(records, None)
        for row, record in enumerate(records, start=1):
            for column, cell in zip(layout.columns, record, strict=False):
                lines = cell.splitlines()
                if len(lines) > 1 and any(
                    line.count(layout.delimiter) >= separators for line in lines
                ):
                    found.append([row, column])
            if len(found) >= limit:
                break
    if not found:
        return None
    return note(LayoutCode.ROWS_SWALLOWED, file_name=layout.file_name, cells=found)
