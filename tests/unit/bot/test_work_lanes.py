"""The bot's two lanes of work: a click is decided on its own lane, so uploads being inspected
(the heavy lane, busy or blocked) never hold it up; the listeners put each kind of work on its
lane."""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from slack_bolt import App, BoltRequest
from slack_sdk import WebClient

from agent.errors import ApprovalRefusedError
from bot.jobs.queue import Lane
from bot.slack import blocks
from bot.slack.jobs import Enqueue
from bot.slack.listeners import actions, events, views
from bot.slack.listeners.deps import ListenerDeps
from bot.slack.payloads import AnswerBlockId, ButtonValue, ModalMetadata
from bot.slack.visibility import visibility_for
from bot.slack.work import SWITCH_INTERVAL, BotWork
from tests.standins.slack import SlackStandIn
from tests.unit.bot.inline_lazy import InlineExecutor

SECOND = 1.0


@pytest.fixture
def work() -> Iterator[BotWork]:
    lanes = BotWork(workers=2)
    yield lanes
    lanes.close()


def _block_heavy_lane(work: BotWork, release: threading.Event, workers: int = 2) -> list[Any]:
    """Every heavy worker held until `release`, and more heavy work queued behind them."""
    started = threading.Barrier(workers + 1)

    def inspect_upload() -> None:
        started.wait()
        release.wait()

    held = [work.submit(inspect_upload) for _ in range(workers)]
    started.wait(timeout=5)
    queued = [work.submit(release.wait) for _ in range(3)]
    return held + queued


def test_a_blocked_heavy_lane_does_not_delay_a_decision(work: BotWork) -> None:
    release = threading.Event()
    heavy = _block_heavy_lane(work, release)
    try:
        decided = threading.Event()
        future = work.decide(decided.set)
        future.result(timeout=SECOND)
        assert decided.is_set()
        assert not any(f.done() for f in heavy), "the heavy lane was blocked all along"
    finally:
        release.set()
    for f in heavy:
        f.result(timeout=5)


def test_decisions_waiting_on_a_case_do_not_delay_a_decision_on_another(work: BotWork) -> None:
    """A decision may wait for its thread's lock (an upload of the same case being inspected);
    clicks on other cases are still decided."""
    release = threading.Event()
    lock = work.lock("C1", "1.0")
    lock.acquire()  # the upload of case C1 holds its thread
    try:

        def approve_c1() -> None:
            with work.serialised("C1", "1.0"):
                pass

        waiting = [work.decide(approve_c1) for _ in range(4)]
        _block_heavy_lane(work, release)
        decided = work.decide(lambda: None)
        decided.result(timeout=SECOND)
        assert not any(f.done() for f in waiting)
    finally:
        lock.release()
        release.set()
    for f in waiting:
        f.result(timeout=5)


def test_failures_on_either_lane_are_logged_not_raised(
    work: BotWork, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_upload() -> None:
        raise RuntimeError("upload")

    def broken_decision() -> None:
        raise RuntimeError("decision")

    with caplog.at_level(logging.ERROR, logger="bot.slack.work"):
        assert work.submit(broken_upload).result(timeout=5) is None
        assert work.decide(broken_decision).result(timeout=5) is None
    logged = [r.getMessage() for r in caplog.records]
    assert any("broken_upload" in m for m in logged)
    assert any("broken_decision" in m for m in logged)


def test_close_finishes_the_work_started_on_both_lanes() -> None:
    work = BotWork(workers=1)
    done: list[str] = []
    gate = threading.Event()
    work.submit(lambda: (gate.wait(5), done.append("upload")))
    work.decide(lambda: (gate.wait(5), done.append("decision")))
    gate.set()
    work.close()
    assert sorted(done) == ["decision", "upload"]


# -- which lane the listeners use ---------------------------------------------------------------


class Named:
    """A handler (or the use cases) that records its calls by name."""

    def __init__(self, name: str, calls: list[tuple[str, str]]) -> None:
        self.__name__ = name
        self._calls = calls

    def __getattr__(self, attribute: str) -> Named:
        return Named(f"{self.__name__}.{attribute}", self._calls)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self._calls.append(("called", self.__name__))


class Lanes:
    """Stands for `BotWork`: records which lane each handler was handed to."""

    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self.calls = calls

    def submit(self, work: Named, *args: Any) -> None:
        self.calls.append(("heavy", work.__name__))

    def decide(self, work: Named, *args: Any) -> None:
        self.calls.append(("decision", work.__name__))


class Refusing(Named):
    """The use cases, whose guard refuses any decision modal."""

    def __getattr__(self, attribute: str) -> Named:
        if attribute == "decidable":
            return self._refuse  # type: ignore[return-value]
        return Refusing(f"{self.__name__}.{attribute}", self._calls)

    def _refuse(self, *args: Any) -> None:
        raise ApprovalRefusedError("expired", "The request expired.")


class RecordingQueue:
    """Stands for the job queue: records which lane each job was enqueued on, and its locks."""

    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self.calls = calls
        self.locks: list[tuple[str, str | None, str | None]] = []

    def enqueue(
        self,
        name: str,
        args: dict[str, Any],
        *,
        lane: Lane,
        lock: str | None = None,
        once: str | None = None,
    ) -> None:
        json.dumps(args)  # a job's arguments travel as JSON, to any worker
        self.calls.append(("decision" if lane is Lane.DECISIONS else "heavy", f"job:{name}"))
        self.locks.append((name, lock, once))

    def close(self) -> None:
        pass


class Handlers(Named):
    def __init__(self, calls: list[tuple[str, str]]) -> None:
        super().__init__("handlers", calls)
        self.work = Lanes(calls)
        self.queue = RecordingQueue(calls)
        self.jobs = Enqueue(self.queue)


class Routed:
    def __init__(self, app: App, calls: list[tuple[str, str]], queue: RecordingQueue) -> None:
        self.app = app
        self.calls = calls
        self.queue = queue

    def lanes(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        self.calls.clear()
        response = self.app.dispatch(BoltRequest(body=body, mode="socket_mode"))
        assert response.status == 200, response.body
        return [call for call in self.calls if call[0] != "called"]


@pytest.fixture(scope="module")
def routed() -> Iterator[Routed]:
    with SlackStandIn() as standin:
        client = WebClient(token=standin.workspace.bot_token, base_url=standin.api_url)
        app = App(
            client=client,
            signing_secret=standin.workspace.signing_secret,
            request_verification_enabled=False,
            process_before_response=True,  # listeners run in the dispatching thread
            listener_executor=InlineExecutor(),  # and so do the lazy ones
        )
        calls: list[tuple[str, str]] = []
        handlers = Handlers(calls)
        service = Refusing("service", calls)
        deps = ListenerDeps(service, handlers, visibility_for(client))  # type: ignore[arg-type]
        events.register(app, deps)
        actions.register(app, deps)
        views.register(app, deps)
        yield Routed(app, calls, handlers.queue)


BUTTON = ButtonValue("PAUSE-0123456789", "sha256:" + "d" * 64)
CLICK = {
    "type": "block_actions",
    "user": {"id": "U0ALICE", "team_id": "T0STANDIN"},
    "team": {"id": "T0STANDIN"},
    "channel": {"id": "C0FINANCE"},
    "container": {"message_ts": "1.2", "channel_id": "C0FINANCE", "thread_ts": "1.0"},
    "message": {"ts": "1.2", "thread_ts": "1.0"},
    "trigger_id": "1.2.abc",
}


def _click(action_id: str, value: str = BUTTON.encode(), **extra: Any) -> dict[str, Any]:
    return {**CLICK, "actions": [{"action_id": action_id, "value": value, **extra}]}


def _submitted(callback_id: str, values: dict[str, Any], view_blocks: list[Any]) -> dict:
    metadata = ModalMetadata(BUTTON.pause_id, BUTTON.authorization, "C0FINANCE", "1.2")
    return {
        "type": "view_submission",
        "user": {"id": "U0ALICE", "team_id": "T0STANDIN"},
        "team": {"id": "T0STANDIN"},
        "view": {
            "id": "V0EDIT",
            "type": "modal",
            "callback_id": callback_id,
            "private_metadata": metadata.encode(),
            "blocks": view_blocks,
            "state": {"values": values},
        },
    }


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (_click(blocks.APPROVE), ("decision", "job:approve")),
        (_click(blocks.RETRY), ("decision", "job:approve")),
        (_click(blocks.APPROVE, "not ours"), ("decision", "handlers.messages.refuse")),
        (_click(blocks.REJECT), ("decision", "handlers.messages.refuse")),
        (_click(blocks.EDIT), ("decision", "handlers.messages.refuse")),
        (
            _click(
                f"{blocks.ANSWER}:0",
                block_id=AnswerBlockId(0, BUTTON).encode(),
                selected_option={"value": "payments.captured_amount=Amount"},
            ),
            ("decision", "job:answer"),
        ),
        (
            _submitted(
                blocks.REJECT_VIEW,
                {blocks.REASON_BLOCK: {blocks.REASON_INPUT: {"value": "wrong files"}}},
                [],
            ),
            ("decision", "job:reject"),
        ),
        (
            _submitted(
                blocks.EDIT_VIEW,
                {"orders.order_id": {blocks.COLUMN_INPUT: {"selected_option": {"value": "1"}}}},
                [
                    {
                        "type": "input",
                        "block_id": "orders.order_id",
                        "element": {"initial_option": {"value": "0"}},
                    }
                ],
            ),
            ("decision", "job:edit"),
        ),
        (_click(blocks.INVESTIGATE_AGAIN), ("heavy", "job:investigate_again")),
        (
            {
                "type": "event_callback",
                "team_id": "T0STANDIN",
                "event_id": "Ev0HOME",
                "event": {"type": "app_home_opened", "user": "U0ALICE", "tab": "home"},
            },
            ("heavy", "job:publish_home"),
        ),
        (
            {
                "type": "event_callback",
                "team_id": "T0STANDIN",
                "event_id": "Ev0FILES",
                "event": {
                    "type": "message",
                    "subtype": "file_share",
                    "user": "U0ALICE",
                    "channel": "C0FINANCE",
                    "ts": "2.0",
                    "files": [{"id": "F0ORDERS"}],
                },
            },
            ("heavy", "job:files_shared"),
        ),
        (
            {
                "type": "event_callback",
                "team_id": "T0STANDIN",
                "event_id": "Ev0ASK",
                "event": {
                    "type": "app_mention",
                    "user": "U0ALICE",
                    "channel": "C0FINANCE",
                    "ts": "3.0",
                    "thread_ts": "1.0",
                    "text": "<@U0BOT> how many were unpaid?",
                },
            },
            ("heavy", "job:question"),
        ),
    ],
    ids=[
        "approve",
        "retry",
        "refused click",
        "refused reject modal",
        "refused edit modal",
        "answer",
        "reject submitted",
        "edit submitted",
        "investigate again",
        "home",
        "files",
        "question",
    ],
)
def test_clicks_go_to_the_decision_lane_and_events_to_the_heavy_one(
    routed: Routed, body: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert routed.lanes(body) == [expected]


def test_a_case_s_jobs_share_its_thread_lock_and_an_upload_is_enqueued_once(
    routed: Routed,
) -> None:
    routed.queue.locks.clear()
    routed.lanes(_click(blocks.APPROVE))
    upload = {
        "type": "event_callback",
        "team_id": "T0STANDIN",
        "event_id": "Ev0FILES2",
        "event": {
            "type": "message",
            "subtype": "file_share",
            "user": "U0ALICE",
            "channel": "C0FINANCE",
            "ts": "1.5",
            "thread_ts": "1.0",
            "files": [{"id": "F0ORDERS"}],
        },
    }
    routed.lanes(upload)
    assert routed.queue.locks == [
        ("approve", "thread:C0FINANCE:1.0", None),
        ("files_shared", "thread:C0FINANCE:1.0", "event:Ev0FILES2"),
    ]


def test_the_bot_hands_the_interpreter_over_often_enough_for_decisions(work: BotWork) -> None:
    """Computing threads let a waiting decision run after at most SWITCH_INTERVAL."""
    assert sys.getswitchinterval() <= SWITCH_INTERVAL
