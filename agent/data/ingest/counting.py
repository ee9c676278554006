"""The ledger's independent count of a file's records, by a scan of its bytes."""

from __future__ import annotations

import codecs
import csv
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from agent.data.ingest.layout import MAX_CELL_BYTES

CHUNK_BYTES = 1 << 18
"""Bytes read and scanned at a time: memory stays a few times this whatever the file's size.

Small enough that a chunk and its two work arrays stay in a core's L2 cache across the scan's
passes (256 KiB took 0.12 s of CPU on the 146 MB benchmark file, 4 MiB 0.20 s); a module
constant so that tests can make it tiny and put chunk boundaries inside CRLFs and quotes.
"""

_LF, _CR, _QUOTE = 0x0A, 0x0D, 0x22


class RecordCount(NamedTuple):
    """A file's records (header included) and the line breaks inside its quoted cells."""

    records: int
    quoted_breaks: int


def count_records(path: Path, progress: Callable[[int, int], None] | None = None) -> int:
    """The non-blank CSV records of a file, header included (`scan_records`)."""
    return scan_records(path, progress).records


def scan_records(path: Path, progress: Callable[[int, int], None] | None = None) -> RecordCount:
    """The non-blank CSV records of a UTF-8 (or other ASCII-based) file, header included.

    The ledger's independent count: a quote-aware scan of the bytes, separate from DuckDB's
    parser, so that rows a reader loses (a skipped title, a header that swallows a line) show as
    a difference instead of vanishing. A record ends at CR, LF or CRLF outside quotes; a line
    with nothing on it is not a record. A UTF-8 BOM is skipped; `progress`, if given, hears
    (records so far, bytes consumed) after each chunk.

    It runs beside DuckDB's parse of the same file and takes CPU from it, so the scan is
    vectorised (numpy, which releases the GIL) rather than byte by byte in Python. numpy is
    imported with this module, when the process starts: imported on the first count, it took
    0.2 s of the first upload after each start, and 0.5-1.7 s where Python keeps no bytecode
    cache (it is compiled again, beside the parse, on a machine whose cores the parse keeps
    busy).
    """
    records = breaks = 0
    in_quote = False
    at_start = True  # the last byte seen ended a line outside quotes, or none was seen yet
    consumed = 0
    size = CHUNK_BYTES
    buffer = bytearray(size)
    data = np.frombuffer(buffer, dtype=np.uint8)
    marks = np.empty(size, dtype=np.bool_)
    scratch = np.empty(size, dtype=np.bool_)
    with path.open("rb", buffering=0) as handle:
        if handle.read(3) != codecs.BOM_UTF8:
            handle.seek(0)
        while read := handle.readinto(buffer):
            consumed += read
            ends, inside, in_quote, at_start = _scan(
                data[:read], marks[:read], scratch[:read], in_quote, at_start
            )
            records += ends
            breaks += inside
            if progress is not None:
                progress(records, consumed)
    return RecordCount(records + (0 if at_start else 1), breaks)


def _scan(
    chunk: npt.NDArray[np.uint8],
    marks: npt.NDArray[np.bool_],
    scratch: npt.NDArray[np.bool_],
    in_quote: bool,
    at_start: bool,
) -> tuple[int, int, bool, bool]:
    """The records `chunk` ends, the line breaks inside its quotes, and whether it leaves a
    quote open and a line just ended.

    Only quotes, CRs and LFs matter, and they are few, so their positions are found in whole-
    array passes (`marks` and `scratch` are work space the size of `chunk`) and the rules are
    applied to those positions alone: a line ending is inside quotes when an odd number of
    quotes precede it (`in_quote` carries the parity across chunks), and it ends a record unless
    the byte before it also ended a line (a blank line, or the LF of a CRLF) or it starts the
    file. `at_start` says the previous chunk ended with a line ending outside quotes, which is
    what carries a CRLF or a blank line across a chunk boundary.
    """
    np.equal(chunk, _LF, out=marks)
    np.equal(chunk, _CR, out=scratch)
    np.logical_or(marks, scratch, out=marks)
    np.equal(chunk, _QUOTE, out=scratch)
    np.logical_or(marks, scratch, out=marks)
    where = np.flatnonzero(marks)
    if where.size == 0:
        return 0, 0, in_quote, False
    quote = chunk[where] == _QUOTE
    # Quote parity after each marked byte (including it): for a line ending, inside quotes.
    inside = np.bitwise_xor.accumulate(quote.view(np.uint8)).view(np.bool_)
    if in_quote:
        inside = ~inside
    # A line ending right after another (neither is a quote, so both are outside or inside).
    follows = np.empty(where.size, dtype=np.bool_)
    follows[0] = at_start and where[0] == 0
    np.equal(where[1:], where[:-1] + 1, out=follows[1:])
    follows[1:] &= ~quote[:-1]
    ends = np.count_nonzero(~(quote | inside | follows))
    quoted_breaks = np.count_nonzero(inside & ~quote)
    still_in_quote = bool(inside[-1])
    line_just_ended = where[-1] == chunk.size - 1 and not quote[-1] and not still_in_quote
    return int(ends), int(quoted_breaks), still_in_quote, bool(line_just_ended)


def count_csv_records(path: Path, delimiter: str) -> int:
    """The non-blank records of a UTF-8 file as Python's csv module reads them, header included.

    A second independent count, for a file where `count_records` and DuckDB disagree: the
    byte scan takes every quote for a quoted field's, while to both readers a quote inside an
    unquoted cell (`5" screen`) is text. A Python pass over the file, so only run then.
    """
    csv.field_size_limit(MAX_CELL_BYTES)
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        return sum(1 for row in csv.reader(handle, delimiter=delimiter) if row)
