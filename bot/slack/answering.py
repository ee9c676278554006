"""The Slack requests this process is answering right now, so that the work it runs for
itself lets them go first.

Slack wants an answer within three seconds, and a burst of clicks on one request (fifty people
clicking Approve at once) is answered by fifty threads of one interpreter. The jobs those clicks
enqueue (the refusals, the winner's reconciliation) would otherwise start at once and take the
interpreter from the threads still answering: the embedded job queue hands its jobs to the lanes
only once no request has been answered for QUIET_SECONDS, or when a job has waited its turn
long enough (`bot.jobs.in_process`). This took the 99th percentile of 50 simultaneous clicks'
answers from about 275 ms to about 215 ms on a busy machine (scripts/ack_latency.py, with
timing logs); during the burst the refusals' jobs had taken about half of the interpreter.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

# How long no request must have been answered before background work is handed over.
QUIET_SECONDS = 0.02
# How often a waiting hand-over looks again.
_POLL_SECONDS = 0.005


class Answering:
    """Counts the requests being answered (without a lock: a set's add and discard are atomic
    in CPython, and an answering thread must not queue on a lock behind another)."""

    def __init__(self) -> None:
        self._now: set[object] = set()
        self._last = 0.0  # time.monotonic() when the last answer was given

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Count the request answered in this block."""
        token = object()
        self._now.add(token)
        try:
            yield
        finally:
            self._now.discard(token)
            self._last = time.monotonic()

    def quiet(self) -> bool:
        """Whether no request is being answered, nor was in the last QUIET_SECONDS."""
        return not self._now and time.monotonic() - self._last >= QUIET_SECONDS

    def wait_quiet(self, deadline: float) -> None:
        """Return once `quiet()`, or at `deadline` (a `time.monotonic()` value) at the latest."""
        while not self.quiet():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(_POLL_SECONDS, left))


# The process's requests: the HTTP front counts them, the embedded job queue waits for them.
ANSWERING = Answering()
