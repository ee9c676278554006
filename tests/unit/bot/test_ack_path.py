"""What a click costs before its answer (scripts/ack_latency.py): the form is decoded into the
body Bolt would have built, the embedded queue lets the requests being answered go first (for
a while at most), and the threaded server answers a burst on threads already waiting and closes
an answered connection at once."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_bolt.request import BoltRequest

from bot.jobs.in_process import TURN_SECONDS, InProcessQueue
from bot.jobs.queue import Attempt, Lane
from bot.slack.answering import QUIET_SECONDS, Answering
from bot.slack.interaction_form import parsed_request, unquote_plus
from bot.slack.server import MAX_JSON_DEPTH, HttpServer, _nesting_depth
from bot.slack.threaded_server import ACCEPTING_THREADS
from bot.slack.work import BotWork

FORM = {"content-type": ["application/x-www-form-urlencoded"]}
HEX = "0123456789abcdefABCDEF"

# Text with what form encoding is made of, and what it should not contain.
ENCODED = st.lists(
    st.one_of(
        st.sampled_from(list("azAZ09_.~*-+%=&;/ \t\r\né")),
        st.builds(lambda a, b: f"%{a}{b}", st.sampled_from(HEX), st.sampled_from(HEX)),
        st.builds(lambda a: f"%{a}", st.sampled_from(HEX + "g")),
        st.text(max_size=3),
    ),
    max_size=40,
).map("".join)

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(text=ENCODED)
def test_form_decoding_is_the_standard_library_s(text: str) -> None:
    assert unquote_plus(text) == urllib.parse.unquote_plus(text)


@settings(max_examples=200, deadline=None)
@given(
    payload=st.dictionaries(st.text(max_size=6), JSONISH, max_size=4),
    user=st.dictionaries(st.sampled_from(["id", "team_id"]), st.text(max_size=6)),
    lower=st.booleans(),
    extra=st.lists(st.tuples(st.text(max_size=4), st.text(max_size=4)), max_size=2),
)
def test_an_interaction_is_parsed_as_bolt_parses_it(
    payload: dict[str, Any], user: dict[str, str], lower: bool, extra: list[tuple[str, str]]
) -> None:
    fields = [*extra, ("payload", json.dumps({**payload, "user": user, "type": "block_actions"}))]
    text = urllib.parse.urlencode(fields)
    if lower:  # Slack's escapes are upper case; a client's may not be
        text = text.replace("%7B", "%7b")
    ours, bolts = parsed_request(text, "", FORM), BoltRequest(body=text, query="", headers=FORM)
    assert ours.raw_body == bolts.raw_body == text  # what the signature is checked against
    assert ours.body == bolts.body
    assert dict(ours.context) == dict(bolts.context)
    assert ours.content_type == bolts.content_type


@pytest.mark.parametrize(
    "text",
    [
        "payload=%7B%22type%22%3A+%22block_actions%22%7D&payload=%7B%7D",  # the last one counts
        "payload",  # a field without a value
        "token=x&team_id=T0",  # a slash command: Bolt parses it
        '{"type": "event_callback"}',  # JSON: Bolt parses it
        "payload=%7B%22a%22%3A+%22%E2%82%AC%25zz%22%7D",  # UTF-8 and a stray %
        "",
    ],
)
def test_the_other_bodies_are_parsed_as_bolt_parses_them(text: str) -> None:
    def outcome(parse: Any) -> Any:
        try:
            request = parse(text)
        except ValueError as error:  # refused with 400 either way
            return type(error)
        return request.raw_body, request.body, dict(request.context)

    assert outcome(lambda t: parsed_request(t, "", FORM)) == outcome(
        lambda t: BoltRequest(body=t, query="", headers=FORM)
    )


def _reference_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_reference_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_reference_depth(v) for v in value), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(value=JSONISH)
def test_nesting_depth_counts_lists_and_objects(value: Any) -> None:
    assert _nesting_depth(value) == _reference_depth(value)


def test_nesting_depth_stops_past_the_limit() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert _nesting_depth(deep) == MAX_JSON_DEPTH + 1
    assert _nesting_depth(json.loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)) == MAX_JSON_DEPTH


class Recording:
    def __init__(self) -> None:
        self.runs: list[tuple[str, float]] = []
        self.ran = threading.Event()

    def run(self, name: str, args: dict[str, Any], attempt: Attempt) -> None:
        self.runs.append((name, time.monotonic()))
        self.ran.set()


@pytest.fixture
def answering() -> Answering:
    return Answering()


@pytest.fixture
def queue(answering: Answering) -> Iterator[tuple[InProcessQueue, Recording]]:
    jobs = InProcessQueue(BotWork(workers=1), wait_turn=answering.wait_quiet)
    runner = Recording()
    jobs.bind(runner)
    yield jobs, runner
    jobs.close()


def test_a_job_waits_while_requests_are_answered(
    answering: Answering, queue: tuple[InProcessQueue, Recording]
) -> None:
    jobs, runner = queue
    with answering.answering():
        jobs.enqueue("approve", {}, lane=Lane.DECISIONS)
        assert not runner.ran.wait(TURN_SECONDS / 5)  # enqueued: its turn comes after the answers
        answered = time.monotonic()
    assert runner.ran.wait(5)
    assert runner.runs[0][1] - answered >= QUIET_SECONDS * 0.9


def test_a_job_waits_its_turn_for_a_while_only(
    answering: Answering, queue: tuple[InProcessQueue, Recording]
) -> None:
    jobs, runner = queue
    with answering.answering():  # a request that never ends (a client that went silent)
        enqueued = time.monotonic()
        jobs.enqueue("approve", {}, lane=Lane.DECISIONS)
        assert runner.ran.wait(TURN_SECONDS + 5)
    assert runner.runs[0][1] - enqueued >= TURN_SECONDS * 0.9


def test_closing_runs_what_was_enqueued_and_refuses_the_rest(
    answering: Answering, queue: tuple[InProcessQueue, Recording]
) -> None:
    jobs, runner = queue
    with answering.answering():
        for _ in range(3):
            jobs.enqueue("approve", {}, lane=Lane.DECISIONS)
    jobs.close()
    assert [name for name, _ in runner.runs] == ["approve"] * 3
    with pytest.raises(RuntimeError):
        jobs.enqueue("approve", {}, lane=Lane.DECISIONS)


def _hello(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    environ["wsgi.input"].read(length)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


@pytest.fixture
def server() -> Iterator[HttpServer]:
    running = HttpServer(_hello, host="127.0.0.1", port=0).start()
    yield running
    running.stop()


def _serving() -> int:
    """The threaded server's connection threads alive in this process (not other tests')."""
    return sum(1 for thread in threading.enumerate() if thread.name == "http-conn")


def test_a_burst_is_answered_by_threads_already_waiting(server: HttpServer) -> None:
    deadline = time.monotonic() + 5
    while _serving() < ACCEPTING_THREADS and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _serving() == ACCEPTING_THREADS
    start = threading.Barrier(50)

    def post(_: int) -> int:
        start.wait()
        request = urllib.request.Request(server.url + "/slack/events", data=b"x=1", method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)

    results: list[int] = []
    threads = [threading.Thread(target=lambda n=n: results.append(post(n))) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == [200] * 50
    # No thread was started for the burst (64 wait in accept(); the clients are 50).
    assert _serving() <= ACCEPTING_THREADS


def test_an_answered_connection_is_closed_without_waiting_for_the_client(
    server: HttpServer,
) -> None:
    host, port = server.server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=5) as sock:
        sock.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nx=1")
        started = time.monotonic()
        received = b""
        while chunk := sock.recv(4096):  # the server closes: recv returns b""
            received += chunk
        assert received.startswith(b"HTTP/1.0 200") and received.endswith(b"ok")
        assert time.monotonic() - started < 1.5  # not the 2 s linger of a refused body
