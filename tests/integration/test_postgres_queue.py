"""The PostgreSQL job queue against a real server: a web process's enqueue writes a job on its
lane under its thread's lock, an event delivered twice while its job waits is enqueued once, a
worker (`run_workers`, stopped with SIGTERM as a process manager does) runs a job once with its
JSON arguments, and a job whose worker died mid-run is put back and runs again, told it was
interrupted, before anything else of its thread."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import procrastinate
import pytest
import sqlalchemy as sa

from bot.jobs.postgres import PostgresQueue, WorkerSettings, conninfo, run_workers, worker_app
from bot.jobs.queue import Attempt, Lane, thread_lock
from storage.database import create_engine, migrate
from tests.support.databases import POSTGRES_URL, drop_schema, postgres_schema_url

pytestmark = pytest.mark.postgres

LOCK = thread_lock("C0FINANCE", "1700000000.000100")
EVENT = {
    "type": "message",
    "channel": "C0FINANCE",
    "user": "U0ALICE",
    "ts": "1700000000.000100",
    "text": "month-end – ünïcode ✓",
    "files": [{"id": "F1", "name": "orders.csv", "size": 1024}],
}
UPLOAD_ARGS = {"event": EVENT, "delivery_id": "Ev01UPLOAD"}
APPROVE_ARGS = {"click": {"channel": "C0FINANCE", "user": "U0BOB"}, "button": '{"pause_id":"p"}'}
SETTINGS = WorkerSettings(
    concurrency=2,
    decision_concurrency=2,
    heartbeat_seconds=1,
    stalled_after_seconds=5,
    sweep_seconds=600,
    poll_seconds=0.2,
)
DEADLINE_SECONDS = 30


@pytest.fixture
def database_url() -> Iterator[str]:
    if not POSTGRES_URL:
        pytest.skip("RECONBOT_TEST_POSTGRES_URL is not set")
    url, schema = postgres_schema_url(POSTGRES_URL)
    engine = create_engine(url)
    try:
        migrate(engine)
    finally:
        engine.dispose()
    yield url
    drop_schema(POSTGRES_URL, schema)


def rows(url: str, query: str, **params: object) -> list[sa.RowMapping]:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            return list(conn.execute(sa.text(query), params).mappings().all())
    finally:
        engine.dispose()


def jobs(url: str) -> list[sa.RowMapping]:
    return rows(
        url,
        "SELECT id, queue_name, task_name, lock, queueing_lock, args, status, attempts "
        "FROM procrastinate_jobs WHERE task_name NOT IN ('sweep', 'retry_stalled') ORDER BY id",
    )


@dataclass(frozen=True)
class Ran:
    name: str
    args: dict[str, Any]
    attempt: Attempt


class FakeRunner:
    """The bot's job runner as a worker sees it: records each run; once `enough(runs)`, sends
    this process SIGTERM a second later (time for a duplicate run to show), as a process
    manager stops a worker. A watchdog sends it anyway after DEADLINE_SECONDS."""

    names = ("files_shared", "approve", "sweep")

    def __init__(self, enough: Callable[[list[Ran]], bool]) -> None:
        self.enough = enough
        self.runs: list[Ran] = []
        self._guard = threading.Lock()
        self._stopping = False
        self.watchdog = threading.Timer(DEADLINE_SECONDS, self._stop)

    def run(self, name: str, args: dict[str, Any], attempt: Attempt) -> None:
        with self._guard:
            self.runs.append(Ran(name, args, attempt))
            if not self._stopping and self.enough(self.job_runs):
                self._stopping = True
                threading.Timer(1.0, self._stop).start()

    @property
    def job_runs(self) -> list[Ran]:
        """The runs of enqueued jobs (not the periodic sweep)."""
        return [r for r in self.runs if r.name != "sweep"]

    def _stop(self) -> None:
        self.watchdog.cancel()
        os.kill(os.getpid(), signal.SIGTERM)


def run_worker_until_stopped(url: str, runner: FakeRunner) -> None:
    """`run_workers` of a worker process, in this process, until the runner stops it."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    app = worker_app(url, runner, SETTINGS)  # type: ignore[arg-type]
    runner.watchdog.start()
    try:
        run_workers(app, SETTINGS, "test-worker")
    finally:
        runner.watchdog.cancel()
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert runner.enough(runner.job_runs), (
        f"the worker did not run the jobs within {DEADLINE_SECONDS}s: {runner.runs}"
    )


def test_enqueue_writes_the_job_on_its_lane_with_its_locks(database_url: str) -> None:
    queue = PostgresQueue(database_url)
    try:
        queue.enqueue("files_shared", UPLOAD_ARGS, lane=Lane.WORK, lock=LOCK, once="event:Ev01")
        queue.enqueue("approve", APPROVE_ARGS, lane=Lane.DECISIONS, lock=LOCK)
    finally:
        queue.close()
    upload, approve = jobs(database_url)
    assert (upload["queue_name"], upload["task_name"], upload["lock"]) == (
        "work",
        "files_shared",
        LOCK,
    )
    assert upload["queueing_lock"] == "event:Ev01"
    assert upload["args"] == UPLOAD_ARGS
    assert upload["status"] == "todo"
    assert (approve["queue_name"], approve["task_name"], approve["lock"]) == (
        "decisions",
        "approve",
        LOCK,
    )
    assert approve["queueing_lock"] is None
    assert approve["args"] == APPROVE_ARGS


def test_an_event_delivered_twice_while_its_job_waits_is_enqueued_once(database_url: str) -> None:
    queue = PostgresQueue(database_url)
    try:
        queue.enqueue("files_shared", UPLOAD_ARGS, lane=Lane.WORK, lock=LOCK, once="event:Ev01")
        queue.enqueue("files_shared", UPLOAD_ARGS, lane=Lane.WORK, lock=LOCK, once="event:Ev01")
        queue.enqueue("files_shared", UPLOAD_ARGS, lane=Lane.WORK, lock=LOCK, once="event:Ev02")
        queue.enqueue("approve", APPROVE_ARGS, lane=Lane.DECISIONS, lock=LOCK)
        queue.enqueue("approve", APPROVE_ARGS, lane=Lane.DECISIONS, lock=LOCK)
    finally:
        queue.close()
    found = jobs(database_url)
    assert [(j["task_name"], j["queueing_lock"]) for j in found] == [
        ("files_shared", "event:Ev01"),
        ("files_shared", "event:Ev02"),
        ("approve", None),
        ("approve", None),
    ]


def test_a_worker_runs_a_job_once_with_its_json_arguments(database_url: str) -> None:
    queue = PostgresQueue(database_url)
    try:
        queue.enqueue("files_shared", UPLOAD_ARGS, lane=Lane.WORK, lock=LOCK, once="event:Ev01")
        queue.enqueue("approve", APPROVE_ARGS, lane=Lane.DECISIONS, lock=LOCK)
    finally:
        queue.close()

    runner = FakeRunner(lambda runs: len(runs) >= 2)
    run_worker_until_stopped(database_url, runner)

    assert runner.job_runs == [
        Ran("files_shared", UPLOAD_ARGS, Attempt(number=1, last=False, interrupted=False)),
        Ran("approve", APPROVE_ARGS, Attempt(number=1, last=False, interrupted=False)),
    ], "each job ran once, in its thread's order"
    assert jobs(database_url) == [], "a job that succeeded is not kept"
    workers = rows(database_url, "SELECT id FROM procrastinate_workers")
    assert workers == [], "a worker stopped with SIGTERM says goodbye to the queue"


async def _die_while_running(url: str) -> int:
    """A worker that took the upload's job and then died: registered, the job fetched (now
    'doing' under its id), its heartbeat long gone."""
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo(url)))
    async with app.open_async():
        worker_id = await app.job_manager.register_worker()
        job = await app.job_manager.fetch_job(queues=[Lane.WORK.value], worker_id=worker_id)
        assert job is not None and job.task_name == "files_shared"
    return worker_id


def test_a_job_whose_worker_died_runs_again_first_told_it_was_interrupted(
    database_url: str,
) -> None:
    queue = PostgresQueue(database_url)
    try:
        queue.enqueue("files_shared", UPLOAD_ARGS, lane=Lane.WORK, lock=LOCK, once="event:Ev01")
    finally:
        queue.close()
    dead = asyncio.run(_die_while_running(database_url))
    rows(
        database_url,
        "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 hour' "
        "WHERE id = :id RETURNING id",
        id=dead,
    )
    # Another job of the same case, enqueued after: it must wait for the interrupted one.
    queue = PostgresQueue(database_url)
    try:
        queue.enqueue("approve", APPROVE_ARGS, lane=Lane.DECISIONS, lock=LOCK)
    finally:
        queue.close()
    [stalled, waiting] = jobs(database_url)
    assert (stalled["status"], waiting["status"]) == ("doing", "todo")

    runner = FakeRunner(lambda runs: len(runs) >= 2)
    run_worker_until_stopped(database_url, runner)

    assert runner.job_runs == [
        Ran("files_shared", UPLOAD_ARGS, Attempt(number=2, last=False, interrupted=True)),
        Ran("approve", APPROVE_ARGS, Attempt(number=1, last=False, interrupted=False)),
    ]
    assert jobs(database_url) == []
