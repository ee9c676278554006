"""The listeners called directly, as module-level functions, with fakes for what Bolt passes
(`ack`, `body`, `view`, `event`) and for what they reach (`ListenerDeps`): no app, no HTTP."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from agent.domain import RefusalReason
from agent.errors import ApprovalRefusedError
from bot.slack import blocks
from bot.slack.handlers import Handlers
from bot.slack.listeners import actions, events, views
from bot.slack.listeners.deps import ListenerDeps
from bot.slack.payloads import NOT_ISSUED, ButtonValue, Click, ModalMetadata

BUTTON = ButtonValue("PAUSE-0123456789", "sha256:" + "d" * 64)
METADATA = ModalMetadata(BUTTON.pause_id, BUTTON.authorization, "C0FINANCE", "1.2", "1.0", "T0")


class Ack:
    """Stands for Bolt's `ack`: records what each call answered."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **answer: Any) -> None:
        self.calls.append(answer)


class Recorder:
    """Stands for the handlers and the use cases: records each call by its dotted name."""

    def __init__(self, name: str, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self.name, self.calls = name, calls

    def __getattr__(self, attribute: str) -> Recorder:
        return Recorder(f"{self.name}.{attribute}", self.calls)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append((self.name, args))


@pytest.fixture
def calls() -> list[tuple[str, tuple[Any, ...]]]:
    return []


@pytest.fixture
def deps(calls: list[tuple[str, tuple[Any, ...]]]) -> ListenerDeps:
    handlers = cast(Handlers, Recorder("handlers", calls))
    return ListenerDeps(
        service=cast(Any, Recorder("service", calls)),
        handlers=handlers,
        visibility=cast(Any, Recorder("visibility", calls)),
    )


def _click(action_id: str, value: str) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "user": {"id": "U0ALICE", "team_id": "T0"},
        "team": {"id": "T0"},
        "channel": {"id": "C0FINANCE"},
        "container": {"message_ts": "1.2", "channel_id": "C0FINANCE", "thread_ts": "1.0"},
        "message": {"ts": "1.2", "thread_ts": "1.0"},
        "trigger_id": "1.2.abc",
        "actions": [{"action_id": action_id, "value": value}],
    }


# -- an Approve click ---------------------------------------------------------------------------


@pytest.mark.parametrize("action_id", [blocks.APPROVE, blocks.RETRY])
def test_an_approve_or_retry_click_is_acknowledged_and_its_decision_enqueued(
    deps: ListenerDeps, calls: list[tuple[str, tuple[Any, ...]]], action_id: str
) -> None:
    """Retry on a failure message is the same decision as Approve: one listener for both."""
    ack = Ack()
    actions.on_approve(deps, ack, _click(action_id, BUTTON.encode()))
    assert ack.calls == [{}]
    click = Click("C0FINANCE", "U0ALICE", "1.0", "1.2", BUTTON.encode(), "1.2.abc", "T0")
    assert calls == [("handlers.jobs.approve", (click, BUTTON))]


def test_an_approve_click_on_a_button_reconbot_did_not_issue_is_refused_to_the_clicker(
    deps: ListenerDeps, calls: list[tuple[str, tuple[Any, ...]]]
) -> None:
    ack = Ack()
    actions.on_approve(deps, ack, _click(blocks.APPROVE, "not ours"))
    assert ack.calls == [{}]
    [(name, args)] = calls
    assert name == "handlers.work.decide"
    refuse, channel, user, thread_ts, error = args
    assert (refuse.name, channel, user, thread_ts) == (
        "handlers.messages.refuse",
        "C0FINANCE",
        "U0ALICE",
        "1.0",
    )
    assert str(error) == NOT_ISSUED


def test_an_approve_click_without_a_clicker_is_acknowledged_and_nothing_done(
    deps: ListenerDeps, calls: list[tuple[str, tuple[Any, ...]]]
) -> None:
    ack = Ack()
    body = _click(blocks.APPROVE, BUTTON.encode())
    del body["user"]
    actions.on_approve(deps, ack, body)
    assert ack.calls == [{}]
    assert calls == []


class Client:
    """Stands for Bolt's `client`: records the modals opened."""

    def __init__(self) -> None:
        self.opened: list[dict[str, Any]] = []

    def views_open(self, **call: Any) -> dict[str, Any]:
        self.opened.append(call)
        return {"view": {"id": "V0LOADING"}}


def test_a_reject_click_the_guard_refuses_opens_no_modal_and_tells_the_clicker(
    calls: list[tuple[str, tuple[Any, ...]]],
) -> None:
    def decidable(*args: Any) -> None:
        raise ApprovalRefusedError(RefusalReason.EXPIRED, "The request expired.")

    service = SimpleNamespace(decisions=SimpleNamespace(decidable=decidable))
    handlers = cast(Handlers, Recorder("handlers", calls))
    deps = ListenerDeps(cast(Any, service), handlers, cast(Any, None))
    client = Client()
    actions.open_reject_modal(deps, _click(blocks.REJECT, BUTTON.encode()), cast(Any, client))
    assert client.opened == []
    [(name, args)] = calls
    assert (name, args[0].name) == ("handlers.work.decide", "handlers.messages.refuse")
    assert str(args[-1]) == "The request expired."


# -- the Reject modal submitted -------------------------------------------------------------------


def _reject_view(reason: str | None, metadata: str = METADATA.encode()) -> dict[str, Any]:
    value = {} if reason is None else {"value": reason}
    return {
        "type": "modal",
        "callback_id": blocks.REJECT_VIEW,
        "private_metadata": metadata,
        "state": {"values": {blocks.REASON_BLOCK: {blocks.REASON_INPUT: value}}},
    }


def test_a_reject_submission_with_a_reason_is_acknowledged_and_enqueued(
    deps: ListenerDeps, calls: list[tuple[str, tuple[Any, ...]]]
) -> None:
    ack = Ack()
    view = _reject_view("  the totals are off  ")
    views.on_reject(deps, ack, {"user": {"id": "U0BOB"}, "view": view}, view)
    assert ack.calls == [{}]
    assert calls == [("handlers.jobs.reject", (METADATA, "U0BOB", "the totals are off"))]


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_a_reject_submission_without_a_reason_is_answered_in_the_form(
    deps: ListenerDeps, calls: list[tuple[str, tuple[Any, ...]]], reason: str | None
) -> None:
    ack = Ack()
    view = _reject_view(reason)
    views.on_reject(deps, ack, {"user": {"id": "U0BOB"}}, view)
    assert ack.calls == [
        {
            "response_action": "errors",
            "errors": {blocks.REASON_BLOCK: "Say why you reject the request."},
        }
    ]
    assert calls == []


def test_a_reject_submission_of_a_form_reconbot_did_not_issue_is_answered_in_the_form(
    deps: ListenerDeps, calls: list[tuple[str, tuple[Any, ...]]]
) -> None:
    ack = Ack()
    view = _reject_view("wrong files", metadata='{"pause_id": "PAUSE-1"}')
    views.on_reject(deps, ack, {"user": {"id": "U0BOB"}}, view)
    assert ack.calls == [{"response_action": "errors", "errors": {blocks.REASON_BLOCK: NOT_ISSUED}}]
    assert calls == []


# -- a file shared ------------------------------------------------------------------------------

UPLOAD = {
    "type": "message",
    "subtype": "file_share",
    "user": "U0ALICE",
    "channel": "C0FINANCE",
    "ts": "2.0",
    "files": [{"id": "F0ORDERS", "name": "orders.csv"}],
}


def test_a_file_shared_is_enqueued_with_its_workspace_and_event_id(
    deps: ListenerDeps, calls: list[tuple[str, tuple[Any, ...]]]
) -> None:
    body = {"type": "event_callback", "team_id": "T0", "event_id": "Ev0FILES", "event": UPLOAD}
    events.on_file_share(deps, UPLOAD, body)
    assert calls == [("handlers.jobs.files_shared", ({**UPLOAD, "team": "T0"}, "Ev0FILES"))]


def test_a_file_shared_by_a_bot_is_left_alone(
    deps: ListenerDeps, calls: list[tuple[str, tuple[Any, ...]]]
) -> None:
    upload = {**UPLOAD, "bot_id": "B0RECONBOT"}
    events.on_file_share(deps, upload, {"team_id": "T0", "event_id": "Ev0BOT", "event": upload})
    assert calls == []
