"""The bot's executors for work off the request thread, in two lanes, and one lock per thread.

Listeners acknowledge within Slack's three seconds and hand the work here, to one of two lanes:

- `submit`: the heavy lane, for uploads, inspections, questions, the home tab and upkeep. An
  inspection of a large upload can take its worker for a long time.
- `decide`: the decision lane, for what a person clicked and waits to see: approve, retry,
  reject, an edited mapping, a clarification's answer, a refusal, a modal's content. Its own
  workers, so four uploads being inspected in other channels never queue a click behind them.

Both lanes are threads of one interpreter: while inspections compute, a decision (mostly
waiting on the database and Slack) takes the interpreter back after each wait. The bot's
interpreter hands it over every `SWITCH_INTERVAL` (1 ms, not Python's 5 ms), which took a
click's decision under four wide inspections from about 0.7 s to about 0.2 s
(scripts/click_latency.py).

Work on one investigation (uploads, questions, an approval's reconciliation) is serialised in
this process by its thread's lock, whichever lane it runs on, so two turns of the agent on one
case never interleave.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

logger = logging.getLogger(__name__)

# Workers of the decision lane: threads start only when clicks need them, and a decision can
# hold one a while (the winner of an approval reconciles; an edit runs the agent's turn).
DECISION_WORKERS = 16
# Seconds a thread computing holds the interpreter while another waits for it (see above).
SWITCH_INTERVAL = 0.001


class BotWork:
    """Runs work off the request thread on two lanes; failures are logged, never lost silently."""

    def __init__(self, workers: int, decision_workers: int = DECISION_WORKERS) -> None:
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reconbot-work")
        self.decisions = ThreadPoolExecutor(
            max_workers=decision_workers, thread_name_prefix="reconbot-decide"
        )
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        # For the whole process: the bot's lanes are what it runs.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))

    def submit(self, work: Callable[..., None], *args: Any) -> Future[None]:
        """Run `work(*args)` on the heavy lane (uploads, inspections, questions, upkeep)."""
        return self.executor.submit(_logged, work, args)

    def decide(self, work: Callable[..., None], *args: Any) -> Future[None]:
        """Run `work(*args)` on the decision lane (what a click decides and its clicker awaits)."""
        return self.decisions.submit(_logged, work, args)

    def lock(self, channel: str | None, thread_ts: str | None) -> threading.Lock:
        """The lock of one Slack thread: every kind of work on a case takes the same one,
        whether or not the investigation exists yet."""
        with self._locks_guard:
            return self._locks.setdefault(f"{channel}:{thread_ts}", threading.Lock())

    @contextmanager
    def serialised(self, channel: str | None, thread_ts: str | None) -> Iterator[None]:
        """Hold the thread's lock while the block runs."""
        with self.lock(channel, thread_ts):
            yield

    def close(self) -> None:
        """Finish the work already started on both lanes."""
        self.decisions.shutdown(wait=True)
        self.executor.shutdown(wait=True)


def _logged(work: Callable[..., None], args: tuple[Any, ...]) -> None:
    try:
        work(*args)
    except Exception:
        logger.exception("work=%s | background work failed", work.__name__)
