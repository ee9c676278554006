"""UTF-8 with its stray bytes read as Windows-1252: an export written in UTF-8 that another
program added a byte or two to (`café` typed in Excel into a UTF-8 file).

Reading the whole file as Windows-1252 would garble every UTF-8 letter (`MÜ-1002` as
`MÃœ-1002`) and with it the ids the files are matched on; this reads the UTF-8 as UTF-8 and
only the bytes that are not as Windows-1252. A Python codec, so every reader of a file (the
sniffing, the transcoding for DuckDB, the diagnosis) reads it alike.
"""

from __future__ import annotations

import codecs
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the bytes-like type (collections.abc has it from Python 3.12)
    from typing_extensions import Buffer

CODEC = "reconbot_utf8_cp1252"
_HANDLER = "reconbot_cp1252_bytes"
_lock = threading.Lock()
_registered = False


def mixed_codec() -> str:
    """The name of the codec (registered with Python on first use), for `open(encoding=...)`."""
    global _registered
    with _lock:
        if not _registered:
            codecs.register_error(_HANDLER, _as_cp1252)
            codecs.register(_search)
            _registered = True
    return CODEC


def _as_cp1252(error: UnicodeError) -> tuple[str, int]:
    """The bytes UTF-8 could not read, read as Windows-1252 (its five unused bytes as U+FFFD)."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = bytes(error.object[error.start : error.end])
    return bad.decode("cp1252", errors="replace"), error.end


def _decode(data: Buffer, errors: str = "strict", /) -> tuple[str, int]:
    return codecs.utf_8_decode(data, _HANDLER, True)


class _IncrementalDecoder(codecs.BufferedIncrementalDecoder):
    def _buffer_decode(self, data: Buffer, errors: str, final: bool, /) -> tuple[str, int]:
        return codecs.utf_8_decode(data, _HANDLER, final)


class _StreamReader(codecs.StreamReader):
    def decode(self, data: Buffer, errors: str = "strict", /) -> tuple[str, int]:
        return codecs.utf_8_decode(data, _HANDLER, False)


def _search(name: str) -> codecs.CodecInfo | None:
    if name != CODEC:
        return None
    return codecs.CodecInfo(
        name=CODEC,
        encode=codecs.utf_8_encode,
        decode=_decode,
        incrementalencoder=codecs.getincrementalencoder("utf-8"),
        incrementaldecoder=_IncrementalDecoder,
        streamreader=_StreamReader,
        streamwriter=codecs.getwriter("utf-8"),
    )
