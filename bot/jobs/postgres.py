"""The durable queue: procrastinate on PostgreSQL.

Web processes open a `PostgresQueue` and only enqueue. `run_workers` runs the bot's jobs
in a worker process: one procrastinate worker per lane (so a click never waits behind
inspections), each heart-beating. A job whose worker stopped heart-beating (killed, its host
gone) is put back by the periodic `retry_stalled` job of any other worker, and runs again
there; the thread's lock is held by the job row, so nothing else of that case runs meanwhile.
A job that met a passing failure (the file store down) is retried with backoff.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import procrastinate
from procrastinate import JobContext, RetryDecision
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.jobs import Job
from procrastinate.retry import BaseRetryStrategy
from procrastinate.worker import Worker
from sqlalchemy.engine import make_url

from agent.errors import StorageUnavailableError
from bot.jobs.queue import SWEEP, Attempt, Lane, RetryPolicy, Runner

logger = logging.getLogger(__name__)

RETRY_STALLED = "retry_stalled"

WorkerApp = procrastinate.App
"""The procrastinate app of a worker process (what `worker_app` builds, `run_workers` runs)."""


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker process runs: jobs at once per lane, how often it says it is alive, after
    how long without a sign another worker takes its jobs over, how often upkeep runs."""

    concurrency: int = 2
    decision_concurrency: int = 4
    heartbeat_seconds: float = 10.0
    stalled_after_seconds: float = 30.0
    sweep_seconds: int = 30
    poll_seconds: float = 2.0


def conninfo(database_url: str) -> str:
    """The libpq address of a SQLAlchemy PostgreSQL URL (`postgresql+psycopg://…`)."""
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def every(seconds: float) -> str:
    """A cron line (with procrastinate's sixth column, seconds) firing at least every
    `seconds` (the largest period at most that long that divides a minute, or an hour)."""
    whole = max(1, round(seconds))
    if whole < 60:
        step = max(d for d in range(1, whole + 1) if 60 % d == 0)
        return f"* * * * * */{step}"
    return f"*/{max(1, min(59, whole // 60))} * * * *"


class _PassingFailures(BaseRetryStrategy):
    """Retry a job that met a file store that was down, with the policy's backoff."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        """Retry in the policy's wait while runs remain and the failure is a passing one."""
        if not isinstance(exception, StorageUnavailableError):
            return None
        if job.attempts + 1 >= self.policy.attempts:
            return None
        wait = round(self.policy.wait(job.attempts + 1))
        return RetryDecision(retry_in={"seconds": wait})


class PostgresQueue:
    """Enqueues jobs as procrastinate jobs (see `JobQueue`)."""

    def __init__(self, database_url: str) -> None:
        self.app = procrastinate.App(
            connector=procrastinate.SyncPsycopgConnector(conninfo=conninfo(database_url))
        )
        self.app.open()

    def enqueue(
        self,
        name: str,
        args: dict[str, Any],
        *,
        lane: Lane,
        lock: str | None = None,
        once: str | None = None,
    ) -> None:
        """Enqueue job `name`; a second enqueue of a waiting `once` key is skipped."""
        try:
            job_id = self.app.configure_task(
                name, queue=lane.value, lock=lock, queueing_lock=once
            ).defer(**args)
        except AlreadyEnqueued:
            logger.info("job=%s once=%s | already waiting; not enqueued again", name, once)
            return
        logger.info("job=%s id=%s lane=%s | enqueued", name, job_id, lane.value)

    def close(self) -> None:
        """Close the connections."""
        self.app.close()


def worker_app(database_url: str, runner: Runner, settings: WorkerSettings) -> procrastinate.App:
    """A procrastinate app whose tasks are the jobs `runner` knows, run by it, plus the
    periodic upkeep and the retry of jobs whose worker stopped."""
    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=conninfo(database_url))
    )
    strategy = _PassingFailures(RetryPolicy())
    for name in runner.names:
        if name == SWEEP:
            continue
        app.task(name=name, pass_context=True, retry=strategy)(_job(runner, name, strategy))

    @app.periodic(cron=every(settings.sweep_seconds))
    @app.task(name=SWEEP, queue=Lane.WORK.value, queueing_lock=SWEEP, pass_context=True)
    def sweep(context: JobContext, timestamp: int) -> None:
        runner.run(SWEEP, {}, Attempt())

    # On the decision lane: short, and never queued behind long inspections.
    @app.periodic(cron=every(max(1.0, settings.heartbeat_seconds / 2)))
    @app.task(name=RETRY_STALLED, queue=Lane.DECISIONS.value, queueing_lock=RETRY_STALLED)
    async def retry_stalled(timestamp: int) -> None:
        stalled = await app.job_manager.get_stalled_jobs(
            seconds_since_heartbeat=settings.stalled_after_seconds
        )
        for job in stalled:
            logger.warning(
                "job=%s id=%s attempts=%s | its worker stopped; running it again",
                job.task_name,
                job.id,
                job.attempts,
            )
            await app.job_manager.retry_job(job)

    return app


def _job(runner: Runner, name: str, strategy: _PassingFailures) -> Any:
    def job(context: JobContext, **args: Any) -> None:
        assert context.job is not None
        previous = context.job.attempts
        attempt = Attempt(
            number=previous + 1,
            last=previous + 1 >= strategy.policy.attempts,
            interrupted=previous > 0,
        )
        runner.run(name, args, attempt)

    job.__name__ = name
    return job


def run_workers(app: procrastinate.App, settings: WorkerSettings, name: str) -> None:
    """Run one worker per lane in this process until SIGTERM or SIGINT; the jobs running
    then are finished first (a job cut off by a kill is retried elsewhere)."""
    asyncio.run(_run(app, settings, name))


async def _run(app: procrastinate.App, settings: WorkerSettings, name: str) -> None:
    loop = asyncio.get_running_loop()
    threads = settings.concurrency + settings.decision_concurrency + 2
    loop.set_default_executor(ThreadPoolExecutor(threads, thread_name_prefix="reconbot-job"))
    lanes = [
        (Lane.WORK, settings.concurrency),
        (Lane.DECISIONS, settings.decision_concurrency),
    ]
    async with app.open_async():
        workers = [
            Worker(
                app,
                queues=[lane.value],
                name=f"{name}-{lane.value}",
                concurrency=concurrency,
                install_signal_handlers=False,
                update_heartbeat_interval=settings.heartbeat_seconds,
                stalled_worker_timeout=settings.stalled_after_seconds,
                fetch_job_polling_interval=settings.poll_seconds,
                abort_job_polling_interval=settings.poll_seconds,
                delete_jobs="successful",
            )
            for lane, concurrency in lanes
        ]

        def stop() -> None:
            for worker in workers:
                worker.stop()  # type: ignore[no-untyped-call]

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop)
        await asyncio.gather(*(worker.run() for worker in workers))  # type: ignore[no-untyped-call]
