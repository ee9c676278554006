"""Blob stores: content-addressed bytes on a local disk or in S3, hashed while they stream.

A blob's key is its digest (`sha256:<hex>`), so a byte-identical re-upload is the same blob.
Writes are atomic: a local blob appears under its name only once complete (temporary file, then
rename; synced to disk, with its folder, before `put` returns, and never put in place of a blob
already stored with those bytes, which may be recorded already); an S3 blob
(`storage.s3_blobs`) is spooled to a local temporary file while it is hashed, then uploaded
straight to its final key (S3 shows an object only once it is complete).

A store that fails raises `StorageError` in words ("the file store could not be reached while
storing the file …; nothing was lost") with a reference to one log line holding the details
(the error, bucket and key; no credentials); `StorageUnavailableError` when the failure is
transient and outlasted the retries; a blob that is not there, `InputChangedError`.
Nothing of botocore (endpoint URLs, buckets, keys) reaches a person: what a store raises may be
read by the model as a tool's error and repeated in a thread.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from agent.errors import ConfigurationError, FileTooLargeError, InputChangedError, StorageError
from agent.ports import BlobStore, StoredBlob

if TYPE_CHECKING:  # imported on first use (see __getattr__): boto3 only for an S3 store
    from storage.s3_blobs import S3BlobStore

__all__ = ["LocalBlobStore", "S3BlobStore", "open_blob_store"]

logger = logging.getLogger(__name__)

CHUNK = 1 << 20

STORING, READING, CHECKING = "storing the file", "reading a stored file", "checking a stored file"
_SECRETS = (
    (re.compile(r"(?i)(x-amz-(?:signature|credential|security-token)=)[^&\s\"']+"), r"\1***"),
    (re.compile(r"//[^/@\s\"']+@"), "//***@"),
)


def _reference() -> str:
    return uuid.uuid4().hex[:8]


def _redacted(text: str) -> str:
    """An error's text for the log: a presigned signature or a URL's user:password removed."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def _disk_failure(doing: str, error: OSError) -> StorageError:
    ref = _reference()
    logger.warning("ref=%s doing=%s | blob store (disk) failed: %r", ref, doing, error)
    why = error.strerror or type(error).__name__
    return StorageError(
        f"The file store failed while {doing} ({why.lower()}; reference {ref}); nothing that "
        "was saved is lost. Ask whoever runs the bot to look up the reference in its log."
    )


class _HashingReader:
    """Wraps a binary stream: hashes and counts what is read, and enforces a size limit."""

    def __init__(self, stream: BinaryIO, max_bytes: int | None) -> None:
        self._stream = stream
        self._max = max_bytes
        self.hash = hashlib.sha256()
        self.size = 0

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self.hash.update(data)
        self.size += len(data)
        if self._max is not None and self.size > self._max:
            raise FileTooLargeError(
                f"the file is over the upload limit of {self._max // (1 << 20)} MB",
                file_name="upload",
            )
        return data

    @property
    def digest(self) -> str:
        return "sha256:" + self.hash.hexdigest()


def _hex(digest: str) -> str:
    if not digest.startswith("sha256:") or len(digest) != 71:
        raise ValueError(f"not a blob digest: {digest!r}")
    return digest.removeprefix("sha256:")


class LocalBlobStore:
    """Blobs in a local folder: `<root>/ab/<hex>`, written atomically."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, digest: str) -> Path:
        hex_digest = _hex(digest)
        return self.root / hex_digest[:2] / hex_digest

    def put(
        self,
        stream: BinaryIO,
        *,
        max_bytes: int | None = None,
        on_readable: Callable[[StoredBlob], None] | None = None,
    ) -> StoredBlob:
        """Store the bytes of `stream`; the digest is computed in the same pass.

        The complete file takes its name before it is synced, and `on_readable` hears it
        then: the sync (about 0.35 s for each 140 MB benchmark file on this project's
        machines, the disk's time, not the cores') runs beside the work that reads it. A file
        already under the name with these bytes stays (it may be recorded already: it is only
        synced again); one with other bytes (left by a crash before its sync) is replaced by
        this copy, synced first. A sync that fails takes back the name this put gave.
        """
        incoming = self.root / "incoming"
        incoming.mkdir(parents=True, exist_ok=True)
        reader = _HashingReader(stream, max_bytes)
        try:
            fd, tmp_name = tempfile.mkstemp(dir=incoming)
        except OSError as error:
            raise _disk_failure(STORING, error) from None
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := reader.read(CHUNK):
                    out.write(chunk)
                out.flush()
                blob = StoredBlob(reader.digest, reader.size)
                final = self._path(blob.digest)
                final.parent.mkdir(parents=True, exist_ok=True)
                named = _take_name(Path(tmp_name), final, blob, out.fileno())
                try:
                    tell_readable(on_readable, blob)
                    if named:
                        os.fsync(out.fileno())
                    else:
                        _sync(final)  # a put of the same bytes may still be syncing it
                    _sync(final.parent)  # the blob's name
                    _sync(self.root)  # its folder's name, when the folder is new
                except BaseException:
                    if named:
                        _give_back_name(final, out.fileno())
                    raise
        except BaseException as error:
            if isinstance(error, OSError):
                raise _disk_failure(STORING, error) from None
            raise
        finally:
            Path(tmp_name).unlink(missing_ok=True)
        return blob

    @contextmanager
    def local_copy(self, digest: str) -> Iterator[Path]:
        """The stored file itself (no copy is needed on a local disk)."""
        path = self._path(digest)
        if not path.exists():
            raise InputChangedError(f"the stored file {digest[:19]}… is missing")
        yield path

    def exists(self, digest: str) -> bool:
        """Whether the blob is stored."""
        return self._path(digest).exists()


def tell_readable(on_readable: Callable[[StoredBlob], None] | None, blob: StoredBlob) -> None:
    """Tell `on_readable` (if any) that `blob` reads back. What it raises is logged, never
    raised: the store goes on storing (a reader that failed to start loses nothing)."""
    if on_readable is None:
        return
    try:
        on_readable(blob)
    except Exception as error:
        logger.warning("error=<%s> | on_readable failed; the blob is stored", type(error).__name__)


def _take_name(written: Path, final: Path, blob: StoredBlob, fd: int) -> bool:
    """Give the complete file at `written` (open as `fd`) the blob's name `final`, unless a
    file with the blob's bytes has it already. Returns whether this file took the name."""
    try:
        os.link(written, final)  # only where no file has the name: never in another's place
        return True
    except FileExistsError:
        if _holds(final, blob):
            return False
    except OSError:  # a file system without hard links
        if _holds(final, blob):
            return False
    # Other bytes under the name (a crash before their sync), or no hard links: these bytes
    # are synced before they take it, so the name never holds less than a complete blob.
    os.fsync(fd)
    os.replace(written, final)
    return True


def _give_back_name(final: Path, fd: int) -> None:
    """Remove `final` if it is still the file open as `fd` (its sync failed: a later put of
    the bytes stores them again instead of trusting what the page cache still shows)."""
    try:
        if final.stat().st_ino == os.fstat(fd).st_ino:
            final.unlink()
    except OSError:
        logger.warning("blob=<%s> | a blob whose sync failed kept its name", final.name[:12])


def _holds(path: Path, blob: StoredBlob) -> bool:
    """Whether the file at `path` holds exactly the blob's bytes (their size, then their
    digest): a file left under a blob's name by a crash before its sync does not."""
    try:
        if path.stat().st_size != blob.size:
            return False
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    except FileNotFoundError:
        return False
    return "sha256:" + digest.hexdigest() == blob.digest


def _sync(path: Path) -> None:
    """Sync a file or a folder (its names) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_blob_store(url: str, *, s3_endpoint_url: str | None = None) -> BlobStore:
    """The blob store a URL names: `file://var/blobs` (relative or absolute) or `s3://bucket/prefix`."""
    if url.startswith("file://"):
        return LocalBlobStore(Path(url.removeprefix("file://")))
    if url.startswith("s3://"):
        from storage.s3_blobs import S3BlobStore, s3_client

        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        if not bucket:
            raise ConfigurationError("RECONBOT_BLOB_URL s3://… needs a bucket: s3://bucket/prefix")
        return S3BlobStore(s3_client(s3_endpoint_url), bucket, prefix)
    raise ConfigurationError(
        f"RECONBOT_BLOB_URL must start with file:// or s3://, not {url.split(':')[0]!r}"
    )


def __getattr__(name: str) -> Any:
    """`S3BlobStore`, from `storage.s3_blobs` (which imports this module's helpers)."""
    if name == "S3BlobStore":
        from storage.s3_blobs import S3BlobStore

        return S3BlobStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
