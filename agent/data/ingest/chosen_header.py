"""The records of a file's head read with the header on the line a person chose (`header_row`).

Automatic detection (`detect`) takes the first record of the table's width, past title rows; a
block of `key;value` lines saved as wide as the table (a bank statement a spreadsheet saved
again) or a row of group names above the column names can still pass for the header. A
person's `header_row=N` answer says which physical line holds the column names: the lines above
it are not read and the records below it are the rows, as `layout_from_options` reads the whole
file once the mapping is approved (the same line count, the same `fit_header`).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator

from agent.data.ingest.layout import FIT_ROWS, fit_header, holds_values
from agent.errors import MappingError


def records_from_line(
    text: str, delimiter: str, header_row: int, file_name: str, *, complete: bool, limit: int
) -> list[list[str]]:
    """The header record starting on physical line `header_row` of `text` (1 is the first
    line), made as wide as its rows when they end in a delimiter it lacks (`fit_header`), then
    the non-blank records below it: at most `limit` records in all.

    `complete` says whether `text` is the whole file or only its head. Raises MappingError,
    naming the file, for a line below 1 or past the end of `text`, an empty line (a blank line
    or delimiters only), a line not as wide as most rows below it (a title), or a line with
    a cell that is a value (a data row, one line off most likely): a person reads which line to
    give instead.
    """
    if header_row < 1:
        raise MappingError(
            f"{file_name}: header_row is the line number of the header, 1 or more, not {header_row}"
        )
    handle = io.StringIO(text, newline="")
    for passed in range(header_row - 1):
        if not handle.readline():
            raise _past_end(file_name, header_row, passed, complete=complete)
    start = handle.tell()
    if not handle.read(1):
        raise _past_end(file_name, header_row, header_row - 1, complete=complete)
    handle.seek(start)
    found = _records(handle, delimiter, header_row, limit)
    line, record = next(found, (header_row, []))
    if line != header_row or not record:
        below = f" (line {line} is the next one with cells)" if record else ""
        raise MappingError(
            f"{file_name}: line {header_row} is empty, so it cannot be the header{below}; "
            "give the line that names the columns"
        )
    rows = [row for _, row in found]
    if rows:
        widths = Counter(len(row) for row in rows[:FIT_ROWS])
        width = max(widths, key=lambda w: (widths[w], w))
        record = fit_header(record, rows, width) or record
        if len(record) != width:
            raise MappingError(
                f"{file_name}: line {header_row} has {len(record)} cell(s) but the rows below it "
                f"have {width}, so it is not their header; give the line that names the columns"
            )
    if holds_values(record):  # a data row: one line off, most likely
        raise MappingError(
            f"{file_name}: line {header_row} holds values (a number, an amount or a date), not "
            "only column names; give the line that names the columns"
        )
    return [record, *rows]


def _records(
    handle: io.StringIO, delimiter: str, first_line: int, limit: int
) -> Iterator[tuple[int, list[str]]]:
    """The non-blank records read from `handle`, each with the physical line it starts on
    (`handle` starts at line `first_line`); `limit` of them at most. A record the reader cannot
    parse ends them, as the automatic detection's own reading does."""
    reader = csv.reader(handle, delimiter=delimiter)
    given = 0
    before = 0
    try:
        for record in reader:
            if any(cell.strip() for cell in record):
                yield first_line + before, record
                given += 1
                if given >= limit:
                    return
            before = reader.line_num
    except csv.Error:
        return


def _past_end(file_name: str, header_row: int, lines: int, *, complete: bool) -> MappingError:
    """The error for a header line past the last of `lines` lines (of the file, or of the
    head read when `complete` is false)."""
    if complete:
        return MappingError(
            f"{file_name}: header_row {header_row} is past the end of the file, which has "
            f"{lines:,} line(s)"
        )
    return MappingError(
        f"{file_name}: header_row {header_row} is past the first {lines:,} lines, the part of "
        "the file read to find its header; the header must be among them"
    )
