"""How one file is written (`CsvLayout`), and the header record that names its columns.

A layout is decided once per file, by `detect.inspect_csv` from the file's first bytes or by
`layout_from_options` from the reading options a person approved; every reader then reads the
file exactly as the layout says.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path

from agent.data.ingest.mixed_codec import mixed_codec
from agent.data.ingest.wording import LayoutCode
from agent.data.notes import Note, note
from agent.errors import (
    DuplicateHeaderError,
    EncodingError,
    MappingError,
    MissingHeaderError,
    NotCsvError,
)

# The largest cell any reader accepts (Python's csv module and DuckDB alike), and the widest
# header: beyond these a file is refused rather than read slowly into memory.
MAX_CELL_BYTES = 1 << 20
MAX_COLUMNS = 1_000

DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_LOOKS_LIKE_DATA = re.compile(
    # a number, an amount (a symbol or code before or after it), a dotted or slashed date
    r"^[\s\-+(]*(?:[$€£¥]|[A-Z]{3}\s)?\s*[\d.,:/' ]+\)?\s*(?:[$€£¥]|[A-Z]{3})?$"
    r"|^\d{4}-\d{1,2}-\d{1,2}(?:[ T][\d:.]+(?:Z|\s*[+-]\d{2}:?\d{2})?)?$"  # an ISO date or time
)


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
    notes: tuple[Note, ...] = ()  # how the file was read (`wording.LayoutCode`)
    records: int | None = None
    # What the whole read saw that a person should check: each names the file (`file_name`).
    warnings: tuple[Note, ...] = ()

    @property
    def delimiter_name(self) -> str:
        """The delimiter in words, for messages."""
        return DELIMITER_NAMES[self.delimiter]


@dataclass(frozen=True)
class CsvSample:
    """The layout of a file and its first data records, for profiling and inference.

    `head` and `size` are the first bytes the sample was read from and the file's size (empty
    for a sample made by hand): a person's `header_row` answer reads the sample again from them
    (`detect.reheaded`), without fetching the file.
    """

    layout: CsvLayout
    rows: list[list[str]]
    complete: bool
    head: bytes = field(default=b"", repr=False, compare=False)
    size: int = field(default=0, repr=False, compare=False)


def layout_from_options(
    path: Path, file_name: str, *, encoding: str, delimiter: str, header_row: int
) -> CsvLayout:
    """The layout that approved reading options describe, with the header read from the file.

    Used when reconciling: the file is read exactly as approved, never sniffed again. Raises
    MappingError for a `header_row` below 1 and MissingHeaderError for a header line that is
    empty or past the file's end.
    """
    if header_row < 1:
        raise MappingError(
            f"{file_name}: header_row is the line number of the header, 1 or more, not {header_row}"
        )
    try:
        with path.open("r", encoding=python_codec(encoding), newline="") as handle:
            for _ in range(header_row - 1):
                if not handle.readline():
                    break  # past the end: no header, said below
            reader = csv.reader(handle, delimiter=delimiter)
            record = next(reader, [])
            rows = [row for row in islice(reader, FIT_ROWS) if any(c.strip() for c in row)]
    except UnicodeDecodeError as error:
        raise EncodingError(
            f"the file is not valid {encoding} text near its start, as the approved reading "
            "says it is; export it again as UTF-8",
            file_name=file_name,
        ) from error
    if not any(cell.strip() for cell in record):
        raise MissingHeaderError(
            f"line {header_row}, where the approved reading says the header is, is empty or past "
            "the end of the file; approve a reading with the line of the column names",
            file_name=file_name,
        )
    widths = Counter(len(row) for row in rows)
    if widths:
        record = fit_header(record, rows, max(widths, key=lambda w: (widths[w], w))) or record
    return CsvLayout(
        file_name, encoding, delimiter, header_row - 1, header_columns(record, file_name)
    )


FIT_ROWS = 60
"""The data records below a header that decide whether it is written without their trailing
delimiter (`fit_header`): the first ones, as many as the delimiter is sniffed on."""


def holds_values(record: list[str]) -> bool:
    """Whether any cell of `record` is a value (a number, an amount, a date) rather than a name:
    a record that holds none could be a header itself, so none of its rows is taken for it."""
    return any(_LOOKS_LIKE_DATA.match(cell.strip()) for cell in record if cell.strip())


def fit_header(header: list[str], rows: list[list[str]], width: int) -> list[str] | None:
    """The header record made `width` cells wide, when it is the header of rows of that width
    written without their trailing delimiter (or with one more): its names, trailing empty
    cells aside, are at least two and no more than `width`, and every row of that width among
    the first `FIT_ROWS` is empty past them. None when it is as wide as the rows or is not such
    a header. The cells it lacks are empty, so their column is "(unnamed column N)".

    A row that ends in a delimiter its header does not is common in hand-made and older
    exports; without this, the first data row would be taken for the header (the real one
    dropped as a preamble) and its row lost from the count.
    """
    named = len(header)
    while named and not header[named - 1].strip():
        named -= 1
    if len(header) == width or not 2 <= named <= width:
        return None
    below = (row for row in rows[:FIT_ROWS] if len(row) == width)
    if any(cell.strip() for row in below for cell in row[named:]):
        return None
    return (header + [""] * width)[:width]


MIXED_ENCODING = "utf-8+cp1252"
"""UTF-8 with the bytes that are not UTF-8 read as Windows-1252 (`mixed_codec`)."""
MIXED_NOTE = note(LayoutCode.MIXED_CP1252)
"""The note of a layout read as `MIXED_ENCODING`."""


def fallback_to_cp1252(layout: CsvLayout) -> CsvLayout:
    """The same layout with the bytes that are not UTF-8 read as Windows-1252: for a file
    whose head is UTF-8 and whose invalid UTF-8 starts later."""
    return replace(layout, encoding=MIXED_ENCODING, notes=(*layout.notes, MIXED_NOTE))


def header_columns(record: list[str], file_name: str) -> tuple[str, ...]:
    """The column names a header record gives, checked before any row is read.

    Names are trimmed (a stray BOM too) and an empty one becomes "(unnamed column N)". Raises
    for a header too wide to be an export, a first row that holds values instead of names,
    or two columns with the same name (ignoring case), since a mapping names columns.
    """
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


def python_codec(encoding: str) -> str:
    """The Python codec that reads a layout's encoding (UTF-8 skipping a leading BOM)."""
    if encoding == MIXED_ENCODING:
        return mixed_codec()
    return {"utf-8": "utf-8-sig", "utf-16": "utf-16", "cp1252": "cp1252"}[encoding]
