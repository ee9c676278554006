"""`count_records` against a byte-by-byte reading of its rules, with chunk boundaries anywhere.

The count is vectorised chunk by chunk, so the places it can go wrong are where state crosses a
boundary: a CRLF or a `""` cut in two, a quote left open, a blank line right after one. The
chunk size is set to a few bytes here so that generated files put boundaries in all of them.
"""

from __future__ import annotations

import codecs
import math
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import example, given, note, settings
from hypothesis import strategies as st

from agent.data.ingest import counting
from agent.data.ingest.counting import count_records

BOM = codecs.BOM_UTF8
TOKENS = [b"a", b",", b'"', b"\n", b"\r", b"\r\n", b'""']
CHUNK_SIZES = [1, 2, 3, 7, 64, counting.CHUNK_BYTES]


def reference_count(data: bytes) -> int:
    """The documented rules, one byte at a time: a record ends at CR, LF or CRLF outside
    quotes, a line with nothing on it is not a record, a last record needs no line ending,
    and a leading UTF-8 BOM is not part of the file."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    records = 0
    in_quote = False
    at_line_start = True  # nothing on the current line yet
    after_cr = False
    for byte in data:
        if byte == ord('"'):
            in_quote = not in_quote
            at_line_start = after_cr = False
        elif in_quote:
            at_line_start = after_cr = False
        elif byte == ord("\n") and after_cr:
            after_cr = False  # the LF of a CRLF: the line has already ended
        elif byte in (ord("\n"), ord("\r")):
            if not at_line_start:
                records += 1
            at_line_start = True
            after_cr = byte == ord("\r")
        else:
            at_line_start = after_cr = False
    return records + (0 if at_line_start else 1)


def count_in_chunks(data: bytes, chunk: int) -> tuple[int, list[tuple[int, int]]]:
    """`count_records` of a file holding `data`, read `chunk` bytes at a time, and its progress
    reports."""
    reports: list[tuple[int, int]] = []
    with (
        tempfile.TemporaryDirectory() as scratch,
        mock.patch.object(counting, "CHUNK_BYTES", chunk),
    ):
        path = Path(scratch) / "f.csv"
        path.write_bytes(data)
        records = count_records(path, lambda records, consumed: reports.append((records, consumed)))
    return records, reports


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(
    parts=st.lists(st.sampled_from(TOKENS), max_size=40),
    bom=st.booleans(),
    chunk=st.sampled_from(CHUNK_SIZES) | st.integers(1, 16),
)
@example(parts=[b"a", b"\r", b"\n", b"\n", b"a"], bom=False, chunk=2)  # CRLF cut, then blank
@example(parts=[b'"', b"\r\n", b'"'], bom=True, chunk=5)  # CRLF inside quotes, cut
def test_count_records_follows_its_rules_at_any_chunk_size(
    parts: list[bytes], bom: bool, chunk: int
) -> None:
    data = (BOM if bom else b"") + b"".join(parts)
    note(f"file: {data!r}")
    assert count_in_chunks(data, chunk)[0] == reference_count(data)


EXAMPLES = {
    "empty file": (b"", 0),
    "only a BOM": (BOM, 0),
    "only line endings": (b"\n\r\n\r\r\n", 0),
    "no final line ending": (b"h\n1", 2),
    "blank lines at the start, middle and end": (b"\n\r\nh\n\n\r1\r\n\r\n\n", 2),
    "line endings inside quotes": (b'h\n"a\nb\r\nc\rd",2\n', 2),
    "an escaped quote and a quoted blank line": (b'h\n"say ""\n\n"" ok"\n', 2),
    "a quote left open": (b'h\n"1\n2\n', 2),
    "a BOM, then a blank line": (BOM + b"\r\na,b\r\n", 1),
    "CR-only endings": (b"h\r1\r2", 3),
}


@pytest.mark.parametrize(("data", "records"), EXAMPLES.values(), ids=EXAMPLES.keys())
@pytest.mark.parametrize("chunk", CHUNK_SIZES)
def test_count_records_examples(data: bytes, records: int, chunk: int) -> None:
    assert reference_count(data) == records
    assert count_in_chunks(data, chunk)[0] == records


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_crlf_cut_by_a_chunk_boundary_ends_one_record(cut: int) -> None:
    """With a 3-byte chunk, the CRLF after `a`, `ab` or `abc` is cut (or not) by the boundary."""
    data = b"abc"[:cut] + b"\r\n" + b"x\r\n"
    assert count_in_chunks(data, 3)[0] == 2


def test_progress_reports_records_and_bytes_after_each_chunk() -> None:
    data = BOM + b"h\r\n" + b'"a\nb"\r\n' * 5 + b"\n\nlast"
    records, reports = count_in_chunks(data, 4)
    body = len(data) - len(BOM)
    assert records == 7
    assert len(reports) == math.ceil(body / 4)
    assert [consumed for _, consumed in reports] == [
        min(body, 4 * n) for n in range(1, 1 + len(reports))
    ]
    counts = [counted for counted, _ in reports]
    assert counts == sorted(counts)
    assert counts[-1] == 6  # the last record has no line ending: it counts only at the end
