"""Blob stores: local disk and S3 (through moto's server on 127.0.0.1), hashed while streaming."""

from __future__ import annotations

import hashlib
import io
import os
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

import storage.blobs as blobs_module
from agent.errors import FileTooLargeError, StorageError
from agent.ports import BlobStore, StoredBlob
from storage.blobs import LocalBlobStore, S3BlobStore, open_blob_store

DATA = b"order_id,amount\n" + b"".join(f"#{i},{i}.00\n".encode() for i in range(200_000))
DIGEST = "sha256:" + hashlib.sha256(DATA).hexdigest()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint(monkeypatch_module: pytest.MonkeyPatch) -> Iterator[str]:
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    patch = pytest.MonkeyPatch()
    patch.setenv("AWS_ACCESS_KEY_ID", "testing")
    patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    yield patch
    patch.undo()


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    if request.param == "local":
        return LocalBlobStore(tmp_path / "blobs")
    endpoint = request.getfixturevalue("s3_endpoint")
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    bucket = f"reconbot-{tmp_path.name.lower().replace('_', '-')[:40]}"
    client.create_bucket(Bucket=bucket)
    return S3BlobStore(client, bucket, "uploads")


def test_put_hashes_in_one_pass_and_reads_back(store: BlobStore) -> None:
    stored = store.put(io.BytesIO(DATA))
    assert stored.digest == DIGEST
    assert stored.size == len(DATA)
    assert store.exists(DIGEST)
    with store.local_copy(DIGEST) as path:
        assert path.read_bytes() == DATA
    again = store.put(io.BytesIO(DATA))
    assert again == stored  # content-addressed: the same bytes are the same blob


def test_upload_over_the_limit_is_refused_and_leaves_nothing(store: BlobStore) -> None:
    with pytest.raises(FileTooLargeError):
        store.put(io.BytesIO(DATA), max_bytes=1000)
    assert not store.exists(DIGEST)


def test_s3_url_with_custom_endpoint(s3_endpoint: str) -> None:
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    client.create_bucket(Bucket="reconbot-url")
    store = open_blob_store("s3://reconbot-url/pre/fix", s3_endpoint_url=s3_endpoint)
    stored = store.put(io.BytesIO(b"a,b\n1,2\n"))
    keys = [o["Key"] for o in client.list_objects_v2(Bucket="reconbot-url")["Contents"]]
    assert keys == [f"pre/fix/sha256/{stored.digest.removeprefix('sha256:')}"]


def test_the_bytes_read_back_before_put_returns_and_put_returns_once_they_are_there(
    store: BlobStore,
) -> None:
    """`on_readable` hears the blob once, while `put` has not returned: its bytes read back
    whole then (the file's first read starts there), and are there when `put` returns."""
    heard: list[tuple[str, bytes]] = []

    def readable(blob: StoredBlob) -> None:
        with store.local_copy(blob.digest) as path:
            heard.append((blob.digest, path.read_bytes()))

    stored = store.put(io.BytesIO(DATA), on_readable=readable)
    assert heard == [(DIGEST, DATA)]
    assert stored.digest == DIGEST
    assert store.exists(DIGEST)


def test_a_local_blob_is_readable_before_it_is_synced_and_synced_before_put_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync (the disk's time) runs after the bytes are readable, so a first read runs
    beside it; `put` still returns only once the file, its name and its new folder's name are
    synced."""
    events: list[object] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        events.append(os.fstat(fd).st_ino)  # which file or folder was synced

    monkeypatch.setattr(blobs_module.os, "fsync", fsync)
    root = tmp_path / "blobs"
    store = LocalBlobStore(root)
    stored = store.put(io.BytesIO(DATA), on_readable=lambda blob: events.append("readable"))
    events.append("returned")
    hex_digest = stored.digest.removeprefix("sha256:")
    final = root / hex_digest[:2] / hex_digest
    synced = [path.stat().st_ino for path in (final, final.parent, root)]
    assert events == ["readable", *synced, "returned"]


def test_two_puts_of_the_same_bytes_at_once_both_give_the_blob(tmp_path: Path) -> None:
    """A second process handling the same upload stores the same bytes at the same time:
    both get the blob, it reads back whole, and no temporary file is left."""
    store = LocalBlobStore(tmp_path / "blobs")
    with ThreadPoolExecutor(max_workers=4) as pool:
        stored = list(pool.map(lambda _: store.put(io.BytesIO(DATA)), range(4)))
    assert {blob.digest for blob in stored} == {DIGEST}
    with store.local_copy(DIGEST) as path:
        assert path.read_bytes() == DATA
    assert list((tmp_path / "blobs" / "incoming").iterdir()) == []


def test_a_sync_that_fails_takes_back_the_name_and_the_next_put_stores_the_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bytes whose sync failed are not trusted as stored: the put fails in words, the name
    it gave goes, and the next upload of the bytes stores them again."""
    store = LocalBlobStore(tmp_path / "blobs")

    def failing(fd: int) -> None:
        raise OSError(5, "Input/output error")

    with monkeypatch.context() as patch:
        patch.setattr(blobs_module.os, "fsync", failing)
        with pytest.raises(StorageError, match="storing the file"):
            store.put(io.BytesIO(DATA), on_readable=lambda blob: None)
    assert not store.exists(DIGEST)
    assert store.put(io.BytesIO(DATA)).digest == DIGEST
    with store.local_copy(DIGEST) as path:
        assert path.read_bytes() == DATA


def test_what_on_readable_raises_is_logged_and_the_blob_is_stored(store: BlobStore) -> None:
    def fails(blob: StoredBlob) -> None:
        raise RuntimeError("the first read could not start")

    assert store.put(io.BytesIO(DATA), on_readable=fails).digest == DIGEST
    assert store.exists(DIGEST)


def test_a_local_blob_stored_before_stays_in_place_when_the_same_bytes_come_again(
    tmp_path: Path,
) -> None:
    """A blob already stored may be recorded already: a second upload of its bytes never
    puts a copy (not synced yet) in its place, and leaves no temporary file behind."""
    store = LocalBlobStore(tmp_path / "blobs")
    store.put(io.BytesIO(DATA))
    with store.local_copy(DIGEST) as path:
        before = path.stat()
    assert store.put(io.BytesIO(DATA)).digest == DIGEST
    with store.local_copy(DIGEST) as path:
        after = path.stat()
        assert path.read_bytes() == DATA
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert list((tmp_path / "blobs" / "incoming").iterdir()) == []


@pytest.mark.parametrize("left", [b"", DATA[: len(DATA) // 2], DATA[:-1] + b"X"])
def test_a_file_left_under_a_blobs_name_by_a_crash_is_replaced_by_the_bytes(
    tmp_path: Path, left: bytes
) -> None:
    """A crash between naming a blob and syncing it can leave a file under the name with other
    bytes (none, some, or garbage of the same size): the next upload of the blob replaces it."""
    store = LocalBlobStore(tmp_path / "blobs")
    hex_digest = DIGEST.removeprefix("sha256:")
    stale = tmp_path / "blobs" / hex_digest[:2] / hex_digest
    stale.parent.mkdir(parents=True)
    stale.write_bytes(left)
    store.put(io.BytesIO(DATA))
    with store.local_copy(DIGEST) as path:
        assert path.read_bytes() == DATA
