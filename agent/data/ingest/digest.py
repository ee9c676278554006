"""The digest that identifies a file's exact bytes."""

from __future__ import annotations

import codecs
import hashlib
from pathlib import Path


def digest_and_utf8(path: Path, *, chunk_bytes: int = 1 << 20) -> tuple[str, bool]:
    """`sha256:` + the hex sha256 of the file's bytes (the digest that identifies them), and
    whether every byte of the file is valid UTF-8, in one streaming pass.

    DuckDB decodes only the columns a query reads: a read of some columns of a file whose
    invalid UTF-8 is in another column succeeds as UTF-8, where a read of every column falls
    back to Windows-1252. Checking the whole file makes both read it alike."""
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    valid = True
    with path.open("rb") as handle:
        while chunk := handle.read(chunk_bytes):
            digest.update(chunk)
            if valid and not (chunk.isascii() and not decoder.getstate()[0]):
                try:  # ASCII after a complete character is valid: only the rest is decoded
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    valid = False
        if valid:
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                valid = False
    return "sha256:" + digest.hexdigest(), valid
