"""When the file store or the model service fails, a person reads what failed, in words.

botocore's errors name the endpoint URL, the bucket and the object key. A store error raised in
a tool reaches the model as the tool's error text, and the model repeats it: in the report of a
failed reconciliation (the thread's failure message) or in an answer. So the stores and the
Bedrock model raise reconbot errors in words, with a reference to one log line that holds the
details. S3 is moto's server on 127.0.0.1 (as in tests/integration/test_blob_stores.py); an
unreachable store or model is a closed port, or a port that hangs up, on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from moto.server import ThreadedMotoServer

from agent.data.demo import generate
from agent.dependencies import Dependencies, WorkflowSettings
from agent.domain import Approver
from agent.errors import InputChangedError, ModelUnavailableError, ReconbotError
from agent.models.bedrock import BedrockSettings, build_bedrock_model
from agent.models.offline import OfflineModel
from agent.ports import BlobStore
from agent.usecases import UseCases, build_use_cases
from agent.usecases.common import Upload
from bot.slack import blocks
from storage.blobs import S3BlobStore
from tests.support.fake_uow import MemoryUnitOfWorkFactory

BUCKET, PREFIX = "reconbot-secret-bucket", "tenant-7/uploads"
DIGEST = "sha256:" + "e" * 64
REFERENCE = re.compile(r"reference ([0-9a-f]{8})")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CLOSED_PORT = _free_port()  # bound once, released: nothing listens there


@pytest.fixture(scope="module")
def aws_environment() -> Iterator[None]:
    patch = pytest.MonkeyPatch()
    patch.setenv("AWS_ACCESS_KEY_ID", "testing")
    patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    patch.delenv("AWS_PROFILE", raising=False)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def s3_endpoint(aws_environment: None) -> Iterator[str]:
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


def _client(endpoint: str) -> Any:
    config = Config(retries={"total_max_attempts": 1}, connect_timeout=2, read_timeout=5)
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", config=config)


def _unreachable_store() -> S3BlobStore:
    return S3BlobStore(
        _client(f"http://127.0.0.1:{CLOSED_PORT}"), BUCKET, PREFIX, retry_waits=(0, 0)
    )


def assert_in_words(message: str, caplog: pytest.LogCaptureFixture, *words: str) -> None:
    """Words and a reference for a person; nothing of the endpoint, bucket or key."""
    for detail in ("127.0.0.1", str(CLOSED_PORT), "http", BUCKET, PREFIX, "sha256/", "incoming/"):
        assert detail not in message, f"{detail!r} shown to a person: {message}"
    for word in ("EndpointConnectionError", "ClientError", "botocore", "endpoint URL", "connect"):
        assert word not in message, f"{word!r} shown to a person: {message}"
    for word in words:
        assert word in message, message
    found = REFERENCE.search(message)
    assert found, f"no log reference in: {message}"
    logged = [r.getMessage() for r in caplog.records if found.group(1) in r.getMessage()]
    assert logged and BUCKET in logged[0], "the details are in the log, under the reference"


# -- the store itself --------------------------------------------------------------------------


def test_an_unreachable_s3_store_says_so_in_words_and_logs_the_details(
    aws_environment: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    store = _unreachable_store()
    with pytest.raises(ReconbotError) as stored:
        store.put(io.BytesIO(b"order_id,amount\n1,2.00\n"))
    assert_in_words(str(stored.value), caplog, "could not be reached while storing the file")
    with pytest.raises(ReconbotError) as read, store.local_copy(DIGEST):
        pass
    assert_in_words(str(read.value), caplog, "could not be reached while reading a stored file")
    with pytest.raises(ReconbotError) as checked:
        store.exists(DIGEST)
    assert_in_words(str(checked.value), caplog, "could not be reached")


def test_a_store_that_refuses_names_the_code_and_a_missing_blob_is_missing(
    s3_endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    missing_bucket = S3BlobStore(_client(s3_endpoint), BUCKET, PREFIX)
    with pytest.raises(ReconbotError) as refused:
        missing_bucket.put(io.BytesIO(b"a,b\n1,2\n"))
    assert_in_words(str(refused.value), caplog, "refused a request", "NoSuchBucket")

    _client(s3_endpoint).create_bucket(Bucket="reconbot-present")
    store = S3BlobStore(_client(s3_endpoint), "reconbot-present", PREFIX)
    assert not store.exists(DIGEST)
    missing = r"the stored file sha256:eeeeeeeeeeee… is missing"
    with pytest.raises(InputChangedError, match=missing), store.local_copy(DIGEST):
        pass


# -- through the use cases, as the thread shows it ---------------------------------------------


class _Clock:
    def now(self) -> datetime:
        return datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    generate(200, folder, seed=5)
    return folder


def _use_cases(uow: MemoryUnitOfWorkFactory, blobs: BlobStore, workdir: Path) -> UseCases:
    settings = WorkflowSettings(workdir=workdir)
    return build_use_cases(Dependencies(uow, blobs, OfflineModel(), _Clock(), settings))


def _uploads(folder: Path) -> list[Upload]:
    return [
        Upload(io.BytesIO((folder / name).read_bytes()), name)
        for name in ("orders.csv", "payments.csv")
    ]


def test_a_store_down_reads_in_words_in_the_failure_the_answer_and_the_upload(
    s3_endpoint: str, demo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    _client(s3_endpoint).create_bucket(Bucket=BUCKET)
    uow = MemoryUnitOfWorkFactory()
    live = _use_cases(uow, S3BlobStore(_client(s3_endpoint), BUCKET, PREFIX), tmp_path / "w1")
    down = _use_cases(uow, _unreachable_store(), tmp_path / "w2")  # same state, store down

    # Reconciled while the store was up; asked about a finding while it is down.
    first = live.intake.start(_uploads(demo), requested_by="alice").request
    assert first is not None
    outcome = live.decisions.confirm(
        first.pause_id, first.authorization_identity, Approver(user="bob")
    )
    identifier = next(f["order_ids"][0] for f in outcome.top_findings if f["order_ids"])
    answer = down.questions.ask(
        first.investigation_id, f"Why is {identifier} flagged?", actor="alice"
    )
    rendered = blocks.answer_message(answer.text)
    assert_in_words(rendered.text, caplog, "file store could not be reached")
    assert_in_words(rendered.blocks[0]["text"]["text"], caplog, "file store could not be reached")

    # An approval whose reconciliation cannot read the files: the failure message says why.
    second = live.intake.start(_uploads(demo), requested_by="carol").request
    assert second is not None
    with pytest.raises(ReconbotError) as failed:
        down.decisions.confirm(second.pause_id, second.authorization_identity, Approver(user="bob"))
    shown = blocks.failure_message(second, str(failed.value))
    assert_in_words(shown.text, caplog, "file store could not be reached")

    # An upload the store cannot take: the person is told so, in words.
    with pytest.raises(ReconbotError) as upload:
        down.intake.start(_uploads(demo), requested_by="alice")
    assert_in_words(str(upload.value), caplog, "could not be reached while storing the file")


# -- the model service -------------------------------------------------------------------------


@pytest.fixture
def hang_up_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts a connection and closes it before any answer."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join(timeout=2)
    listener.close()


def _one_turn(settings: BedrockSettings) -> None:
    model = build_bedrock_model(settings)

    async def turn() -> None:
        async for _ in model.stream([{"role": "user", "content": [{"text": "ping"}]}]):
            pass

    asyncio.run(turn())


def test_a_model_service_that_hangs_up_is_unavailable_in_words(
    aws_environment: None, hang_up_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    url = f"http://127.0.0.1:{hang_up_port}"
    settings = BedrockSettings(endpoint_url=url, max_attempts=1, read_timeout_seconds=2)
    with pytest.raises(ModelUnavailableError) as raised:
        _one_turn(settings)
    message = str(raised.value)
    assert "could not be called" in message and "Nothing was lost" in message
    assert "127.0.0.1" not in message and str(hang_up_port) not in message and "http" not in message
    found = REFERENCE.search(message)
    assert found and any(found.group(1) in r.getMessage() for r in caplog.records)


def test_a_model_service_without_credentials_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    monkeypatch.delenv("AWS_WEB_IDENTITY_TOKEN_FILE", raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    settings = BedrockSettings(endpoint_url=f"http://127.0.0.1:{CLOSED_PORT}", max_attempts=1)
    with pytest.raises(ModelUnavailableError, match="the bot has no AWS credentials"):
        _one_turn(settings)
