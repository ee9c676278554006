"""The job layer: what a listener enqueues reaches the same handler call with the same values
after a trip through JSON (as it travels through PostgreSQL), on the right lane and under its
thread's lock; the embedded queue retries a passing failure with backoff and only that, holds an
upload's event id while it waits, and stops its pending retries when closed; the PostgreSQL
queue's schedules fire as often as configured, its address keeps its options, and it retries
only passing failures."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, cast

import pytest
from croniter import croniter  # type: ignore[import-untyped]
from procrastinate.jobs import Job
from sqlalchemy.engine import make_url

from agent.data.schema import Role
from agent.errors import StorageUnavailableError
from bot.jobs.in_process import InProcessQueue
from bot.jobs.postgres import _PassingFailures, conninfo, every
from bot.jobs.queue import Attempt, Lane, RetryPolicy, thread_lock
from bot.slack import jobs as catalogue
from bot.slack.handlers import Handlers, job_runner
from bot.slack.jobs import LANES, Enqueue
from bot.slack.payloads import ButtonValue, ClarificationAnswer, Click, ModalMetadata
from bot.slack.work import BotWork

CHANNEL, THREAD = "C0FINANCE", "1700000000.000100"
BUTTON = ButtonValue(pause_id="pause-1", authorization="slack:T1:U0ALICE")
CLICK = Click(
    channel=CHANNEL,
    user="U0ALICE",
    thread_ts=THREAD,
    message_ts="1700000000.000300",
    value=BUTTON.encode(),
    trigger_id="trigger-1",
    team="T1",
)
METADATA = ModalMetadata(
    pause_id="pause-1",
    authorization="slack:T1:U0ALICE",
    channel=CHANNEL,
    message_ts="1700000000.000300",
    thread_ts=THREAD,
    team="T1",
)
UPLOAD = {
    "type": "message",
    "channel": CHANNEL,
    "user": "U0ALICE",
    "ts": THREAD,
    "team": "T1",
    "text": "month-end recon",
    "files": [{"id": "F1", "name": "orders.csv", "filetype": "csv"}],
}
QUESTION = {
    "type": "message",
    "channel": CHANNEL,
    "user": "U0BOB",
    "ts": "1700000000.000900",
    "thread_ts": THREAD,
    "text": "why is order 17 missing?",
}
ANSWER = ClarificationAnswer(BUTTON, Role.PAYMENTS, "amount", "Net Amount")
ATTEMPT = Attempt(number=3, last=False, interrupted=True)
WAIT = 5.0  # seconds any one wait of a test may take before it fails


# -- recording stand-ins -------------------------------------------------------------------


@dataclass(frozen=True)
class Enqueued:
    name: str
    args: dict[str, Any]
    lane: Lane
    lock: str | None
    once: str | None


class RecordingQueue:
    """A `JobQueue` that keeps what was enqueued."""

    def __init__(self) -> None:
        self.jobs: list[Enqueued] = []

    def enqueue(
        self,
        name: str,
        args: dict[str, Any],
        *,
        lane: Lane,
        lock: str | None = None,
        once: str | None = None,
    ) -> None:
        self.jobs.append(Enqueued(name, args, lane, lock, once))

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class Call:
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class RecordingGroup:
    """One group of handlers (`intake`, `decisions`…): any method call is recorded."""

    def __init__(self, group: str, calls: list[Call]) -> None:
        self._group, self._calls = group, calls

    def __getattr__(self, name: str) -> Callable[..., None]:
        def record(*args: Any, **kwargs: Any) -> None:
            self._calls.append(Call(f"{self._group}.{name}", args, kwargs))

        return record


def recording_handlers() -> tuple[Handlers, list[Call]]:
    calls: list[Call] = []
    groups = {g: RecordingGroup(g, calls) for g in ("intake", "decisions", "questions", "upkeep")}
    return cast(Handlers, SimpleNamespace(**groups)), calls


def through_json(args: dict[str, Any]) -> dict[str, Any]:
    """The arguments as a worker reads them back from the queue's JSON column."""
    loaded: dict[str, Any] = json.loads(json.dumps(args))
    return loaded


# -- the catalogue: Enqueue -> JSON -> JobRunner -> the handler ------------------------------


@dataclass(frozen=True)
class Case:
    """One job: how a listener enqueues it and the handler call the worker must make."""

    enqueue: Callable[[Enqueue], None]
    name: str
    lane: Lane
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


CASES = {
    "files_shared": Case(
        lambda jobs: jobs.files_shared(UPLOAD, "Ev01UPLOAD"),
        catalogue.FILES_SHARED,
        Lane.WORK,
        "intake.files_shared",
        (UPLOAD, "Ev01UPLOAD"),
        {"attempt": ATTEMPT},
    ),
    "investigate_again": Case(
        lambda jobs: jobs.investigate_again(CLICK),
        catalogue.INVESTIGATE_AGAIN,
        Lane.WORK,
        "intake.investigate_again",
        (CLICK,),
        {},
    ),
    "question": Case(
        lambda jobs: jobs.question(QUESTION, "why is order 17 missing?"),
        catalogue.QUESTION,
        Lane.WORK,
        "questions.question",
        (QUESTION, "why is order 17 missing?"),
        {},
    ),
    "publish_home": Case(
        lambda jobs: jobs.publish_home("U0ALICE"),
        catalogue.PUBLISH_HOME,
        Lane.WORK,
        "questions.publish_home",
        ("U0ALICE",),
        {},
    ),
    "approve": Case(
        lambda jobs: jobs.approve(CLICK, BUTTON),
        catalogue.APPROVE,
        Lane.DECISIONS,
        "decisions.approve",
        (CLICK, BUTTON),
        {"attempt": ATTEMPT},
    ),
    "answer": Case(
        lambda jobs: jobs.answer(CLICK, ANSWER),
        catalogue.ANSWER,
        Lane.DECISIONS,
        "decisions.answer",
        (CLICK, ANSWER),
        {},
    ),
    "reject": Case(
        lambda jobs: jobs.reject(METADATA, "U0BOB", "the totals are off – see Q3 ✓"),
        catalogue.REJECT,
        Lane.DECISIONS,
        "decisions.reject",
        (METADATA, "U0BOB", "the totals are off – see Q3 ✓"),
        {},
    ),
    "propose_policy": Case(
        lambda jobs: jobs.propose_policy("C0FINANCE", "U0ALICE", {"window_days_after": "7"}),
        catalogue.PROPOSE_POLICY,
        Lane.WORK,
        "decisions.propose_policy",
        ("C0FINANCE", "U0ALICE", {"window_days_after": "7"}, None),
        {},
    ),
    "edit": Case(
        lambda jobs: jobs.edit(METADATA, "U0BOB", {"payments.amount": "Net Amount"}),
        catalogue.EDIT,
        Lane.DECISIONS,
        "decisions.edit",
        (METADATA, "U0BOB", {"payments.amount": "Net Amount"}),
        {},
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_every_job_reaches_its_handler_with_equal_typed_values_after_json(case: Case) -> None:
    queue = RecordingQueue()
    case.enqueue(Enqueue(queue))
    [job] = queue.jobs
    assert job.name == case.name
    assert job.lane is case.lane

    handlers, calls = recording_handlers()
    job_runner(handlers).run(job.name, through_json(job.args), ATTEMPT)

    [call] = calls
    assert call.method == case.method
    assert call.args == case.args
    assert [type(a) for a in call.args] == [type(a) for a in case.args]
    assert call.kwargs == case.kwargs


def test_the_catalogue_covers_every_job_the_listeners_enqueue() -> None:
    handlers, _ = recording_handlers()
    names = job_runner(handlers).names
    assert sorted(names) == sorted(LANES), "every job has a lane and a runner"
    assert sorted(c.name for c in CASES.values()) == sorted(set(names) - {catalogue.SWEEP})


def test_the_sweep_job_sweeps_and_recovers_claims() -> None:
    handlers, calls = recording_handlers()
    job_runner(handlers).run(catalogue.SWEEP, {}, Attempt())
    assert [c.method for c in calls] == ["upkeep.sweep", "upkeep.recover_claims"]
    assert LANES[catalogue.SWEEP] is Lane.WORK


def test_clicks_and_modals_go_on_the_decision_lane_and_long_work_on_the_work_lane() -> None:
    assert {n for n, lane in LANES.items() if lane is Lane.DECISIONS} == {
        catalogue.APPROVE,
        catalogue.ANSWER,
        catalogue.REJECT,
        catalogue.EDIT,
    }


def test_every_job_of_one_thread_carries_the_same_lock_and_another_thread_another() -> None:
    queue = RecordingQueue()
    jobs = Enqueue(queue)
    channel_wide = ("publish_home", "propose_policy")  # a user's tab; a channel's policy
    for name, case in CASES.items():
        if name not in channel_wide:
            case.enqueue(jobs)
    upload_in_thread = {**UPLOAD, "ts": "1700000000.000950", "thread_ts": THREAD}
    jobs.files_shared(upload_in_thread, "Ev02AGAIN")
    locks = {job.lock for job in queue.jobs}
    assert len(queue.jobs) == len(CASES) - 1
    assert locks == {thread_lock(CHANNEL, THREAD)}, queue.jobs

    other = RecordingQueue()
    Enqueue(other).approve(
        Click(CHANNEL, "U0ALICE", "1700000000.777777", "1700000000.777778", BUTTON.encode()),
        BUTTON,
    )
    Enqueue(other).files_shared({**UPLOAD, "channel": "C0OTHER"}, "Ev03OTHER")
    assert all(job.lock not in locks for job in other.jobs)
    assert other.jobs[0].lock != other.jobs[1].lock


def test_an_upload_is_enqueued_once_per_slack_event_and_other_jobs_are_not_deduplicated() -> None:
    queue = RecordingQueue()
    jobs = Enqueue(queue)
    jobs.files_shared(UPLOAD, "Ev01UPLOAD")
    jobs.files_shared(UPLOAD, "Ev02OTHER")
    jobs.files_shared(UPLOAD, None)
    jobs.approve(CLICK, BUTTON)
    jobs.question(QUESTION, "why?")
    onces = [job.once for job in queue.jobs]
    assert onces[0] is not None and "Ev01UPLOAD" in onces[0]
    assert onces[1] is not None and "Ev02OTHER" in onces[1]
    assert onces[0] != onces[1]
    assert onces[2:] == [None, None, None], "a click or question is never dropped as a repeat"


# -- the embedded queue ----------------------------------------------------------------------


@dataclass
class Run:
    name: str
    args: dict[str, Any]
    attempt: Attempt
    at: float


class ScriptedRunner:
    """Runs nothing: records each run, and raises what `fail(run_number)` returns."""

    def __init__(self, fail: Callable[[int], BaseException | None] = lambda _: None) -> None:
        self.runs: list[Run] = []
        self.fail = fail
        self.changed = threading.Condition()
        self.gate: threading.Event | None = None

    def run(self, name: str, args: dict[str, Any], attempt: Attempt) -> None:
        with self.changed:
            self.runs.append(Run(name, args, attempt, time.monotonic()))
            self.changed.notify_all()
        if self.gate is not None:
            self.gate.wait(WAIT)
        error = self.fail(len(self.runs))
        if error is not None:
            raise error

    def wait_for(self, count: int, timeout: float = WAIT) -> list[Run]:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.runs) >= count, timeout), (
                f"{len(self.runs)} run(s), expected {count}"
            )
            return list(self.runs)


@pytest.fixture
def work() -> Iterator[BotWork]:
    lanes = BotWork(workers=1)
    yield lanes
    lanes.close()


def embedded(work: BotWork, runner: ScriptedRunner, policy: RetryPolicy) -> InProcessQueue:
    queue = InProcessQueue(work, policy)
    queue.bind(runner)
    return queue


def store_down(_: int) -> BaseException:
    return StorageUnavailableError("the file store did not answer")


def test_a_passing_failure_is_retried_with_backoff_until_the_last_attempt(work: BotWork) -> None:
    policy = RetryPolicy(attempts=4, base_seconds=0.05, cap_seconds=0.15)
    runner = ScriptedRunner(store_down)
    queue = embedded(work, runner, policy)
    queue.enqueue("files_shared", {"event": UPLOAD}, lane=Lane.WORK)

    runs = runner.wait_for(4)
    time.sleep(policy.wait(4) * 4)
    assert len(runner.runs) == 4, "no run after the last attempt"
    assert [r.attempt.number for r in runs] == [1, 2, 3, 4]
    assert [r.attempt.last for r in runs] == [False, False, False, True]
    assert all(r.args == {"event": UPLOAD} and r.name == "files_shared" for r in runs)
    gaps = [b.at - a.at for a, b in itertools.pairwise(runs)]
    for number, gap in enumerate(gaps, start=1):
        assert gap >= policy.wait(number) * 0.9, (number, gap)
    assert policy.wait(3) == 0.15, "the cap applies"


def test_a_job_that_recovers_runs_no_more(work: BotWork) -> None:
    runner = ScriptedRunner(lambda n: store_down(n) if n == 1 else None)
    queue = embedded(work, runner, RetryPolicy(attempts=5, base_seconds=0.01))
    queue.enqueue("approve", {"x": 1}, lane=Lane.DECISIONS)
    runner.wait_for(2)
    time.sleep(0.2)
    assert [r.attempt for r in runner.runs] == [
        Attempt(number=1, last=False),
        Attempt(number=2, last=False),
    ]


def test_another_failure_is_not_retried(work: BotWork) -> None:
    runner = ScriptedRunner(lambda _: ValueError("a bug"))
    queue = embedded(work, runner, RetryPolicy(attempts=5, base_seconds=0.01))
    queue.enqueue("question", {"text": "why?"}, lane=Lane.WORK)
    runner.wait_for(1)
    time.sleep(0.3)
    assert len(runner.runs) == 1


def test_a_single_attempt_policy_runs_once_as_the_last(work: BotWork) -> None:
    runner = ScriptedRunner(store_down)
    queue = embedded(work, runner, RetryPolicy(attempts=1, base_seconds=0.01))
    queue.enqueue("files_shared", {}, lane=Lane.WORK)
    runner.wait_for(1)
    time.sleep(0.2)
    assert [r.attempt for r in runner.runs] == [Attempt(number=1, last=True)]


def test_a_second_enqueue_of_a_waiting_once_key_is_dropped_and_allowed_after_it_ran(
    work: BotWork,
) -> None:
    runner = ScriptedRunner()
    queue = embedded(work, runner, RetryPolicy(base_seconds=0.01))
    release = threading.Event()
    busy = work.submit(_hold, release)  # the only heavy worker: the job waits behind it
    try:
        queue.enqueue("files_shared", {"n": 1}, lane=Lane.WORK, once="event:Ev1")
        queue.enqueue("files_shared", {"n": 2}, lane=Lane.WORK, once="event:Ev1")
        queue.enqueue("files_shared", {"n": 3}, lane=Lane.WORK, once="event:Ev2")
    finally:
        release.set()
    busy.result(WAIT)
    runner.wait_for(2)
    time.sleep(0.1)
    assert [r.args["n"] for r in runner.runs] == [1, 3]

    queue.enqueue("files_shared", {"n": 4}, lane=Lane.WORK, once="event:Ev1")
    runner.wait_for(3)
    assert runner.runs[2].args == {"n": 4}, "the key is free again once its job ran"


def test_a_once_key_is_free_while_its_job_runs(work: BotWork) -> None:
    """Slack's retry of an event arriving while the first delivery is being worked on is
    enqueued (the handler tells it is answered already); only a waiting duplicate is dropped."""
    runner = ScriptedRunner()
    runner.gate = threading.Event()
    queue = embedded(work, runner, RetryPolicy(base_seconds=0.01))
    queue.enqueue("files_shared", {"n": 1}, lane=Lane.WORK, once="event:Ev1")
    runner.wait_for(1)
    queue.enqueue("files_shared", {"n": 2}, lane=Lane.WORK, once="event:Ev1")
    runner.gate.set()
    runner.wait_for(2)


def test_a_decision_runs_while_the_work_lane_is_busy(work: BotWork) -> None:
    runner = ScriptedRunner()
    queue = embedded(work, runner, RetryPolicy(base_seconds=0.01))
    release = threading.Event()
    busy = work.submit(_hold, release)
    try:
        queue.enqueue("files_shared", {}, lane=Lane.WORK)
        queue.enqueue("approve", {}, lane=Lane.DECISIONS)
        [run] = runner.wait_for(1)
        assert run.name == "approve"
    finally:
        release.set()
    busy.result(WAIT)
    runner.wait_for(2)


def _hold(release: threading.Event) -> None:
    release.wait(WAIT)


def test_close_cancels_the_retries_not_yet_due(
    work: BotWork, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread_errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: thread_errors.append(args.exc_value))
    before = set(threading.enumerate())
    runner = ScriptedRunner(store_down)
    queue = embedded(work, runner, RetryPolicy(attempts=5, base_seconds=WAIT))
    queue.enqueue("files_shared", {}, lane=Lane.WORK)
    runner.wait_for(1)
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline and not _new_timers(before):
        time.sleep(0.01)
    timers = _new_timers(before)
    assert timers, "a retry was scheduled"

    started = time.monotonic()
    queue.close()
    assert time.monotonic() - started < 1, "close() does not wait for a retry not yet due"
    for timer in timers:
        timer.join(1)
        assert not timer.is_alive(), "the pending retry was cancelled"
    assert len(runner.runs) == 1
    assert thread_errors == []


def _new_timers(before: set[threading.Thread]) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if isinstance(t, threading.Timer) and t not in before]


def test_close_finishes_the_job_already_running(work: BotWork) -> None:
    runner = ScriptedRunner()
    runner.gate = threading.Event()
    queue = embedded(work, runner, RetryPolicy(base_seconds=0.01))
    finished = threading.Event()
    original = runner.run

    def run(name: str, args: dict[str, Any], attempt: Attempt) -> None:
        original(name, args, attempt)
        finished.set()

    runner.run = run  # type: ignore[method-assign]
    queue.enqueue("files_shared", {}, lane=Lane.WORK)
    runner.wait_for(1)
    threading.Timer(0.2, runner.gate.set).start()
    queue.close()
    assert finished.is_set()


# -- the PostgreSQL queue's pieces ----------------------------------------------------------


@pytest.mark.parametrize("seconds", [1, 2, 5, 7, 10, 15, 30, 45, 59, 60, 90, 120, 600])
def test_a_schedule_fires_at_most_its_period_apart(seconds: int) -> None:
    line = every(seconds)
    columns = line.split()
    if seconds < 60:
        assert len(columns) == 6, f"sub-minute periods need the seconds column: {line!r}"
    assert croniter.is_valid(line), line
    start = datetime(2024, 1, 1, tzinfo=UTC)
    fires = croniter(line, start)
    times = [fires.get_next(datetime) for _ in range(max(10, min(600, 7200 // seconds)))]
    gaps = {b - a for a, b in itertools.pairwise(times)}
    assert max(gaps) <= timedelta(seconds=seconds), f"{line!r} fires {max(gaps)} apart"
    assert min(gaps) >= timedelta(seconds=seconds) / 2, f"{line!r} fires too often"


def test_conninfo_is_a_libpq_url_keeping_the_options() -> None:
    url = conninfo("postgresql+psycopg://u@h:5/db?options=-csearch_path%3Dx")
    assert url.startswith("postgresql://")
    parsed = make_url(url)
    assert (parsed.drivername, parsed.username, parsed.host, parsed.port, parsed.database) == (
        "postgresql",
        "u",
        "h",
        5,
        "db",
    )
    assert parsed.query == {"options": "-csearch_path=x"}
    assert "options=-csearch_path%3Dx" in url


def test_conninfo_keeps_a_password() -> None:
    url = conninfo("postgresql+psycopg://u:p%40ss@h/db")
    assert make_url(url).password == "p@ss"


def _job(attempts: int) -> Job:
    return Job(
        id=1,
        queue="work",
        lock=None,
        queueing_lock=None,
        task_name="files_shared",
        attempts=attempts,
    )


def test_a_passing_failure_is_retried_on_postgres_with_the_policy_wait() -> None:
    policy = RetryPolicy(attempts=4, base_seconds=2, cap_seconds=5)
    strategy = _PassingFailures(policy)
    for previous in range(policy.attempts - 1):
        before = datetime.now(UTC)
        decision = strategy.get_retry_decision(
            exception=StorageUnavailableError("down"), job=_job(previous)
        )
        assert decision is not None, f"run {previous + 1} is retried"
        assert decision.retry_at is not None
        wait = (decision.retry_at - before).total_seconds()
        assert wait == pytest.approx(policy.wait(previous + 1), abs=0.5)


def test_the_last_attempt_on_postgres_is_not_retried() -> None:
    policy = RetryPolicy(attempts=4, base_seconds=2)
    strategy = _PassingFailures(policy)
    error = StorageUnavailableError("down")
    assert strategy.get_retry_decision(exception=error, job=_job(policy.attempts - 1)) is None
    assert strategy.get_retry_decision(exception=error, job=_job(policy.attempts)) is None


def test_another_failure_on_postgres_is_not_retried() -> None:
    strategy = _PassingFailures(RetryPolicy(attempts=4))
    for error in (ValueError("a bug"), RuntimeError("x"), KeyError("k")):
        assert strategy.get_retry_decision(exception=error, job=_job(0)) is None


class RefusingQueue:
    """A queue whose database is down."""

    def enqueue(self, name: str, args: dict[str, Any], **_: Any) -> None:
        raise OSError("connection refused")

    def close(self) -> None:
        pass


def test_a_click_the_queue_refuses_is_told_in_its_thread_and_an_upload_is_left_to_the_sweep() -> (
    None
):
    told: list[tuple[str, str | None, str]] = []
    jobs = Enqueue(RefusingQueue(), lambda *where: told.append(where))
    jobs.approve(CLICK, BUTTON)
    jobs.files_shared({"channel": CLICK.channel, "ts": "9.0", "files": []}, "Ev0FILES")
    assert told == [(CLICK.channel, CLICK.thread_ts, "enqueue approve")]
