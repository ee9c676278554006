"""The job queue's port: what enqueues a job (`JobQueue`), what runs one (`Runner`), and what a
job knows about its own run. Nothing here knows which jobs there are (the Slack bot's are in
`bot.slack.jobs`) but the periodic upkeep, `SWEEP`, which the PostgreSQL workers schedule."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

SWEEP = "sweep"
"""The periodic upkeep job (expiry, unfinished uploads, stale claims)."""


class Lane(StrEnum):
    """Which workers run a job: `work` for uploads, inspections, questions and upkeep (long),
    `decisions` for what a person clicked and waits to see (its own workers, so a click never
    queues behind four inspections)."""

    WORK = "work"
    DECISIONS = "decisions"


@dataclass(frozen=True)
class Attempt:
    """Which run of a job this is: the first, or a later one after a passing failure (the file
    store was down) or after the process running it stopped. `interrupted`: an earlier run
    started and did not finish (the PostgreSQL queue cannot tell the two causes apart, so
    handlers check what the earlier run left behind). `last` says no retry follows a failure
    of this run, so the person must be told the problem now."""

    number: int = 1
    last: bool = True
    interrupted: bool = False

    @property
    def retried(self) -> bool:
        """Whether an earlier run of this job started and did not finish."""
        return self.number > 1 or self.interrupted


FIRST = Attempt()


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how soon a job that met a passing failure runs again: `attempts` runs in
    all, waiting `base_seconds` * 2**(run - 1) between them, at most `cap_seconds`."""

    attempts: int = 8
    base_seconds: float = 2.0
    cap_seconds: float = 60.0

    def wait(self, number: int) -> float:
        """Seconds to wait after run `number` failed, before the next."""
        return float(min(self.cap_seconds, self.base_seconds * 2 ** (number - 1)))


def thread_lock(channel: str | None, thread_ts: str | None) -> str:
    """The lock of one Slack thread: every job on a case takes it, so two never interleave."""
    return f"thread:{channel}:{thread_ts}"


class JobQueue(Protocol):
    """Enqueue a named job with JSON arguments."""

    def enqueue(
        self,
        name: str,
        args: dict[str, Any],
        *,
        lane: Lane,
        lock: str | None = None,
        once: str | None = None,
    ) -> None:
        """Run job `name` with `args` on `lane`. `lock`: jobs with the same lock run one at a
        time, in order. `once`: while a job with this key waits to run, the same key is not
        enqueued again (a Slack event delivered twice)."""
        ...

    def close(self) -> None:
        """Finish or hand back what this process started; stop."""
        ...


class Runner(Protocol):
    """Runs a job by name (the Slack bot's `JobRunner`, set at composition)."""

    @property
    def names(self) -> list[str]:
        """Every job's name."""
        ...

    def run(self, name: str, args: dict[str, Any], attempt: Attempt) -> None:
        """Run job `name` with `args`; what it raises is for the queue to retry or record."""
        ...
