"""The embedded queue: the bot's jobs on this process's own executors (SQLite, one
process). Same jobs, same retries with backoff as on PostgreSQL; a job's `once` key is held
while it waits, and its thread lock is taken by the handlers themselves (`BotWork.serialised`).

What this queue cannot do is hand a job to another process: that is what PostgreSQL is for.
A job interrupted by a crash is found by the sweep after a restart (an upload's delivery is
kept until it is answered; a claim's lease runs out).

Listeners enqueue on the thread that answers Slack, so `enqueue` only appends the job to an
in-memory queue; one thread of the queue hands the jobs to the lanes in order. Submitting to a
lane's executor from the request threads themselves made 50 simultaneous clicks wait on the
executors' locks (one of them shared by every executor of the process) while the lanes
started their threads (scripts/ack_latency.py)."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from agent.errors import StorageUnavailableError
from bot.jobs.queue import Attempt, Lane, RetryPolicy, Runner

logger = logging.getLogger(__name__)

# The longest a job waits for the requests being answered before it is handed to its lane.
TURN_SECONDS = 0.5


# A job waiting to be handed to its lane: name, arguments, lane, once key, time enqueued.
_Job = tuple[str, dict[str, Any], Lane, str | None, float]


class Lanes(Protocol):
    """The process's two executors (the Slack bot's `BotWork`): long work, and decisions."""

    def submit(self, work: Callable[..., None], *args: Any) -> object:
        """Run `work(*args)` on the lane of long work."""
        ...

    def decide(self, work: Callable[..., None], *args: Any) -> object:
        """Run `work(*args)` on the decision lane."""
        ...

    def close(self) -> None:
        """Finish the work started; stop."""
        ...


class InProcessQueue:
    """Runs jobs on `work`'s two lanes, retrying a job that met a passing failure. With
    `wait_turn` (`Answering.wait_quiet`), a job is handed to its lane once the requests being
    answered are (or TURN_SECONDS after it was enqueued at the latest)."""

    def __init__(
        self,
        work: Lanes,
        retry: RetryPolicy | None = None,
        wait_turn: Callable[[float], None] | None = None,
    ) -> None:
        self.work = work
        self.retry = retry or RetryPolicy()
        self.wait_turn = wait_turn
        self.runner: Runner | None = None
        self._waiting: set[str] = set()
        self._guard = threading.Lock()
        self._timers: set[threading.Timer] = set()
        self._closed = threading.Event()
        # The enqueues in progress, which closing waits for (a set, not a lock: a request
        # thread preempted while holding a lock would hold up every click behind it).
        self._enqueuing: set[object] = set()
        self._pending: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._handing = threading.Thread(target=self._hand_over, daemon=True, name="reconbot-jobs")
        self._handing.start()

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
        """Run job `name` on `lane` (see `JobQueue.enqueue`); RuntimeError once closed."""
        if once is not None:
            with self._guard:
                if once in self._waiting:
                    logger.info("job=%s once=%s | already waiting; not enqueued again", name, once)
                    return
                self._waiting.add(once)
        token = object()
        self._enqueuing.add(token)
        try:
            if self._closed.is_set():
                raise RuntimeError("the job queue is closed")
            self._pending.put((name, args, lane, once, time.monotonic()))
        finally:
            self._enqueuing.discard(token)

    def _hand_over(self) -> None:
        """Hand the enqueued jobs to their lanes, in order, until closed."""
        while (job := self._pending.get()) is not None:
            name, args, lane, once, enqueued = job
            if self.wait_turn is not None and not self._closed.is_set():
                self.wait_turn(enqueued + TURN_SECONDS)
            try:
                self._submit(name, args, lane, once, 1)
            except Exception:
                logger.exception("job=%s | not handed to its lane", name)

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
        while self._enqueuing:  # an enqueue that saw the queue open finishes putting its job
            time.sleep(0.001)
        self._pending.put(None)  # after every job enqueued before: they reach their lanes
        self._handing.join()
        with self._guard:
            timers, self._timers = set(self._timers), set()
        for timer in timers:
            timer.cancel()
        self.work.close()
