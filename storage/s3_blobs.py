"""The S3 blob store: content-addressed blobs in a bucket, uploaded whole to their final key.

A blob is spooled to a local temporary file while it is hashed and size-checked, then uploaded
straight to `<prefix>/sha256/<hex>` (multipart when large), never under a temporary key copied
into place: with moto's S3 and some S3-compatible stores, a multipart object copied with
`copy_object` fails checksum validation when read back.

Failures are sorted for the job queue: a transient one (a refused or dropped connection, a
timeout, a 5xx, a throttle) is retried by botocore per request and by the store per operation,
and one that persists raises `StorageUnavailableError` (retry the work later); a refusal
(access denied, no such bucket, no credentials) raises a plain `StorageError`. Either says what
failed in words, with a reference to the log line holding the details (see `storage.blobs`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import boto3
from boto3.exceptions import Boto3Error
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError, NoCredentialsError
from botocore.exceptions import ConnectionError as BotoConnectionError

from agent.errors import InputChangedError, StorageError, StorageUnavailableError
from agent.ports import StoredBlob
from storage.blobs import (
    CHECKING,
    CHUNK,
    READING,
    STORING,
    _disk_failure,
    _HashingReader,
    _hex,
    _redacted,
    _reference,
    tell_readable,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_WAITS = (0.5, 1.0)  # seconds between the tries of a whole put or download: 3 tries
_AWS_ERRORS = (BotoCoreError, ClientError, Boto3Error)
_MISSING = frozenset({"404", "NoSuchKey", "NotFound"})
_FORBIDDEN = frozenset({"403", "AccessDenied", "Forbidden"})
# What botocore's standard retry mode treats as transient or throttling (and 5xx, 429 below).
_BUSY = frozenset(
    {"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "OperationAborted"}
    | {"Throttling", "ThrottlingException", "RequestThrottled", "TooManyRequestsException"}
    | {"RequestLimitExceeded", "BandwidthLimitExceeded", "PriorRequestNotComplete"}
)
_TRANSIENT_ERRORS = (BotoConnectionError, HTTPClientError)  # refused, dropped, timed out


def _causes(error: BaseException) -> Iterator[BaseException]:
    """`error` and what it wraps (boto3's upload errors wrap the ClientError), nearest first."""
    seen: BaseException | None = error
    for _ in range(5):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__


def _code(error: BaseException) -> str:
    """The S3 error code behind `error`, or ""."""
    for seen in _causes(error):
        if isinstance(seen, ClientError):
            return str(seen.response.get("Error", {}).get("Code", ""))
    return ""


def _transient(error: BaseException) -> bool:
    """Whether `error` may pass by itself: no connection, a timeout, a 5xx or a throttle."""
    for seen in _causes(error):
        if isinstance(seen, _TRANSIENT_ERRORS):
            return True
        if isinstance(seen, ClientError):
            status = seen.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
            return _code(seen) in _BUSY or status >= 500 or status == 429
    return False


class S3BlobStore:
    """Blobs in an S3 bucket under `<prefix>/sha256/<hex>`, through boto3.

    A transient failure (a refused or dropped connection, a timeout, a 5xx, a throttle) is
    retried by botocore per request (the client's `Config`, see `s3_client`), then the
    whole operation again after each wait of `retry_waits`; one that persists raises
    `StorageUnavailableError`, so that the job that met it can be retried later. A refusal
    (access denied, no such bucket, no credentials) raises a plain `StorageError` at once.
    """

    def __init__(
        self,
        client: Any,
        bucket: str,
        prefix: str = "",
        *,
        spool_dir: Path | None = None,
        retry_waits: Sequence[float] = RETRY_WAITS,
        sleep: Callable[[float], None] = time.sleep,
        transfer: TransferConfig | None = None,
    ) -> None:
        self._s3 = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self._spool_dir = spool_dir
        self._waits = tuple(retry_waits)
        self._sleep = sleep
        self._transfer = transfer or TransferConfig(
            multipart_threshold=8 * CHUNK, multipart_chunksize=8 * CHUNK, max_concurrency=4
        )

    def _key(self, digest: str) -> str:
        name = f"sha256/{_hex(digest)}"
        return f"{self.prefix}/{name}" if self.prefix else name

    def _failure(self, doing: str, key: str, error: BaseException, tries: int) -> StorageError:
        """`error` in words for a person; the details, in the log under a reference."""
        ref = _reference()
        code = _code(error)
        logger.warning(
            "ref=%s doing=%s bucket=%s key=%s error=%s code=%s tries=%d | "
            "blob store (S3) failed: %s",
            ref,
            doing,
            self.bucket,
            key,
            type(error).__name__,
            code or "-",
            tries,
            _redacted(str(error)),
        )
        if _transient(error):
            return StorageUnavailableError(
                f"The file store could not be reached while {doing} (reference {ref}); nothing "
                "that was saved is lost. Try again in a minute; if it keeps failing, ask whoever "
                "runs the bot to look up the reference in its log."
            )
        if isinstance(error, NoCredentialsError) or code:
            why = code or "the bot has no AWS credentials"
            return StorageError(
                f"The file store refused a request while {doing} ({why}; reference {ref}); "
                "nothing that was saved is lost. Ask whoever runs the bot to check its file "
                "store settings (RECONBOT_BLOB_URL, the AWS credentials) and to look up the "
                "reference in its log."
            )
        return StorageError(
            f"The file store failed while {doing} (reference {ref}); nothing that was saved is "
            "lost. Ask whoever runs the bot to look up the reference in its log."
        )

    def _retrying(self, doing: str, key: str, call: Callable[[], T]) -> T:
        """`call`, tried again after each wait of `retry_waits` while it fails transiently.

        What botocore raises leaves as a `StorageError` in words; anything else (a missing
        blob, a file over the limit) passes through untouched and is not retried.
        """
        tries = 0
        while True:
            try:
                return call()
            except _AWS_ERRORS as error:
                if tries >= len(self._waits) or not _transient(error):
                    raise self._failure(doing, key, error, tries + 1) from None
                wait = self._waits[tries]
                logger.warning(
                    "doing=%s bucket=%s key=%s error=%s code=%s try=%d | blob store (S3) "
                    "failed transiently, trying again in %.1f s: %s",
                    doing,
                    self.bucket,
                    key,
                    type(error).__name__,
                    _code(error) or "-",
                    tries + 1,
                    wait,
                    _redacted(str(error)),
                )
            tries += 1
            self._sleep(wait)

    def put(
        self,
        stream: BinaryIO,
        *,
        max_bytes: int | None = None,
        on_readable: Callable[[StoredBlob], None] | None = None,
    ) -> StoredBlob:
        """Store the bytes of `stream` under their digest, hashed and size-checked in one pass.

        The stream is spooled to a local temporary file first (so that a retry can send it
        again, and a file over `max_bytes` never reaches the bucket), then uploaded straight to
        its final key, in parts when large. No temporary key and no server-side copy: a copy of
        a multipart object fails checksum validation when read back from some S3-compatible
        stores (moto among them). A blob that is already there is not sent again.
        `local_copy` reads a blob from the bucket, so `on_readable` hears it once it is there.
        """
        reader = _HashingReader(stream, max_bytes)
        try:
            fd, name = tempfile.mkstemp(prefix="reconbot-upload-", dir=self._spool_dir)
        except OSError as error:
            raise _disk_failure(STORING, error) from None
        spooled = Path(name)
        try:
            try:
                with os.fdopen(fd, "wb") as out:
                    while chunk := reader.read(CHUNK):
                        out.write(chunk)
            except OSError as error:
                raise _disk_failure(STORING, error) from None
            key = self._key(reader.digest)
            self._retrying(STORING, key, lambda: self._upload(spooled, key, reader))
        finally:
            spooled.unlink(missing_ok=True)
        blob = StoredBlob(reader.digest, reader.size)
        tell_readable(on_readable, blob)
        return blob

    def _upload(self, path: Path, key: str, spooled: _HashingReader) -> None:
        """Send `path` to `key`, unless the key already holds these bytes."""
        hex_digest = _hex(spooled.digest)
        try:
            head = self._s3.head_object(Bucket=self.bucket, Key=key)
        except ClientError as error:
            # Missing, or 403: without s3:ListBucket, S3 answers a HEAD of a missing key so.
            if _code(error) not in _MISSING | _FORBIDDEN:
                raise
        else:
            same_size = head.get("ContentLength") == spooled.size
            if same_size and head.get("Metadata", {}).get("sha256") == hex_digest:
                return
        self._s3.upload_file(
            str(path),
            self.bucket,
            key,
            ExtraArgs={"Metadata": {"sha256": hex_digest}},
            Config=self._transfer,
        )

    def _download(self, digest: str, path: Path) -> str:
        """Write the blob to `path` (again from the start on a retry); return its digest."""
        key = self._key(digest)

        def attempt() -> str:
            try:
                response = self._s3.get_object(Bucket=self.bucket, Key=key)
            except ClientError as error:
                if _code(error) in _MISSING:
                    raise InputChangedError(f"the stored file {digest[:19]}… is missing") from None
                raise
            hasher = hashlib.sha256()
            with path.open("wb") as out:
                for chunk in response["Body"].iter_chunks(CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
            return "sha256:" + hasher.hexdigest()

        return self._retrying(READING, key, attempt)

    @contextmanager
    def local_copy(self, digest: str) -> Iterator[Path]:
        """Download the blob to a temporary file, checking its digest on the way."""
        with tempfile.TemporaryDirectory(prefix="reconbot-blob-", dir=self._spool_dir) as folder:
            path = Path(folder) / _hex(digest)
            if self._download(digest, path) != digest:
                raise InputChangedError(f"the stored file {digest[:19]}… changed in S3")
            yield path

    def exists(self, digest: str) -> bool:
        """Whether the blob is stored."""
        key = self._key(digest)

        def attempt() -> bool:
            try:
                self._s3.head_object(Bucket=self.bucket, Key=key)
            except ClientError as error:
                if _code(error) in _MISSING:
                    return False
                raise
            return True

        return self._retrying(CHECKING, key, attempt)


def s3_client(endpoint_url: str | None = None) -> Any:
    """A boto3 S3 client with timeouts and retries fit for a worker that must not hang.

    botocore retries each request (each part of an upload) on a blip, in standard mode: a short
    backoff, a longer one on a throttle; `S3BlobStore` then retries the whole operation. A store
    that is down must not hold a worker for minutes (botocore's default connect timeout is
    60 s): a refused connection fails in about 2 s, a black-holed one after 3 tries x 3
    attempts x 5 s.
    """
    config = Config(
        connect_timeout=5,
        read_timeout=30,
        retries={"mode": "standard", "total_max_attempts": 3},
    )
    return boto3.client("s3", endpoint_url=endpoint_url, config=config)
