"""The S3 blob store, against moto's server on 127.0.0.1 (never the internet).

Large blobs go straight to their final key (no temporary key, no copy: a multipart object
copied with copy_object fails checksum validation when read back from moto) and read back whole.
A store that is down or busy is retried, then raises StorageUnavailableError in words; a store
that refuses raises a plain StorageError at once. The waits between tries are recorded instead
of slept, except where the production settings themselves are timed.
"""

from __future__ import annotations

import hashlib
import io
import random
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from boto3.exceptions import S3UploadFailedError
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    FlexibleChecksumError,
    NoCredentialsError,
    ReadTimeoutError,
    ResponseStreamingError,
)
from moto.server import ThreadedMotoServer

from agent.errors import FileTooLargeError, StorageError, StorageUnavailableError
from agent.ports import StoredBlob
from storage.blobs import S3BlobStore, open_blob_store
from storage.s3_blobs import RETRY_WAITS, s3_client

MIB = 1 << 20
PREFIX = "tenant-7/uploads"
SMALL = b"order_id,amount\n#1,2.00\n"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CLOSED_PORT = _closed_port()  # bound once, released: nothing listens there


@pytest.fixture(scope="module")
def aws_environment() -> Iterator[None]:
    patch = pytest.MonkeyPatch()
    patch.setenv("AWS_ACCESS_KEY_ID", "testing")
    patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    patch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    patch.delenv("AWS_PROFILE", raising=False)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def s3_endpoint(aws_environment: None) -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def client(s3_endpoint: str) -> Any:
    return boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")


@pytest.fixture
def bucket(client: Any) -> str:
    name = f"reconbot-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return name


@pytest.fixture
def spool(tmp_path: Path) -> Path:
    folder = tmp_path / "spool"
    folder.mkdir()
    return folder


@pytest.fixture
def waits() -> list[float]:
    """The waits a store asked for between its tries (recorded, not slept)."""
    return []


def _store(client: Any, bucket: str, spool: Path, waits: list[float]) -> S3BlobStore:
    return S3BlobStore(client, bucket, PREFIX, spool_dir=spool, sleep=waits.append)


def _blob(size: int) -> tuple[bytes, str]:
    data = random.Random(size).randbytes(size)
    return data, "sha256:" + hashlib.sha256(data).hexdigest()


def _final_key(digest: str) -> str:
    return f"{PREFIX}/sha256/{digest.removeprefix('sha256:')}"


def _objects(client: Any, bucket: str) -> list[str]:
    return [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]


def _unfinished_uploads(client: Any, bucket: str) -> list[str]:
    return [u["Key"] for u in client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


def _file_digest(path: Path) -> str:
    hasher = hashlib.sha256()
    with path.open("rb") as data:
        while chunk := data.read(MIB):
            hasher.update(chunk)
    return "sha256:" + hasher.hexdigest()


def _count_uploads(client: Any) -> list[str]:
    """The upload requests `client` sends from now on (a PutObject or a multipart upload)."""
    sent: list[str] = []
    for operation in ("PutObject", "CreateMultipartUpload"):
        client.meta.events.register(
            f"before-call.s3.{operation}", lambda op=operation, **_: sent.append(op)
        )
    return sent


def assert_in_words(message: str, bucket: str, *words: str) -> None:
    """Words and a reference for a person; nothing of the endpoint, bucket or key."""
    for detail in ("127.0.0.1", str(CLOSED_PORT), "http", bucket, PREFIX, "sha256/"):
        assert detail not in message, f"{detail!r} shown to a person: {message}"
    for word in ("Error", "botocore", "endpoint", "connect"):
        assert word not in message, f"{word!r} shown to a person: {message}"
    for word in (*words, "reference "):
        assert word in message, message


# -- large blobs, straight to their final key --------------------------------------------------


@pytest.mark.parametrize("size", [9 * MIB, 20 * MIB], ids=["9MiB", "20MiB"])
def test_a_large_blob_goes_straight_to_its_final_key_and_reads_back_whole(
    client: Any, bucket: str, spool: Path, waits: list[float], size: int
) -> None:
    data, digest = _blob(size)
    store = _store(client, bucket, spool, waits)
    sent = _count_uploads(client)

    stored = store.put(io.BytesIO(data))

    assert stored == StoredBlob(digest, size)
    assert sent == ["CreateMultipartUpload"]  # in parts, to the final key itself
    assert _objects(client, bucket) == [_final_key(digest)]
    assert _unfinished_uploads(client, bucket) == []
    assert list(spool.iterdir()) == []  # the spooled copy is gone
    assert store.exists(digest)
    with store.local_copy(digest) as path:  # botocore validates the object's checksum
        assert path.stat().st_size == size
        assert _file_digest(path) == digest
    assert list(spool.iterdir()) == []
    assert waits == []


def test_the_same_bytes_twice_are_one_blob_sent_once(
    client: Any, bucket: str, spool: Path, waits: list[float]
) -> None:
    data, digest = _blob(9 * MIB)
    store = _store(client, bucket, spool, waits)
    sent = _count_uploads(client)

    first = store.put(io.BytesIO(data))
    again = store.put(io.BytesIO(data))

    assert again == first
    assert sent == ["CreateMultipartUpload"]  # the second put found the blob there
    assert _objects(client, bucket) == [_final_key(digest)]
    with store.local_copy(digest) as path:
        assert _file_digest(path) == digest


def test_other_bytes_under_a_blob_s_key_are_replaced(
    client: Any, bucket: str, spool: Path, waits: list[float]
) -> None:
    data, digest = _blob(MIB)
    client.put_object(Bucket=bucket, Key=_final_key(digest), Body=b"not these bytes")
    store = _store(client, bucket, spool, waits)

    assert store.put(io.BytesIO(data)) == StoredBlob(digest, MIB)
    with store.local_copy(digest) as path:
        assert path.read_bytes() == data


def test_a_blob_over_the_limit_is_refused_and_leaves_nothing(
    client: Any, bucket: str, spool: Path, waits: list[float]
) -> None:
    data, digest = _blob(9 * MIB)
    store = _store(client, bucket, spool, waits)

    with pytest.raises(FileTooLargeError):
        store.put(io.BytesIO(data), max_bytes=8 * MIB)

    assert _objects(client, bucket) == []
    assert _unfinished_uploads(client, bucket) == []
    assert list(spool.iterdir()) == []
    assert not store.exists(digest)


# -- a store that is down, busy or refusing ----------------------------------------------------


def test_a_store_that_refuses_connections_is_unavailable_in_words_within_seconds(
    aws_environment: None,
) -> None:
    """The production settings (`open_blob_store`): botocore's and the store's retries, timed."""
    store = open_blob_store(
        f"s3://reconbot-secret-bucket/{PREFIX}", s3_endpoint_url=f"http://127.0.0.1:{CLOSED_PORT}"
    )
    started = time.monotonic()
    with pytest.raises(StorageUnavailableError) as failed:
        store.put(io.BytesIO(SMALL))
    elapsed = time.monotonic() - started

    assert sum(RETRY_WAITS) <= elapsed < 6, f"took {elapsed:.1f} s"
    assert_in_words(
        str(failed.value), "reconbot-secret-bucket", "could not be reached while storing the file"
    )


def test_reading_and_checking_a_store_that_is_down_are_unavailable_after_three_tries(
    aws_environment: None, spool: Path, waits: list[float]
) -> None:
    down = s3_client(f"http://127.0.0.1:{CLOSED_PORT}")
    store = S3BlobStore(down, "reconbot-secret-bucket", PREFIX, spool_dir=spool, sleep=waits.append)
    _, digest = _blob(10)

    with pytest.raises(StorageUnavailableError) as read, store.local_copy(digest):
        pass
    assert_in_words(str(read.value), "reconbot-secret-bucket", "while reading a stored file")
    assert waits == list(RETRY_WAITS)

    with pytest.raises(StorageUnavailableError) as checked:
        store.exists(digest)
    assert_in_words(str(checked.value), "reconbot-secret-bucket", "while checking a stored file")
    assert list(spool.iterdir()) == []


def test_a_missing_bucket_is_a_refusal_not_retried(
    client: Any, spool: Path, waits: list[float]
) -> None:
    store = _store(client, "reconbot-never-created", spool, waits)
    with pytest.raises(StorageError) as refused:
        store.put(io.BytesIO(SMALL))
    assert not isinstance(refused.value, StorageUnavailableError)
    assert_in_words(str(refused.value), "reconbot-never-created", "refused a request", "NoSuch")
    assert waits == []
    assert list(spool.iterdir()) == []


def test_no_credentials_is_a_refusal_not_retried(
    s3_endpoint: str, spool: Path, waits: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(spool.parent / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(spool.parent / "no-config"))
    anonymous = boto3.session.Session().client(
        "s3", endpoint_url=s3_endpoint, region_name="us-east-1"
    )
    store = _store(anonymous, "reconbot-any", spool, waits)
    with pytest.raises(StorageError) as refused:
        store.put(io.BytesIO(SMALL))
    assert not isinstance(refused.value, StorageUnavailableError)
    assert_in_words(str(refused.value), "reconbot-any", "refused", "no AWS credentials")
    assert waits == []


# -- transient failures, retried ---------------------------------------------------------------


def _client_error(code: str, status: int) -> ClientError:
    response = {
        "Error": {"Code": code, "Message": "…"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, "HeadObject")


def _upload_failed(code: str, status: int) -> S3UploadFailedError:
    """What boto3's upload_file raises for a ClientError: it wraps it, as the context."""
    wrapped = S3UploadFailedError(f"Failed to upload spool to bucket/key: {code}")
    wrapped.__context__ = _client_error(code, status)
    return wrapped


class _BrokenBody:
    """A response body that breaks after its first chunk, as a dropped connection does."""

    def iter_chunks(self, size: int) -> Iterator[bytes]:
        yield b"the first part of the bytes"
        raise ResponseStreamingError(error="IncompleteRead(27 bytes read)")


class _Flaky:
    """A boto3 client whose named calls first fail (or answer) as queued, then pass through."""

    def __init__(self, client: Any, **queued: list[BaseException | dict[str, Any]]) -> None:
        self._client = client
        self._queued = queued
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        real = getattr(self._client, name)
        queue = self._queued.get(name, [])

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if queue:
                first = queue.pop(0)
                if isinstance(first, BaseException):
                    raise first
                return first
            return real(*args, **kwargs)

        return call


REFUSED = EndpointConnectionError(endpoint_url="http://127.0.0.1:9/reconbot-secret-bucket")


@pytest.mark.parametrize(
    ("method", "failure"),
    [
        ("head_object", REFUSED),
        ("upload_file", ReadTimeoutError(endpoint_url="http://127.0.0.1:9/")),
        ("upload_file", _upload_failed("SlowDown", 503)),
        ("upload_file", ConnectionClosedError(endpoint_url="http://127.0.0.1:9/")),
    ],
    ids=["head-refused", "upload-timeout", "upload-slowdown", "upload-dropped"],
)
def test_a_put_that_fails_transiently_once_succeeds_on_the_next_try(
    client: Any,
    bucket: str,
    spool: Path,
    waits: list[float],
    method: str,
    failure: BaseException,
) -> None:
    data, digest = _blob(9 * MIB)
    flaky = _Flaky(client, **{method: [failure]})
    store = _store(flaky, bucket, spool, waits)

    assert store.put(io.BytesIO(data)) == StoredBlob(digest, len(data))

    assert waits == [RETRY_WAITS[0]]
    assert flaky.calls.count(method) == 2
    assert _objects(client, bucket) == [_final_key(digest)]
    assert list(spool.iterdir()) == []
    with store.local_copy(digest) as path:
        assert _file_digest(path) == digest


@pytest.mark.parametrize(
    "failure",
    [
        ConnectionClosedError(endpoint_url="http://127.0.0.1:9/"),
        _client_error("InternalError", 500),
        {"Body": _BrokenBody()},  # the connection drops in the middle of the bytes
    ],
    ids=["dropped", "500", "broken-body"],
)
def test_a_download_that_fails_transiently_once_succeeds_whole_on_the_next_try(
    client: Any,
    bucket: str,
    spool: Path,
    waits: list[float],
    failure: BaseException | dict[str, Any],
) -> None:
    data, digest = _blob(3 * MIB)
    _store(client, bucket, spool, waits).put(io.BytesIO(data))
    flaky = _Flaky(client, get_object=[failure])
    store = _store(flaky, bucket, spool, waits)

    with store.local_copy(digest) as path:
        assert path.read_bytes() == data  # written again from the start, not appended to
    assert waits == [RETRY_WAITS[0]]
    assert flaky.calls.count("get_object") == 2


def test_a_busy_store_is_unavailable_after_three_tries_and_leaves_no_spooled_file(
    client: Any, bucket: str, spool: Path, waits: list[float]
) -> None:
    flaky = _Flaky(client, upload_file=[_upload_failed("SlowDown", 503) for _ in range(3)])
    store = _store(flaky, bucket, spool, waits)

    with pytest.raises(StorageUnavailableError) as failed:
        store.put(io.BytesIO(SMALL))

    assert_in_words(str(failed.value), bucket, "could not be reached while storing the file")
    assert waits == list(RETRY_WAITS)
    assert flaky.calls.count("upload_file") == 3
    assert _objects(client, bucket) == []
    assert list(spool.iterdir()) == []


# -- which failures are transient --------------------------------------------------------------


class _Failing:
    """A client whose every HEAD fails with one error."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.calls = 0

    def head_object(self, **_: Any) -> dict[str, Any]:
        self.calls += 1
        raise self.error


CHECKING = "while checking a stored file"
NOWHERE = "http://127.0.0.1:9/"


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(REFUSED, id="refused"),
        pytest.param(ConnectTimeoutError(endpoint_url=NOWHERE), id="connect-timeout"),
        pytest.param(ReadTimeoutError(endpoint_url=NOWHERE), id="read-timeout"),
        pytest.param(_client_error("SlowDown", 503), id="SlowDown"),
        pytest.param(_client_error("InternalError", 500), id="InternalError"),
        pytest.param(_client_error("BadGateway", 502), id="any-502"),
        pytest.param(_client_error("TooManyRequestsException", 429), id="throttled"),
        pytest.param(_client_error("RequestTimeout", 400), id="RequestTimeout"),
    ],
)
def test_transient_failures_are_retried_then_unavailable(
    error: BaseException, waits: list[float]
) -> None:
    failing = _Failing(error)
    store = S3BlobStore(failing, "reconbot-secret-bucket", PREFIX, sleep=waits.append)
    with pytest.raises(StorageUnavailableError) as failed:
        store.exists("sha256:" + "e" * 64)
    assert_in_words(str(failed.value), "reconbot-secret-bucket", f"could not be reached {CHECKING}")
    assert failing.calls == 1 + len(RETRY_WAITS)
    assert waits == list(RETRY_WAITS)


@pytest.mark.parametrize(
    ("error", "words"),
    [
        pytest.param(_client_error("AccessDenied", 403), "(AccessDenied;", id="AccessDenied"),
        pytest.param(_client_error("403", 403), "(403;", id="403"),
        pytest.param(_client_error("NoSuchBucket", 404), "(NoSuchBucket;", id="NoSuchBucket"),
        pytest.param(_client_error("InvalidAccessKeyId", 403), "(InvalidAccessKeyId;", id="key"),
        pytest.param(NoCredentialsError(), "(the bot has no AWS credentials;", id="credentials"),
    ],
)
def test_refusals_are_not_retried_and_say_so(
    error: BaseException, words: str, waits: list[float]
) -> None:
    failing = _Failing(error)
    store = S3BlobStore(failing, "reconbot-secret-bucket", PREFIX, sleep=waits.append)
    with pytest.raises(StorageError) as failed:
        store.exists("sha256:" + "e" * 64)
    assert not isinstance(failed.value, StorageUnavailableError)
    assert_in_words(str(failed.value), "reconbot-secret-bucket", f"refused a request {CHECKING}")
    assert words in str(failed.value)
    assert failing.calls == 1
    assert waits == []


def test_a_failure_neither_transient_nor_a_refusal_is_not_retried(waits: list[float]) -> None:
    """A checksum that does not match the bytes will not match on the next try either."""
    failing = _Failing(FlexibleChecksumError(error_msg="Expected checksum x did not match y"))
    store = S3BlobStore(failing, "reconbot-secret-bucket", PREFIX, sleep=waits.append)
    with pytest.raises(StorageError) as failed:
        store.exists("sha256:" + "e" * 64)
    assert not isinstance(failed.value, StorageUnavailableError)
    assert_in_words(str(failed.value), "reconbot-secret-bucket", f"failed {CHECKING}")
    assert failing.calls == 1
    assert waits == []
