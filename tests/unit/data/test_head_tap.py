"""A file's head seen while it is stored: the bytes pass through unchanged, and the head and the
size it gives `inspect_head` decide exactly what inspecting the whole stored file decides."""

from __future__ import annotations

import io
import threading

from hypothesis import given
from hypothesis import strategies as st

from agent.data.ingest.head_tap import HeadTap

LIMIT = 64


def _read_all(tap: HeadTap, size: int) -> bytes:
    out = bytearray()
    while chunk := tap.read(size):
        out += chunk
    tap.finish()
    return bytes(out)


@given(data=st.binary(max_size=3 * LIMIT), size=st.integers(min_value=1, max_value=2 * LIMIT))
def test_the_store_reads_every_byte_and_the_head_is_the_files_first_bytes(
    data: bytes, size: int
) -> None:
    tap = HeadTap(io.BytesIO(data), LIMIT)

    assert _read_all(tap, size) == data
    seen = tap.head()
    assert seen is not None
    head, told = seen
    assert head == data[:LIMIT]
    # What inspect_head decides from the size: whether the head is the whole file.
    assert (len(head) == told) == (len(data) <= LIMIT)


def test_the_head_is_known_as_soon_as_the_store_has_read_past_it() -> None:
    tap = HeadTap(io.BytesIO(b"x" * (10 * LIMIT)), LIMIT)
    tap.read(LIMIT + 1)  # the store is still reading the rest

    assert tap.head() == (b"x" * LIMIT, LIMIT + 1)


def test_a_head_the_store_stopped_before_is_none_and_never_waits() -> None:
    tap = HeadTap(io.BytesIO(b"x" * (10 * LIMIT)), LIMIT)
    tap.read(LIMIT // 2)
    waiting: list[object] = []
    reader = threading.Thread(target=lambda: waiting.append(tap.head()))
    reader.start()
    tap.finish()  # the store failed
    reader.join(timeout=5)

    assert not reader.is_alive()
    assert waiting == [None]
