"""Blob stores: local disk and S3 (through moto's server on 127.0.0.1), hashed while streaming."""

from __future__ import annotations

import hashlib
import io
import socket
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from agent.errors import FileTooLargeError
from agent.ports import BlobStore
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
