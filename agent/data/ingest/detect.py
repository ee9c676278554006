"""Decide how an uploaded export is written from its first bytes, and sample its records.

Nothing here trusts a file name or a column position: the encoding comes from the bytes, the
delimiter and the header record from the widths of the first records, and records above the
header are a preamble (report titles, totals).
"""

from __future__ import annotations

import codecs
import csv
import io
import logging
import re
from itertools import compress, islice
from pathlib import Path

from agent.data.ingest.chosen_header import records_from_line
from agent.data.ingest.diagnosis import first_problem, megabytes, ragged_row_error
from agent.data.ingest.layout import (
    MIXED_ENCODING,
    MIXED_NOTE,
    CsvLayout,
    CsvSample,
    fit_header,
    header_columns,
    holds_values,
)
from agent.data.ingest.mixed_codec import mixed_codec
from agent.data.ingest.wording import LayoutCode
from agent.data.notes import Note, note
from agent.errors import (
    CellTooLargeError,
    EmptyFileError,
    EncodingError,
    FileTooLargeError,
    HeaderOnlyError,
    MappingError,
    MissingHeaderError,
    NotCsvError,
    RaggedRowsError,
)

logger = logging.getLogger(__name__)

DELIMITERS = (",", ";", "\t", "|")
# A multi-byte UTF-8 letter (`Ü` is C3 9C): in a Windows-1252 file such pairs are rare
# nonsense (`Ãœ`), so one beside bytes that are not UTF-8 says the file is UTF-8 with strays.
_UTF8_LETTER = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)
HEAD_BYTES = 4 << 20
SAMPLE_ROWS = 20_000
SNIFF_RECORDS = 60
# The lengths of the prefixes of a head each delimiter is sniffed on before the whole head.
_SNIFF_PREFIXES = (1 << 16, 1 << 20)

_MAGIC = [
    (b"PK\x03\x04", "an Excel workbook (.xlsx) or a zip archive"),
    (b"\xd0\xcf\x11\xe0", "a legacy Excel workbook (.xls)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip archive"),
]


def inspect_csv(
    path: Path, file_name: str, *, max_bytes: int | None = None, header_row: int | None = None
) -> CsvSample:
    """Decide the layout of the export at `path` and return it with its first records.

    Only the first `HEAD_BYTES` are read, whatever the file's size. `file_name` is what the
    uploader called the file; it appears in every error message. `max_bytes` is an upload
    limit to enforce (none for a file named on the operator's own machine). `header_row` is
    the line of the header a person gave (see `inspect_head`). Raises an `InputFileError`
    subclass for anything that is not a readable CSV export.
    """
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise FileTooLargeError(
            f"the file is {megabytes(size)}, over the upload limit of {megabytes(max_bytes)}",
            file_name=file_name,
        )
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    return inspect_head(head, size, file_name, header_row=header_row)


def inspect_head(
    head: bytes, size: int, file_name: str, *, header_row: int | None = None
) -> CsvSample:
    """`inspect_csv` of a file of `size` bytes whose first bytes are `head` (up to
    `HEAD_BYTES`): the head alone decides the layout and gives the sample.

    With `header_row` (a person's answer, 1 for the first line) the header is that physical
    line, not the one detected, and raises MappingError for a line that cannot be the header
    (`chosen_header.records_from_line`); the delimiter and encoding are still detected.
    """
    head = head[:HEAD_BYTES]
    complete = len(head) == size
    if not head.strip():
        raise EmptyFileError("the file is empty", file_name=file_name)
    encoding, text, notes = _decode_head(head, file_name, complete=complete)
    if header_row is None:
        delimiter, header_index, records, header_line = _sniff(text, file_name, complete=complete)
        chosen = False
    else:
        delimiter = _table(text, file_name, complete=complete)[0]
        limit = SAMPLE_ROWS + 2
        records = records_from_line(
            text, delimiter, header_row, file_name, complete=complete, limit=limit
        )
        header_index, header_line, chosen = 0, header_row - 1, True
    columns = header_columns(records[header_index], file_name)
    if header_line > 0:  # a title, notes or totals above the table: said, never read as rows
        notes = (*notes, note(LayoutCode.HEADER_LINE, line=header_line + 1, answered=chosen))
    layout = CsvLayout(file_name, encoding, delimiter, header_line, columns, notes)
    data = records[header_index + 1 :]
    if not complete and data:
        data = data[:-1]  # the last record of a cut-off head may itself be cut off
    if complete:
        problem = first_problem(io.StringIO(text, newline=""), layout)
        if problem is not None:
            raise problem
    rows = data[:SAMPLE_ROWS]
    width = len(columns)
    if any(map(width.__ne__, map(len, rows))):  # the first ragged row is named
        if not complete:  # numbered as the whole read numbers rows (blank records counted)
            whole_lines = text[: max(text.rfind("\n"), text.rfind("\r")) + 1]
            problem = first_problem(io.StringIO(whole_lines, newline=""), layout)
            if isinstance(problem, RaggedRowsError):
                raise problem
        number, record = next((n, r) for n, r in enumerate(rows, start=1) if len(r) != width)
        raise ragged_row_error(file_name, number, len(record), width, delimiter)
    if not rows:
        if complete:
            raise HeaderOnlyError("the file has a header row but no data rows", file_name=file_name)
        raise CellTooLargeError(
            "the first data row is larger than the size this reader accepts; "
            "check for a quote that is never closed",
            file_name=file_name,
            row=1,
        )
    return CsvSample(layout, rows, complete and len(data) <= SAMPLE_ROWS, head=head, size=size)


def reheaded(sample: CsvSample, header_row: int) -> CsvSample:
    """`sample`'s file read again from its kept head (`CsvSample.head`) with the header on
    line `header_row`, as a person answered; `sample` itself when it already has its header
    there. Why: the header detected from the widths of the first records can be a line of
    notes padded as wide as the table, and a person's answer must make the proposal read the
    columns of the line they named.

    Raises MappingError for a line that cannot be the header, or for a sample whose head was
    not kept (one made by hand), and the typed input errors of `inspect_head`.
    """
    layout = sample.layout
    if layout.header_line + 1 == header_row:
        return sample
    if not sample.head:
        raise MappingError(
            f"{layout.file_name}: its first bytes were not kept, so it cannot be read again with "
            f"the header on line {header_row}"
        )
    logger.info(
        "file=<%s> header_row=<%d> | sample read again with the header a person gave",
        layout.file_name,
        header_row,
    )
    return inspect_head(sample.head, sample.size, layout.file_name, header_row=header_row)


def _decode_head(
    head: bytes, file_name: str, *, complete: bool
) -> tuple[str, str, tuple[Note, ...]]:
    if head.startswith(codecs.BOM_UTF8):
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(head[3:], final=complete)
        except UnicodeDecodeError as error:
            raise EncodingError(
                "the file starts as UTF-8 text (a byte order mark) but holds bytes that are not "
                f"UTF-8 (byte {error.start + 4:,} of the file, a Windows-1252 letter perhaps); "
                "export it again as UTF-8",
                file_name=file_name,
            ) from error
        return "utf-8", text, ()
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = codecs.getincrementaldecoder("utf-16")().decode(head, final=complete)
        except UnicodeDecodeError as error:
            raise EncodingError(
                "the file starts as UTF-16 text but is not valid UTF-16; export it again as UTF-8",
                file_name=file_name,
            ) from error
        return "utf-16", text, (note(LayoutCode.UTF16),)
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
    if _UTF8_LETTER.search(head):  # UTF-8 letters beside stray bytes: a UTF-8 file, mostly
        text = codecs.getincrementaldecoder(mixed_codec())().decode(head, final=complete)
        return MIXED_ENCODING, text, (MIXED_NOTE,)
    try:
        text = head.decode("cp1252")
    except UnicodeDecodeError as error:
        raise EncodingError(
            "the file is neither UTF-8 nor Windows-1252 text; export it again as UTF-8",
            file_name=file_name,
        ) from error
    return "cp1252", text, (note(LayoutCode.CP1252),)


def _sniff(text: str, file_name: str, *, complete: bool) -> tuple[str, int, list[list[str]], int]:
    """Pick the delimiter and the header record.

    The table's width is the most common record width (two columns or more) under the
    delimiter that gives the most records of one width; the header is the first record of that
    width, and records above it are a preamble (report titles, totals). Rows of another width
    below the header are ragged rows, reported later with their row numbers.
    """
    # The header is among the first records, so its line is the one sniffing counted.
    delimiter, index, starts = _table(text, file_name, complete=complete)
    index = _past_titles(_first_records(text, delimiter)[0], index)
    records = _all_records(text, delimiter, limit=SAMPLE_ROWS + index + 2)
    if index > 0 and holds_values(records[index]):
        # The first record of the table's width holds values: the header may be the record
        # above it, written without its rows' trailing delimiter (or with one more). A record
        # above that holds values too is a row: rows of several widths, not a preamble.
        above = records[index - 1]
        fitted = (
            None if holds_values(above) else fit_header(above, records[index:], len(records[index]))
        )
        if fitted is None:
            raise MissingHeaderError(
                f"the first row of the table (line {starts[index] + 1}) holds values, not column "
                "names, and the lines above it have fewer cells; check that the header row is "
                "there and that every row has as many cells as the header",
                file_name=file_name,
            )
        index -= 1
        records[index] = fitted
    return delimiter, index, records, starts[index]


def _table(text: str, file_name: str, *, complete: bool) -> tuple[str, int, list[int]]:
    """The delimiter under which the most records have one width (two columns or more), the
    index of the first record of that width among the first records, and the number of lines
    before each of them."""
    best: tuple[tuple[int, int], str, int, list[int]] | None = None
    for delimiter in DELIMITERS:
        records, starts = _first_records(text, delimiter)
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
            best = (score, delimiter, widths.index(width), starts)
    if best is None:
        raise NotCsvError(
            "no columns found: expected values separated by commas, semicolons, tabs or pipes",
            file_name=file_name,
        )
    _, delimiter, index, starts = best
    return delimiter, index, starts


def _past_titles(records: list[list[str]], index: int) -> int:
    """The header's record past title rows padded to the table's width: a spreadsheet saves
    `Sales report October,,,,,` as wide as the table, so the first records of that width are
    titles when each has one cell filled at most and the record after them, as wide, names two
    columns or more and holds no values (a report's several note lines, each padded, too)."""
    width = len(records[index])
    past = index
    while past < len(records) and len(records[past]) == width and _filled(records[past]) <= 1:
        past += 1
    if width < 3 or past == index or past == len(records):
        return index
    header = records[past]
    if len(header) == width and _filled(header) >= 2 and not holds_values(header):
        return past
    return index


def _filled(record: list[str]) -> int:
    """How many cells of `record` hold more than spaces."""
    return sum(1 for cell in record if cell.strip())


def _first_records(text: str, delimiter: str) -> tuple[list[list[str]], list[int]]:
    """`_records(text, delimiter, limit=SNIFF_RECORDS)`, from a prefix of `text` when one holds
    them: each delimiter is sniffed without copying the whole head.

    A prefix cut after a line feed has the first lines of `text`, and a record ends with its
    last line, so only a prefix's last record can differ from the record of `text` (cut off at
    the prefix's end). When a prefix gives more than `SNIFF_RECORDS` records, the first ones
    are those of `text`, at the same lines; otherwise a longer prefix, then `text`, is read.
    """
    for size in _SNIFF_PREFIXES:
        if size >= len(text):
            break
        prefix = text[: text.rfind("\n", 0, size) + 1]
        records, starts = _records(prefix, delimiter, limit=SNIFF_RECORDS + 1)
        if len(records) > SNIFF_RECORDS:
            return records[:SNIFF_RECORDS], starts[:SNIFF_RECORDS]
    return _records(text, delimiter, limit=SNIFF_RECORDS)


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


def _all_records(text: str, delimiter: str, *, limit: int) -> list[list[str]]:
    """The records of `_records(text, delimiter, limit=limit)`, read in batches.

    Each batch is as many records as are still wanted, so no record past the last one wanted is
    read; the blank ones (every cell empty or spaces) are left out of it at once. A file the
    reader stops on (`csv.Error`) is read again one record at a time, as `_records` reads it.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    records: list[list[str]] = []
    try:
        while len(records) < limit:
            batch = list(islice(reader, limit - len(records)))
            if not batch:
                break
            records += compress(batch, map(str.strip, map("".join, batch)))
    except csv.Error:
        return _records(text, delimiter, limit=limit)[0]
    return records
