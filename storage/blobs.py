"""Blob stores: content-addressed bytes on a local disk or in S3, hashed while they stream.

A blob's key is its digest (`sha256:<hex>`), so a byte-identical re-upload is the same blob.
Writes are atomic: a local blob appears under its name only once complete (temporary file, then
rename); an S3 blob is uploaded under a temporary key and copied to its final key.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from agent.errors import ConfigurationError, FileTooLargeError, InputChangedError
from agent.ports import BlobStore, StoredBlob

logger = logging.getLogger(__name__)

CHUNK = 1 << 20


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
        fd, tmp_name = tempfile.mkstemp(dir=incoming)
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := reader.read(CHUNK):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            final = self._path(reader.digest)
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp_name, final)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
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

    def put(self, stream: BinaryIO, *, max_bytes: int | None = None) -> StoredBlob:
        """Upload the bytes of `stream` (multipart, streaming), hashing them on the way."""
        reader = _HashingReader(stream, max_bytes)
        temporary = self._key(f"incoming/{uuid.uuid4().hex}")
        self._s3.upload_fileobj(reader, self.bucket, temporary)
        try:
            final = self._key(f"sha256/{_hex(reader.digest)}")
            self._s3.copy_object(
                Bucket=self.bucket,
                Key=final,
                CopySource={"Bucket": self.bucket, "Key": temporary},
            )
        finally:
            self._s3.delete_object(Bucket=self.bucket, Key=temporary)
        return StoredBlob(reader.digest, reader.size)

    @contextmanager
    def local_copy(self, digest: str) -> Iterator[Path]:
        """Download the blob to a temporary file, checking its digest on the way."""
        with tempfile.TemporaryDirectory(prefix="reconbot-blob-") as folder:
            path = Path(folder) / _hex(digest)
            hasher = hashlib.sha256()
            body = self._s3.get_object(Bucket=self.bucket, Key=self._key(f"sha256/{_hex(digest)}"))
            with path.open("wb") as out:
                for chunk in body["Body"].iter_chunks(CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
            if "sha256:" + hasher.hexdigest() != digest:
                raise InputChangedError(f"the stored file {digest[:19]}… changed in S3")
            yield path

    def exists(self, digest: str) -> bool:
        """Whether the blob is stored."""
        try:
            self._s3.head_object(Bucket=self.bucket, Key=self._key(f"sha256/{_hex(digest)}"))
        except self._s3.exceptions.ClientError:
            return False
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
        client = boto3.client("s3", endpoint_url=s3_endpoint_url)
        return S3BlobStore(client, bucket, prefix)
    raise ConfigurationError(
        f"RECONBOT_BLOB_URL must start with file:// or s3://, not {url.split(':')[0]!r}"
    )
