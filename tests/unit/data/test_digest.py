"""`digest_and_utf8`: the sha256 of a file's bytes, and whether all of them are UTF-8.

The check runs chunk by chunk and skips the decoding of ASCII chunks, so what it can get wrong
is a character cut by a chunk boundary, or an invalid byte right after one; the chunk size is
set to a few bytes here so that generated files put boundaries everywhere.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agent.data.ingest.digest import digest_and_utf8

PIECES = [b"a", b"\n", "é".encode(), "€".encode(), "😀".encode(), b"\xff", b"\xc3", b"\x80"]


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join),
    chunk_bytes=st.integers(min_value=1, max_value=9),
)
@example(data=b"aaa" + "é".encode(), chunk_bytes=3)  # the character cut by the boundary
@example(data=b"aa\xc3", chunk_bytes=2)  # a file that ends inside a character
@example(data=b"aaaa\xffaa", chunk_bytes=4)  # an invalid byte right after a boundary
def test_digest_and_utf8_agree_with_the_whole_file_read_at_once(
    data: bytes, chunk_bytes: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "file.csv"
        path.write_bytes(data)
        digest, valid = digest_and_utf8(path, chunk_bytes=chunk_bytes)
    try:
        data.decode("utf-8")
        expected = True
    except UnicodeDecodeError:
        expected = False
    assert valid is expected
    assert digest == "sha256:" + hashlib.sha256(data).hexdigest()
