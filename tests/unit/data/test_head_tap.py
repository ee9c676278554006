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


class _Download(io.RawIOBase):
    """A stream whose bytes after `ready` have not arrived yet: reading past them fails."""

    def __init__(self, data: bytes, ready: int) -> None:
        self.data, self.ready, self.at = data, ready, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        end = len(self.data) if size < 0 else self.at + size
        if end > self.ready:
            raise AssertionError("waited for bytes that have not arrived")
        chunk = self.data[self.at : end]
        self.at += len(chunk)
        return chunk


def test_a_reader_asking_for_large_chunks_waits_for_no_byte_past_the_head() -> None:
    # The store asks for chunks far larger than the head; a download that has only just
    # passed the head is not waited for, and the head is known after the first read.
    tap = HeadTap(_Download(b"y" * (10 * LIMIT), ready=LIMIT + 1), LIMIT)  # type: ignore[arg-type]

    assert tap.read(8 * LIMIT) == b"y" * (LIMIT + 1)
    assert tap.head() == (b"y" * LIMIT, LIMIT + 1)


def test_reading_nothing_does_not_end_the_head() -> None:
    tap = HeadTap(io.BytesIO(b"z" * (2 * LIMIT)), LIMIT)

    assert tap.read(0) == b""
    assert _read_all(tap, LIMIT // 3) == b"z" * (2 * LIMIT)
    assert tap.head() == (b"z" * LIMIT, LIMIT + 1)
