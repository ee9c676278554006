"""A file's head, seen while the file is still being stored.

An upload is stored (hashed, written and synced, or downloaded from Slack) before anything is
recorded about it; inspecting it needs only its first `HEAD_BYTES`. A `HeadTap` stands between
the upload and the blob store and keeps those first bytes as the store reads them, so that the
inspection and the inference of a mapping (Python work on one core) run while the store waits on
the disk or the network, instead of after it.
"""

from __future__ import annotations

import threading
from typing import BinaryIO

from agent.data.ingest.detect import HEAD_BYTES


class HeadTap:
    """A binary stream read through (`read`), keeping its first `limit` bytes for `head()`.

    The reader (the blob store) calls `read` until it returns no bytes, then `finish`, also when
    it fails; `head()` waits for the first `limit` bytes, the end of the stream or `finish`,
    whichever comes first.
    """

    def __init__(self, stream: BinaryIO, limit: int = HEAD_BYTES) -> None:
        self._stream = stream
        self._limit = limit
        self._head = bytearray()
        self._more = False  # the stream holds more than `limit` bytes
        self._ended = False  # the stream ended before `limit` bytes were past
        self._known = threading.Event()

    def read(self, size: int = -1) -> bytes:
        """Read from the stream, as the stream's own `read` does, but while the head is not
        known no further than one byte past it: the head is there as soon as its own bytes are,
        however large a chunk the reader asks for (a download is not waited for beyond it)."""
        if size == 0:
            return b""  # asks for nothing: says nothing about where the stream ends
        if not self._known.is_set():
            room = self._limit - len(self._head)
            chunk = self._stream.read(size if size < 0 else min(size, room + 1))
            self._head += chunk[:room]
            if len(chunk) > room:
                self._more = True
                self._known.set()
            elif not chunk:
                self._ended = True
                self._known.set()
            return chunk
        return self._stream.read(size)

    def finish(self) -> None:
        """The reader stopped: `head()` returns what is known instead of waiting for more."""
        self._known.set()

    def head(self) -> tuple[bytes, int] | None:
        """The stream's first `limit` bytes and, for `inspect_head`, a size that says whether
        they are the whole stream (their length) or not (one byte more than `limit`).

        None when the reader stopped before either was known (it failed: its error is the one
        to report)."""
        self._known.wait()
        if self._more:
            return bytes(self._head), self._limit + 1
        if self._ended:
            return bytes(self._head), len(self._head)
        return None
