"""The bot's own executor for long work, and one lock per Slack thread.

Listeners acknowledge within Slack's three seconds and hand the work here. Work on one
investigation (uploads, questions, an approval's reconciliation) is serialised in this process
by its thread's lock, so two turns of the agent on one case never interleave.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

logger = logging.getLogger(__name__)


class BotWork:
    """Runs work off the request thread; failures are logged, never lost silently."""

    def __init__(self, workers: int) -> None:
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reconbot-work")
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def submit(self, work: Callable[..., None], *args: Any) -> Future[None]:
        """Run `work(*args)` on the executor."""

        def run() -> None:
            try:
                work(*args)
            except Exception:
                logger.exception("work=%s | background work failed", work.__name__)

        return self.executor.submit(run)

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
        """Finish the work already started."""
        self.executor.shutdown(wait=True)
