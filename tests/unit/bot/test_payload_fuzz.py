"""Property-based fuzz of what Slack hands the bot: payloads, button values, block ids, forms.

Whatever arrives (nested dicts and lists, strings, numbers, None, huge or deeply nested
strings, unicode digits, lone surrogates, the wrong type anywhere), each parser either returns
a well-typed value or raises `MalformedRequestError`, never anything else. Through the real Bolt
app (its `auth.test` answered by the Slack stand-in), the listeners never raise past their
boundary for such bodies and never start a decision, an upload or a question: the most they do
is refuse the click to the clicker alone.

The examples are derandomized (the same in CI every run), as in tests/unit/data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import fields
from typing import Any, get_type_hints

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from slack_bolt import App, BoltRequest
from slack_sdk import WebClient

from agent.data.schema import READING_OPTIONS
from agent.errors import MalformedRequestError
from bot.slack import blocks
from bot.slack.listeners import actions, events, views
from bot.slack.listeners.deps import ListenerDeps
from bot.slack.listeners.views import edited_fields
from bot.slack.payloads import (
    AnswerBlockId,
    ButtonValue,
    ClarificationAnswer,
    Click,
    ModalMetadata,
    option_lines,
    option_lines_problem,
)
from bot.slack.visibility import visibility_for
from tests.standins.slack import SlackStandIn
from tests.unit.bot.inline_lazy import InlineExecutor, LazyFailures

FUZZ = settings(
    max_examples=300,
    deadline=None,
    database=None,  # no example database written into the working tree
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PAYLOAD_BUGS = (
    "payloads.py and the listeners raise other errors than MalformedRequestError on malformed "
    "input (JSON nested past json's recursion limit or an integer past int()'s 4300 digits, "
    "a unicode digit in a block id, a string where an object belongs, no user): remove this "
    "marker with the fix"
)

# -- what Slack could send (or a tampered request could) ----------------------------------------

VALID_BUTTON = ButtonValue("PAUSE-0123456789", "sha256:" + "d" * 64)
WEIRD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "null",
        "[]",
        "{}",
        "[" * 5000,  # deeper than json's recursion limit
        '{"a":' * 3000,
        "1" * 5000,  # more digits than int() takes from a string
        "x" * 100_000,
        "answer:²:" + VALID_BUTTON.encode(),  # a digit to str.isdigit(), not to int()
        "answer:" + "9" * 5000 + ":" + VALID_BUTTON.encode(),
        "answer:0:" + "[" * 5000,
        "answer:0:",
        "answer::" + VALID_BUTTON.encode(),
        '{"pause_id": 1, "authorization": "x"}',
        '{"pause_id": "p", "authorization": null}',
        '{"pause_id": "p", "authorization": "a", "channel": ["C"], "message_ts": "1"}',
        "\ud800",  # a lone surrogate, as json.loads makes of "\\ud800"
        "NaN",
        "orders.order_id=Total",
        "payments.=",
        "options.orders",
        "\u2028",
        "\x00",
    ]
)
TEXT = st.one_of(st.text(max_size=40), WEIRD_TEXT)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), TEXT)
KEYS = st.one_of(
    st.sampled_from(
        [
            "type",
            "user",
            "id",
            "team",
            "team_id",
            "channel",
            "channel_id",
            "container",
            "message",
            "message_ts",
            "thread_ts",
            "ts",
            "actions",
            "action_id",
            "block_id",
            "value",
            "selected_option",
            "trigger_id",
            "view",
            "state",
            "values",
            "blocks",
            "element",
            "initial_option",
            "private_metadata",
            "pause_id",
            "authorization",
            blocks.COLUMN_INPUT,
            blocks.OPTIONS_INPUT,
            blocks.REASON_BLOCK,
            blocks.REASON_INPUT,
            "options.orders",
            "orders.order_id",
            "input",
        ]
    ),
    st.text(max_size=8),
)
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=6)),
    max_leaves=30,
)


def near(valid: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """`valid` with some of its keys replaced by anything, dropped, or joined by others."""
    return st.builds(
        lambda replaced, dropped, extra: {
            **{k: v for k, v in valid.items() if k not in dropped},
            **replaced,
            **extra,
        },
        st.dictionaries(st.sampled_from(sorted(valid)), JSONISH, max_size=3),
        st.sets(st.sampled_from(sorted(valid)), max_size=2),
        st.dictionaries(KEYS, JSONISH, max_size=2),
    )


ENCODED = st.one_of(
    TEXT,
    JSONISH.map(lambda value: json.dumps(value, ensure_ascii=False)),
    near(
        {"pause_id": "PAUSE-1", "authorization": "sha256:d", "channel": "C1", "message_ts": "1"}
    ).map(json.dumps),
)
ANYTHING = st.one_of(JSONISH, ENCODED)

ACTION = {
    "action_id": "answer:0",
    "block_id": AnswerBlockId(0, VALID_BUTTON).encode(),
    "value": "not a button",
    "selected_option": {"value": "payments.captured_amount=Amount"},
}
FORGED_ACTION = {**ACTION, "block_id": "answer:0:{}", "value": '{"pause_id": "PAUSE-1"}'}
BLOCK_ACTIONS = {
    "type": "block_actions",
    "user": {"id": "U0ALICE", "team_id": "T0STANDIN"},
    "team": {"id": "T0STANDIN"},
    "channel": {"id": "C0FINANCE"},
    "container": {"message_ts": "1.2", "channel_id": "C0FINANCE", "thread_ts": "1.0"},
    "message": {"ts": "1.2", "thread_ts": "1.0"},
    "trigger_id": "1.2.abc",
    "actions": [ACTION],
}
BODIES = st.one_of(
    JSONISH,
    near(BLOCK_ACTIONS),
    near(BLOCK_ACTIONS).flatmap(
        lambda body: near(ACTION).map(lambda action: {**body, "actions": [action]})
    ),
)
INPUT_BLOCKS = [
    {"type": "input", "block_id": "orders.order_id", "element": {"initial_option": {"value": "0"}}},
    {"type": "input", "block_id": "options.orders"},
]
VIEW = {
    "blocks": INPUT_BLOCKS,
    "state": {
        "values": {
            "orders.order_id": {"column": {"selected_option": {"value": "1"}}},
            "options.orders": {"options": {"value": "id_prefix=WC-"}},
            "reason": {"reason_input": {"value": "wrong file"}},
        }
    },
    "private_metadata": "{}",
}
VIEWS = st.one_of(
    JSONISH,
    near(VIEW),
    st.builds(
        lambda blocks_, values: {**VIEW, "blocks": blocks_, "state": {"values": values}},
        st.lists(st.one_of(near(INPUT_BLOCKS[0]), near(INPUT_BLOCKS[1]), JSONISH), max_size=4),
        st.dictionaries(KEYS, JSONISH, max_size=4),
    ),
)


def well_typed(value: Any) -> None:
    """Every field of a parsed dataclass holds what its annotation says."""
    hints = get_type_hints(type(value))
    for field in fields(value):
        got = getattr(value, field.name)
        expected = hints[field.name]
        allowed = getattr(expected, "__args__", (expected,))
        assert isinstance(got, allowed), f"{type(value).__name__}.{field.name} = {got!r}"
        if hasattr(got, "__dataclass_fields__"):
            well_typed(got)


def parsed_or_refused(parse: Any, value: Any) -> Any:
    """`parse(value)`, or None when it raised MalformedRequestError; anything else fails."""
    refused: MalformedRequestError | None = None
    try:
        result = parse(value)
    except MalformedRequestError as error:
        refused, result = error, None
    assert refused is None or "not issued by reconbot" in str(refused)
    return result


# -- the parsers ----------------------------------------------------------------------------------


@FUZZ
@given(value=ANYTHING)
@example(value="[" * 5000)
@example(value="1" * 5000)
def test_a_button_value_is_ours_or_refused(value: Any) -> None:
    button = parsed_or_refused(ButtonValue.decode, value)
    if button is not None:
        well_typed(button)


@FUZZ
@given(value=ANYTHING)
@example(value="[" * 5000)
def test_modal_metadata_is_ours_or_refused(value: Any) -> None:
    metadata = parsed_or_refused(ModalMetadata.decode, value)
    if metadata is not None:
        well_typed(metadata)


@FUZZ
@given(value=ANYTHING)
@example(value="answer:²:" + VALID_BUTTON.encode())
@example(value=7)
def test_an_answer_block_id_is_ours_or_refused(value: Any) -> None:
    block = parsed_or_refused(AnswerBlockId.decode, value)
    if block is not None:
        well_typed(block)
        assert block.number >= 0


@FUZZ
@given(body=BODIES)
@example(body={})
@example(body={**BLOCK_ACTIONS, "channel": "C0FINANCE"})
def test_a_click_is_well_typed_or_refused(body: Any) -> None:
    click = parsed_or_refused(Click.from_body, body)
    if click is not None:
        well_typed(click)


@FUZZ
@given(body=BODIES)
@example(body={**BLOCK_ACTIONS, "actions": [{**ACTION, "selected_option": "x"}]})
def test_a_clarification_answer_is_well_typed_or_refused(body: Any) -> None:
    answer = parsed_or_refused(ClarificationAnswer.from_body, body)
    if answer is not None:
        well_typed(answer)


@FUZZ
@given(view=VIEWS)
@example(view={"blocks": [{"type": "input", "block_id": 5}]})
def test_the_edited_fields_of_a_form_are_strings_or_refused(view: Any) -> None:
    changed = parsed_or_refused(edited_fields, view)
    if changed is not None:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in changed.items())


@FUZZ
@given(text=st.one_of(TEXT, st.lists(TEXT, max_size=6).map("\n".join)))
@example(text="id_prefix=WC-\n\u2028colour=red\x1cstrip")
def test_reading_options_are_read_and_checked_alike(text: str) -> None:
    lines = option_lines(text)
    problem = option_lines_problem(text)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in lines.items())
    assert isinstance(problem, str)
    if not problem:
        assert set(lines) <= set(READING_OPTIONS), "no problem means every option is known"


@FUZZ
@given(
    pause_id=st.text(),
    authorization=st.text(),
    channel=st.text(),
    message_ts=st.text(),
    number=st.integers(min_value=0, max_value=10**6),
)
def test_what_the_bot_issues_reads_back_as_issued(
    pause_id: str, authorization: str, channel: str, message_ts: str, number: int
) -> None:
    button = ButtonValue(pause_id, authorization)
    assert ButtonValue.decode(button.encode()) == button
    assert AnswerBlockId.decode(AnswerBlockId(number, button).encode()) == AnswerBlockId(
        number, button
    )
    metadata = ModalMetadata(pause_id, authorization, channel, message_ts)
    assert ModalMetadata.decode(metadata.encode()) == metadata


# -- through the real Bolt app --------------------------------------------------------------------


class Recorder:
    """Stands for the use cases and the handlers: records every call made on it."""

    def __init__(self, name: str, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self.name = name
        self.calls = calls

    def __getattr__(self, attribute: str) -> Recorder:
        return Recorder(f"{self.name}.{attribute}", self.calls)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append((self.name, args))
        if self.name.startswith("handlers.work.") and args and isinstance(args[0], Recorder):
            self.calls.append((args[0].name, args[1:]))  # work handed to the executor


class Fuzzed:
    """The Bolt app with the bot's listeners, over recorders; errors its listeners raise."""

    def __init__(self, app: App, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self.app = app
        self.calls = calls
        self.errors: list[BaseException] = []

    def dispatch(self, body: dict[str, Any]) -> int:
        self.calls.clear()
        self.errors.clear()
        try:
            request = BoltRequest(body=body, mode="socket_mode")
        except (TypeError, AttributeError, KeyError):
            # Bolt itself cannot read the body (e.g. a `user` that is a boolean): it never
            # reaches a listener (HTTP mode answers 400, test_http_front).
            return 400
        response = self.app.dispatch(request)
        return int(response.status)


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[Fuzzed]:
    with SlackStandIn() as standin:
        client = WebClient(token=standin.workspace.bot_token, base_url=standin.api_url)
        app = App(
            client=client,
            signing_secret=standin.workspace.signing_secret,
            request_verification_enabled=False,
            process_before_response=True,  # listeners run in the dispatching thread
            listener_executor=InlineExecutor(),  # and so do the lazy ones
        )
        calls: list[tuple[str, tuple[Any, ...]]] = []
        service, handlers = Recorder("service", calls), Recorder("handlers", calls)
        deps = ListenerDeps(service, handlers, visibility_for(client))  # type: ignore[arg-type]
        events.register(app, deps)
        actions.register(app, deps)
        views.register(app, deps)
        running = Fuzzed(app, calls)

        @app.error
        def record(error: BaseException) -> None:
            running.errors.append(error)

        LazyFailures(app, running.errors.append)

        yield running


REFUSE = "handlers.messages.refuse"
BOLT_READS = ("user", "team", "channel", "enterprise", "container", "message", "view", "event")
"""Keys Bolt itself reads before any listener runs (it fails on a `user` that is `True`):
Slack always sends objects there, so the fuzz does too; what is inside them is anything."""


def slack_shaped(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in BOLT_READS or isinstance(v, dict)}


ACTION_IDS = st.sampled_from(
    [
        blocks.APPROVE,
        blocks.RETRY,
        blocks.EDIT,
        blocks.REJECT,
        blocks.INVESTIGATE_AGAIN,
        f"{blocks.ANSWER}:0",
        f"{blocks.ANSWER}:99",
    ]
)
INTERACTIONS = st.one_of(
    st.builds(
        lambda body, action_id, action: {
            **slack_shaped(body),
            "type": "block_actions",
            "actions": [{**action, "action_id": action_id}],
        },
        near(BLOCK_ACTIONS),
        ACTION_IDS,
        near(FORGED_ACTION),
    ),
    st.builds(
        lambda body, callback, view: {
            **slack_shaped(body),
            "type": "view_submission",
            # what Bolt itself reads to route a submission is as Slack sends it
            "view": {
                **(view if isinstance(view, dict) else {}),
                "type": "modal",
                "callback_id": callback,
            },
        },
        near({"user": {"id": "U0ALICE"}, "team": {"id": "T0STANDIN"}}),
        st.sampled_from([blocks.EDIT_VIEW, blocks.REJECT_VIEW]),
        VIEWS,
    ),
)


@FUZZ
@given(body=INTERACTIONS)
@example(body={"type": "block_actions", "actions": [{"action_id": blocks.APPROVE}]})
@example(body={"type": "view_submission", "view": {"type": "modal", "callback_id": "reject_view"}})
def test_the_listeners_refuse_what_reconbot_did_not_issue_and_never_raise(
    fuzzed: Fuzzed, body: dict[str, Any]
) -> None:
    fuzzed.dispatch(body)
    assert not fuzzed.errors, f"a listener raised: {fuzzed.errors[0]!r}"
    started = [
        name
        for name, _ in fuzzed.calls
        if name.startswith(("service.", "handlers.jobs.", "handlers.decisions"))
        and name != "handlers.jobs.investigate_again"
    ]
    assert not started, f"a use case or a decision was started: {started}"
    for name, args in fuzzed.calls:
        if name in (REFUSE, "handlers.jobs.investigate_again"):
            for arg in args:
                if isinstance(arg, Click):
                    well_typed(arg)
                elif isinstance(arg, str | None):
                    continue
                else:
                    assert isinstance(arg, MalformedRequestError), (name, arg)


def test_a_click_reconbot_issued_still_reaches_the_decision(fuzzed: Fuzzed) -> None:
    """The fuzz's recorders do see a real decision (the property above is not vacuous)."""
    body = {
        **BLOCK_ACTIONS,
        "actions": [{"action_id": blocks.APPROVE, "value": VALID_BUTTON.encode()}],
    }
    fuzzed.dispatch(body)
    assert not fuzzed.errors
    assert "handlers.jobs.approve" in [name for name, _ in fuzzed.calls]
    answer = {**BLOCK_ACTIONS, "actions": [ACTION]}
    fuzzed.dispatch(answer)
    assert "handlers.jobs.answer" in [name for name, _ in fuzzed.calls]


EVENTS = st.builds(
    lambda kind, event: {
        "type": "event_callback",
        "team_id": "T0STANDIN",
        "event_id": "Ev0FUZZ",
        "event": {**slack_shaped(event), "type": kind},
    },
    st.sampled_from(["message", "app_mention", "app_home_opened", "file_shared"]),
    st.one_of(
        near({"user": "U0ALICE", "channel": "C0FINANCE", "ts": "1.2", "text": "hi"}),
        st.dictionaries(KEYS, JSONISH, max_size=5),
    ),
)


@FUZZ
@given(body=EVENTS)
@example(body={"type": "event_callback", "event": {"type": "app_home_opened"}})
def test_event_listeners_never_raise_on_a_malformed_event(
    fuzzed: Fuzzed, body: dict[str, Any]
) -> None:
    fuzzed.dispatch(body)
    assert not fuzzed.errors, f"a listener raised: {fuzzed.errors[0]!r}"
