"""The embedded queue: the catalogue's jobs on this process's own executors (SQLite, one
process). Same jobs, same retries with backoff as on PostgreSQL; a job's `once` key is held
while it waits, and its thread lock is taken by the handlers themselves (`BotWork.serialised`).

What this queue cannot do is hand a job to another process: that is what PostgreSQL is for.
A job interrupted by a crash is found by the sweep after a restart (an upload's delivery is
kept until it is answered; a claim's lease runs out)."""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

from agent.errors import StorageUnavailableError
from bot.jobs.queue import Attempt, Lane, RetryPolicy
from bot.slack.work import BotWork

logger = logging.getLogger(__name__)


class Runner(Protocol):
    """Runs a job by name (`catalogue.JobRunner`)."""

    def run(self, name: str, args: dict[str, Any], attempt: Attempt) -> None:
        """Run job `name` with `args`."""
        ...


class InProcessQueue:
    """Runs jobs on `work`'s two lanes, retrying a job that met a passing failure."""

    def __init__(self, work: BotWork, retry: RetryPolicy | None = None) -> None:
        self.work = work
        self.retry = retry or RetryPolicy()
        self.runner: Runner | None = None
        self._waiting: set[str] = set()
        self._guard = threading.Lock()
        self._timers: set[threading.Timer] = set()
        self._closed = threading.Event()

    def bind(self, runner: Runner) -> None:
        """The runner of the jobs (built after the queue: the handlers enqueue through it)."""
        self.runner = runner

    def enqueue(
        self,
        name: str,
        args: dict[str, Any],
        *,
        lane: Lane,
        lock: str | None = None,
        once: str | None = None,
    ) -> None:
        """Run job `name` on `lane` (see `JobQueue.enqueue`)."""
        if once is not None:
            with self._guard:
                if once in self._waiting:
                    logger.info("job=%s once=%s | already waiting; not enqueued again", name, once)
                    return
                self._waiting.add(once)
        self._submit(name, args, lane, once, 1)

    def _submit(
        self, name: str, args: dict[str, Any], lane: Lane, once: str | None, n: int
    ) -> None:
        run = self.work.decide if lane is Lane.DECISIONS else self.work.submit
        run(self._run, name, args, lane, once, n)

    def _run(self, name: str, args: dict[str, Any], lane: Lane, once: str | None, n: int) -> None:
        assert self.runner is not None, "bind() the runner before enqueueing"
        if once is not None:
            with self._guard:
                self._waiting.discard(once)
        last = n >= self.retry.attempts
        try:
            self.runner.run(name, args, Attempt(number=n, last=last))
        except StorageUnavailableError:
            if last or self._closed.is_set():
                logger.exception("job=%s attempt=%s | failed; no retry left", name, n)
                return
            wait = self.retry.wait(n)
            logger.warning(
                "job=%s attempt=%s wait=%.1fs | file store down; retrying", name, n, wait
            )
            timer = threading.Timer(wait, self._retry, (timer_box := [], name, args, lane, n + 1))
            timer_box.append(timer)
            timer.daemon = True
            with self._guard:
                self._timers.add(timer)
            timer.start()

    def _retry(
        self, box: list[threading.Timer], name: str, args: dict[str, Any], lane: Lane, n: int
    ) -> None:
        with self._guard:
            self._timers.discard(box[0])
        if not self._closed.is_set():
            self._submit(name, args, lane, None, n)

    def close(self) -> None:
        """Cancel the retries not yet due (their work stays resumable: an upload's delivery
        is unfinished until answered) and finish the jobs already running."""
        self._closed.set()
        with self._guard:
            timers, self._timers = set(self._timers), set()
        for timer in timers:
            timer.cancel()
        self.work.close()
