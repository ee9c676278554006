"""Blob stores: content-addressed bytes on a local disk or in S3, hashed while they stream.

A blob's key is its digest (`sha256:<hex>`), so a byte-identical re-upload is the same blob.
Writes are atomic: a local blob appears under its name only once complete (temporary file, then
rename); an S3 blob is uploaded under a temporary key and copied to its final key.

A store that fails raises `StorageError` in words ("the file store could not be reached while
storing the file …; nothing was lost") with a reference to one log line holding the details
(the error, bucket and key; no credentials); a blob that is not there, `InputChangedError`.
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
from typing import Any, BinaryIO, TypeVar

from boto3.exceptions import Boto3Error
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from agent.errors import ConfigurationError, FileTooLargeError, InputChangedError, StorageError
from agent.ports import BlobStore, StoredBlob

logger = logging.getLogger(__name__)

CHUNK = 1 << 20
T = TypeVar("T")

STORING, READING, CHECKING = "storing the file", "reading a stored file", "checking a stored file"
_AWS_ERRORS = (BotoCoreError, ClientError, Boto3Error)
_MISSING = frozenset({"404", "NoSuchKey", "NotFound"})
_BUSY = frozenset(
    {"503", "500", "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout"}
)
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


def _code(error: BaseException) -> str:
    """The S3 error code behind `error` (boto3's upload errors wrap the ClientError), or ""."""
    seen: BaseException | None = error
    for _ in range(5):
        if isinstance(seen, ClientError):
            return str(seen.response.get("Error", {}).get("Code", ""))
        if seen is None:
            break
        seen = seen.__cause__ or seen.__context__
    return ""


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

    def put(self, stream: BinaryIO, *, max_bytes: int | None = None) -> StoredBlob:
        """Store the bytes of `stream`; the digest is computed in the same pass."""
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
                os.fsync(out.fileno())
            final = self._path(reader.digest)
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp_name, final)
        except BaseException as error:
            Path(tmp_name).unlink(missing_ok=True)
            if isinstance(error, OSError):
                raise _disk_failure(STORING, error) from None
            raise
        return StoredBlob(reader.digest, reader.size)

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


class S3BlobStore:
    """Blobs in an S3 bucket under `<prefix>/sha256/<hex>`, through boto3."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self._s3 = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def _failure(self, doing: str, key: str, error: BaseException) -> StorageError:
        """`error` in words for a person; the details, in the log under a reference."""
        ref = _reference()
        code = _code(error)
        logger.warning(
            "ref=%s doing=%s bucket=%s key=%s error=%s code=%s | blob store (S3) failed: %s",
            ref,
            doing,
            self.bucket,
            key,
            type(error).__name__,
            code or "-",
            _redacted(str(error)),
        )
        if isinstance(error, NoCredentialsError) or (code and code not in _BUSY):
            why = code or "the bot has no AWS credentials"
            return StorageError(
                f"The file store refused a request while {doing} ({why}; reference {ref}); "
                "nothing that was saved is lost. Ask whoever runs the bot to check its file "
                "store settings (RECONBOT_BLOB_URL, the AWS credentials) and to look up the "
                "reference in its log."
            )
        return StorageError(
            f"The file store could not be reached while {doing} (reference {ref}); nothing "
            "that was saved is lost. Try again in a minute; if it keeps failing, ask whoever "
            "runs the bot to look up the reference in its log."
        )

    def _call(self, doing: str, key: str, call: Callable[[], T]) -> T:
        """One S3 call; what botocore raises leaves as a `StorageError` in words."""
        try:
            return call()
        except _AWS_ERRORS as error:
            raise self._failure(doing, key, error) from None

    def put(self, stream: BinaryIO, *, max_bytes: int | None = None) -> StoredBlob:
        """Upload the bytes of `stream` (multipart, streaming), hashing them on the way."""
        reader = _HashingReader(stream, max_bytes)
        temporary = self._key(f"incoming/{uuid.uuid4().hex}")
        self._call(
            STORING, temporary, lambda: self._s3.upload_fileobj(reader, self.bucket, temporary)
        )
        try:
            final = self._key(f"sha256/{_hex(reader.digest)}")
            self._call(
                STORING,
                final,
                lambda: self._s3.copy_object(
                    Bucket=self.bucket,
                    Key=final,
                    CopySource={"Bucket": self.bucket, "Key": temporary},
                ),
            )
        finally:
            try:
                self._s3.delete_object(Bucket=self.bucket, Key=temporary)
            except _AWS_ERRORS as error:
                # The blob (if copied) is whole under its final key; only a temporary is left.
                self._failure("removing a temporary upload", temporary, error)
        return StoredBlob(reader.digest, reader.size)

    def _download(self, digest: str, path: Path) -> str:
        """Write the blob to `path`; return the digest of the bytes read."""
        key = self._key(f"sha256/{_hex(digest)}")
        hasher = hashlib.sha256()
        try:
            body = self._s3.get_object(Bucket=self.bucket, Key=key)
            with path.open("wb") as out:
                for chunk in body["Body"].iter_chunks(CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
        except _AWS_ERRORS as error:
            if _code(error) in _MISSING:
                raise InputChangedError(f"the stored file {digest[:19]}… is missing") from None
            raise self._failure(READING, key, error) from None
        return "sha256:" + hasher.hexdigest()

    @contextmanager
    def local_copy(self, digest: str) -> Iterator[Path]:
        """Download the blob to a temporary file, checking its digest on the way."""
        with tempfile.TemporaryDirectory(prefix="reconbot-blob-") as folder:
            path = Path(folder) / _hex(digest)
            if self._download(digest, path) != digest:
                raise InputChangedError(f"the stored file {digest[:19]}… changed in S3")
            yield path

    def exists(self, digest: str) -> bool:
        """Whether the blob is stored."""
        key = self._key(f"sha256/{_hex(digest)}")
        try:
            self._s3.head_object(Bucket=self.bucket, Key=key)
        except _AWS_ERRORS as error:
            if _code(error) in _MISSING:
                return False
            raise self._failure(CHECKING, key, error) from None
        return True


def open_blob_store(url: str, *, s3_endpoint_url: str | None = None) -> BlobStore:
    """The blob store a URL names: `file://var/blobs` (relative or absolute) or `s3://bucket/prefix`."""
    if url.startswith("file://"):
        return LocalBlobStore(Path(url.removeprefix("file://")))
    if url.startswith("s3://"):
        import boto3

        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        if not bucket:
            raise ConfigurationError("RECONBOT_BLOB_URL s3://… needs a bucket: s3://bucket/prefix")
        from botocore.config import Config

        # A store that is down must not hold a worker for minutes (botocore's defaults: a 60 s
        # connect timeout, five attempts): fail fast, and say so in words.
        config = Config(connect_timeout=5, read_timeout=60, retries={"max_attempts": 3})
        client = boto3.client("s3", endpoint_url=s3_endpoint_url, config=config)
        return S3BlobStore(client, bucket, prefix)
    raise ConfigurationError(
        f"RECONBOT_BLOB_URL must start with file:// or s3://, not {url.split(':')[0]!r}"
    )
