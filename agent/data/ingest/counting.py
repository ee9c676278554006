"""The ledger's independent count of a file's records, by a scan of its bytes."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from pathlib import Path

_BLANK_LINE = re.compile(rb"\n(?=\n)")


def count_records(path: Path, progress: Callable[[int, int], None] | None = None) -> int:
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
    consumed = 0
    with path.open("rb") as handle:
        if handle.read(3) != codecs.BOM_UTF8:
            handle.seek(0)
        while chunk := handle.read(1 << 22):
            consumed += len(chunk)
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
            if progress is not None:
                progress(records, consumed)
    return records + (0 if at_start else 1)
