"""Production topology: web processes that acknowledge and enqueue, `reconbot worker`
processes that run the jobs, on PostgreSQL and S3 (moto's server behind a proxy the test can
stall or take down), against the Slack stand-in. Everything is a real process, as an operator
runs it; the test kills them with SIGKILL.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import boto3
import pytest
import sqlalchemy as sa
from moto.server import ThreadedMotoServer

from storage.database import create_engine
from tests.standins.slack import Message, SlackStandIn
from tests.support.databases import POSTGRES_URL, drop_schema, postgres_schema_url
from tests.support.tcp_proxy import TcpProxy

from .conftest import (
    ALICE,
    BOB,
    CHANNEL,
    RECONBOT,
    ROOT,
    BotProcess,
    DemoFiles,
    bot_environment,
    free_port,
    request_message,
    upload_pair,
    wait_text,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

HEARTBEAT_SECONDS = 1
STALLED_AFTER_SECONDS = 5
BUCKET = "reconbot-jobs"


@dataclass
class WorkerProcess:
    """`reconbot worker`, optionally under another host name (its own UTS namespace)."""

    env: dict[str, str]
    log: Path
    hostname: str | None = None
    process: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        command = [RECONBOT, "worker", "--concurrency", "2"]
        if self.hostname:
            command = [
                "unshare",
                "--uts",
                "sh",
                "-c",
                f'hostname {self.hostname} && exec "$@"',
                "-",
            ]
            command += [RECONBOT, "worker", "--concurrency", "2"]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env={**os.environ, **self.env}, stdout=out, stderr=out
            )

    def kill(self) -> None:
        """SIGKILL: no shutdown, no goodbye to the queue."""
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, as a process manager stops it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class Topology:
    """The processes of one test and what they share."""

    standin: SlackStandIn
    env: dict[str, str]
    database_url: str
    proxy: TcpProxy
    folder: Path
    webs: list[BotProcess] = field(default_factory=list)
    workers: list[WorkerProcess] = field(default_factory=list)

    def web(self) -> BotProcess:
        """One more web process behind the stand-in's balancer."""
        process = BotProcess(self.env, free_port())
        self.webs.append(process)
        self.standin.app_urls.append(process.events_url)
        return process

    def worker(self, hostname: str | None = None) -> WorkerProcess:
        """One more worker process."""
        process = WorkerProcess(self.env, self.folder / f"worker-{len(self.workers)}.log", hostname)
        self.workers.append(process)
        return process

    def scalar(self, query: str, **params: object) -> object:
        """One value from the bot's database."""
        engine = create_engine(self.database_url)
        try:
            with engine.connect() as conn:
                return conn.execute(sa.text(query), params).scalar()
        finally:
            engine.dispose()

    def rows(self, query: str, **params: object) -> list[sa.Row[tuple[object, ...]]]:
        """Rows from the bot's database."""
        engine = create_engine(self.database_url)
        try:
            with engine.connect() as conn:
                return list(conn.execute(sa.text(query), params).all())
        finally:
            engine.dispose()

    def logs(self) -> str:
        """What the workers wrote (shown when a test fails)."""
        return "\n".join(w.log.read_text(errors="replace")[-4000:] for w in self.workers)


@pytest.fixture
def topology(standin: SlackStandIn, tmp_path: Path) -> Iterator[Topology]:
    if not POSTGRES_URL:
        pytest.skip("RECONBOT_TEST_POSTGRES_URL is not set")
    database_url, schema = postgres_schema_url(POSTGRES_URL)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    credentials = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
    }
    boto3.client(
        "s3",
        endpoint_url=f"http://{host}:{port}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=BUCKET)
    proxy = TcpProxy((host, port)).start()
    env = {
        **bot_environment(standin, database_url, tmp_path),
        **credentials,
        "RECONBOT_BLOB_URL": f"s3://{BUCKET}/blobs",
        "RECONBOT_S3_ENDPOINT_URL": proxy.url,
        "RECONBOT_WORKER_HEARTBEAT": f"{HEARTBEAT_SECONDS}s",
        "RECONBOT_WORKER_STALLED_AFTER": f"{STALLED_AFTER_SECONDS}s",
        "RECONBOT_EXPIRY_SWEEP": "2s",
    }
    subprocess.run(
        [RECONBOT, "migrate"], cwd=ROOT, env={**os.environ, **env}, check=True, timeout=120
    )
    running = Topology(standin, env, database_url, proxy, tmp_path)
    try:
        yield running
    finally:
        for worker in running.workers:
            worker.stop()
        for web in running.webs:
            web.stop()
        proxy.stop()
        moto.stop()
        drop_schema(POSTGRES_URL, schema)


def _truth(demo: DemoFiles) -> dict[str, int]:
    return dict(json.loads((demo.folder / "truth.json").read_text())["findings"])


def _outcome_counts(topology: Topology) -> list[tuple[str, dict[str, int]]]:
    rows = topology.rows(
        "SELECT investigation_id, document FROM outcomes ORDER BY investigation_id"
    )
    return [(str(r[0]), dict(json.loads(str(r[1]))["counts"])) for r in rows]


def test_two_web_processes_and_two_workers_give_one_investigation_and_one_outcome_each(
    topology: Topology, demo_files: DemoFiles
) -> None:
    topology.web()
    topology.web()
    topology.worker()
    topology.worker()
    standin = topology.standin
    uploads = 20

    def upload(_: int) -> Message:
        # Slack's retries: every event delivered twice, to either web process.
        return standin.post_files(
            ALICE,
            CHANNEL,
            [("orders.csv", demo_files.orders), ("payments.csv", demo_files.payments)],
            deliveries=2,
        )

    with ThreadPoolExecutor(8) as pool:
        messages = list(pool.map(upload, range(uploads)))
    requests = [request_message(standin, m.ts, timeout=180) for m in messages]

    def approve_thrice(request: Message) -> list[int]:
        # Three clicks on the request as it was shown: each payload is made before any click
        # is delivered (the stand-in's message is live, and the first click's answer takes
        # its buttons away).
        payloads = [standin.click_payload(BOB, request, "approve") for _ in range(3)]
        with ThreadPoolExecutor(3) as clicks:
            return [
                delivery.status for delivery in clicks.map(standin.deliver_interaction, payloads)
            ]

    with ThreadPoolExecutor(8) as pool:
        statuses = [s for found in pool.map(approve_thrice, requests) for s in found]
    assert statuses == [200] * uploads * 3
    for message in messages:
        wait_text(standin, message.ts, "Reconciled", timeout=180)

    assert topology.scalar("SELECT count(*) FROM investigations") == uploads
    assert (
        topology.scalar("SELECT count(DISTINCT (channel, thread_ts)) FROM investigations")
        == uploads
    )
    outcomes = _outcome_counts(topology)
    assert len(outcomes) == uploads, topology.logs()
    assert len({case for case, _ in outcomes}) == uploads
    truth = _truth(demo_files)
    assert all(counts == truth for _, counts in outcomes)
    for message in messages:
        thread = [m for m in standin.workspace.thread(CHANNEL, message.ts) if m.bot_id]
        assert sum("Reconciled" in m.all_text() for m in thread) == 1


@pytest.mark.parametrize("survivor_host", [None, "another-host"], ids=["same host", "other host"])
def test_a_worker_killed_mid_reconciliation_is_replaced_by_another_without_a_restart(
    topology: Topology, demo_files: DemoFiles, survivor_host: str | None
) -> None:
    topology.web()
    first = topology.worker()
    standin = topology.standin
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts, timeout=120)

    # The file store hangs, so the reconciliation is caught mid-way: the claim is taken,
    # the approved files are being read.
    topology.proxy.set("stalled")
    assert standin.click(BOB, request, "approve").status == 200
    deadline = time.monotonic() + 60
    owner = None
    while time.monotonic() < deadline and owner is None:
        owner = topology.scalar("SELECT claim_owner FROM pauses WHERE status = 'claimed'")
        time.sleep(0.05)
    assert owner is not None, topology.logs()
    assert str(owner).split(":")[1] == str(first.process.pid)
    survivor = topology.worker(survivor_host)
    time.sleep(1)
    killed_at = time.monotonic()
    first.kill()
    topology.proxy.set("up")

    text = wait_text(standin, upload.ts, "Reconciled", timeout=STALLED_AFTER_SECONDS + 30)
    took = time.monotonic() - killed_at
    assert took <= STALLED_AFTER_SECONDS + 30
    assert "Picking up the reconciliation again" in text
    assert survivor.process.poll() is None
    outcomes = _outcome_counts(topology)
    assert len(outcomes) == 1 and outcomes[0][1] == _truth(demo_files)
    owner_now = topology.scalar("SELECT claim_owner FROM pauses WHERE status = 'consumed'")
    assert str(owner_now).split(":")[1] == str(survivor.process.pid)
    if survivor_host:
        assert str(owner_now).startswith(f"{survivor_host}:")


def test_an_s3_stall_during_an_upload_makes_one_investigation(
    topology: Topology, demo_files: DemoFiles
) -> None:
    topology.web()
    topology.worker()
    topology.worker()
    topology.proxy.set("stalled")
    upload = upload_pair(topology.standin, demo_files)
    time.sleep(25)
    topology.proxy.set("up")
    request_message(topology.standin, upload.ts, timeout=120)
    time.sleep(3)  # anything handed out twice would show by now
    assert topology.scalar("SELECT count(*) FROM investigations") == 1
    assert topology.scalar("SELECT count(*) FROM pauses") == 1
    bot_messages = [m for m in topology.standin.workspace.thread(CHANNEL, upload.ts) if m.bot_id]
    assert sum("Decision needed" in m.all_text() for m in bot_messages) == 1


def test_an_s3_outage_during_an_upload_is_retried_until_s3_is_back(
    topology: Topology, demo_files: DemoFiles
) -> None:
    topology.web()
    topology.worker()
    topology.proxy.set("down")
    upload = upload_pair(topology.standin, demo_files)
    waiting = wait_text(topology.standin, upload.ts, "Trying again", timeout=60)
    assert "upload" not in waiting.lower().split("nothing needs uploading again")[0][-200:]
    time.sleep(5)
    topology.proxy.set("up")
    request_message(topology.standin, upload.ts, timeout=120)
    text = "\n".join(
        m.all_text() for m in topology.standin.workspace.thread(CHANNEL, upload.ts) if m.bot_id
    )
    assert "upload them again" not in text and "Upload again" not in text
    assert topology.scalar("SELECT count(*) FROM investigations") == 1
