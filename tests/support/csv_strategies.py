"""Hypothesis strategies that write CSV exports the many ways real exports are written.

Each generated file carries what the generator itself knows, independently of reconbot's
readers: how many data rows it wrote, on which physical line the header is, and the line
ending it used. Tests compare reconbot's counts with these, never with reconbot's own.

Written here: an optional UTF-8 BOM, an optional preamble (title lines, a quoted title cell
spanning two lines, a blank line), cells quoted when they must be (delimiter, quote, line
break) and at random otherwise, line breaks inside quoted cells (LF or CRLF, whatever the
file's own ending), blank lines between records, and an optional trailing line ending.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass

from hypothesis import strategies as st

LF = "\n"
CRLF = "\r\n"
CR = "\r"

# Cells of free text: quotes, delimiters and line breaks (LF and CRLF), some that look like
# blank lines once inside quotes.
FREE_TEXT = (
    "",
    "",
    "gift wrap",
    "two\nlines",
    "two\r\nlines",
    'say "hi", ok',
    "a,b;c|d",
    "\n",
    "\r\n\r\n",
    "tail\n",
    "\n\nafter two",
    '""',
    " ",
)

# A preamble line: (text, physical lines it takes). `{nl}` is a line break inside quotes.
_TITLES = (
    ("Orders export", 1),
    ("Café Müller — monthly report", 1),
    ("Generated,2025-10-01", 1),
    ('"Export of October{nl}Store: Example, Inc."', 2),
    ("", 1),
)


@dataclass(frozen=True)
class WrittenFile:
    """A CSV file as bytes, and the truth about it from the generator."""

    data: bytes
    records: int  # data rows written: the header and blank lines are not data rows
    header_row: int  # 1-based physical line of the header record (the preamble is above it)
    newline: str  # the line ending of the file's records ("mixed" files: the first one)

    @property
    def text(self) -> str:
        """The file's text, BOM removed (for messages)."""
        return self.data.decode("utf-8-sig")


def render_cell(value: str, *, quote: bool, delimiter: str = ",") -> str:
    """One cell as a CSV writer with minimal (or forced) quoting would write it."""
    if quote or any(c in value for c in (delimiter, '"', "\r", "\n")):
        return '"' + value.replace('"', '""') + '"'
    return value


@st.composite
def rendered_records(draw: st.DrawFn, rows: list[list[str]], delimiter: str = ",") -> list[str]:
    """Each row as one CSV record (without its line ending), cells quoted at random."""
    forced = draw(st.sampled_from([False, False, True]))  # sometimes every cell quoted
    records = []
    for row in rows:
        cells = [
            render_cell(value, quote=forced or draw(st.integers(0, 5)) == 0, delimiter=delimiter)
            for value in row
        ]
        records.append(delimiter.join(cells))
    return records


@st.composite
def preambles(draw: st.DrawFn) -> tuple[list[str], int]:
    """Title lines above the header (without their line endings) and how many lines they take."""
    titles = draw(st.lists(st.sampled_from(_TITLES), max_size=3))
    lines: list[str] = []
    physical = 0
    for text, count in titles:
        inner = draw(st.sampled_from([LF, CRLF]))
        lines.append(text.replace("{nl}", inner))
        physical += count
    return lines, physical


@st.composite
def written_files(
    draw: st.DrawFn,
    header: list[str],
    rows: list[list[str]],
    *,
    endings: tuple[str, ...] = (LF, CRLF),
    mixed_cr: bool = False,
) -> WrittenFile:
    """A file holding `header` and `rows`, written in one of the ways exports are written.

    Its records all end with one of `endings` (and so do the lines of its preamble).
    With `mixed_cr`, the records of the file (header and data) end with CR alone or with LF,
    at least one of each between data records; there are no blank lines then (a CR followed by
    a blank line's LF would just be a CRLF).
    """
    assert rows, "a file needs at least one data row"
    newline = draw(st.sampled_from(endings))
    bom = draw(st.booleans())
    preamble, preamble_lines = draw(preambles())
    records = draw(rendered_records([header, *rows]))
    trailing = draw(st.booleans())
    if mixed_cr:
        # Endings of header and data records: the last one is the optional trailing ending.
        ends = draw(
            st.lists(st.sampled_from([CR, LF]), min_size=len(records), max_size=len(records))
        )
        assert len(rows) >= 2, "a CR between two data records needs two of them"
        # A CR alone between two data records, an LF after another record (the header's
        # ending counts: DuckDB reads the header record too).
        cr_at = draw(st.integers(1, len(records) - 2))
        lf_at = draw(st.integers(0, len(records) - 2).filter(lambda i: i != cr_at))
        ends[cr_at], ends[lf_at] = CR, LF
        newline = ends[0]
        out = [line + newline for line in preamble]
        for i, record in enumerate(records):
            last = i == len(records) - 1
            out.append(record + (ends[i] if not last or trailing else ""))
    else:
        out = [line + newline for line in preamble]
        for i, record in enumerate(records):
            if i == len(records) - 1:
                out.append(record)
                if trailing:
                    out.append(newline * (1 + draw(st.sampled_from([0, 0, 0, 1, 2]))))
            else:
                blanks = draw(st.sampled_from([0, 0, 0, 0, 0, 1, 2]))
                out.append(record + newline * (1 + blanks))
    data = "".join(out).encode("utf-8")
    if bom:
        data = codecs.BOM_UTF8 + data
    return WrittenFile(data, len(rows), preamble_lines + 1, newline)


@st.composite
def csv_texts(draw: st.DrawFn, *, endings: tuple[str, ...] = (LF, CRLF)) -> str:
    """Random CSV text: records of 1-4 cells (quotes, embedded line breaks, delimiters),
    blank lines between them, one line ending per file or one per record, optional trailing
    line ending. Quoting is always valid. No BOM: the caller adds it as bytes.
    """
    cell = st.one_of(
        st.sampled_from(FREE_TEXT),
        st.text(alphabet=st.sampled_from('ab ,"\r\n;é'), max_size=6),
    )
    rows = draw(st.lists(st.lists(cell, min_size=1, max_size=4), min_size=0, max_size=12))
    records = draw(rendered_records(rows)) if rows else []
    # A one-cell record whose cell is empty would be a blank line: quote it, as writers do.
    records = ['""' if record == "" else record for record in records]
    per_record = draw(st.booleans())
    fixed = draw(st.sampled_from(endings))
    leading = draw(st.sampled_from([0, 0, 0, 1]))
    out = [fixed * leading]
    for i, record in enumerate(records):
        ending = draw(st.sampled_from(endings)) if per_record else fixed
        blanks = draw(st.sampled_from([0, 0, 0, 1, 2]))
        last = i == len(records) - 1
        if last and not draw(st.booleans()):
            out.append(record)
        else:
            out.append(record + ending * (1 + blanks))
    return "".join(out)


def python_records(text: str) -> int:
    """Non-blank records of `text` as Python's csv module reads them (the reference count)."""
    csv.field_size_limit(1 << 30)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    return sum(1 for record in reader if record)
