"""The Converse API stand-in: a scripted model behind Bedrock's real HTTP protocol.

Each request to `/model/{modelId}/converse` or `/model/{modelId}/converse-stream` takes the
next entry of the script: a `Reply` (content blocks and a stop reason), a `Fault` (an AWS error
such as throttling), a `Stall` (no answer for a while, to trip the client's read timeout), or a
callable that builds one of those from the request. Every request is recorded as received.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.standins.bedrock import eventstream

STREAM_TYPE = "application/vnd.amazon.eventstream"


@dataclass(frozen=True)
class Reply:
    """An assistant message: content blocks (`{"text": …}`, `{"toolUse": …}`) and why it stops."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"


@dataclass(frozen=True)
class Fault:
    """An AWS error answer: HTTP status, error type (`ThrottlingException`…), message."""

    status: int = 429
    error_type: str = "ThrottlingException"
    message: str = "Too many requests, please wait before trying again."


@dataclass(frozen=True)
class Stall:
    """Answer nothing for `seconds` (the client's read timeout should fire first)."""

    seconds: float


Entry = Reply | Fault | Stall | Callable[[dict[str, Any]], "Reply | Fault | Stall"]

_ids = itertools.count(1)


def tool_call(name: str, tool_input: Any = None, *, tool_use_id: str | None = None) -> Reply:
    """A reply that calls one tool (input may be anything, to script malformed calls)."""
    return Reply(
        [
            {
                "toolUse": {
                    "toolUseId": tool_use_id or f"tooluse_{next(_ids):06d}",
                    "name": name,
                    "input": {} if tool_input is None else tool_input,
                }
            }
        ],
        "tool_use",
    )


def text(words: str) -> Reply:
    """A reply that only says something and ends the turn."""
    return Reply([{"text": words}], "end_turn")


@dataclass
class Received:
    """One request as Bedrock received it."""

    operation: str  # "converse" or "converse-stream"
    model_id: str
    body: dict[str, Any]
    authorization: str

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation sent."""
        return list(self.body.get("messages", []))

    def tool_results(self) -> list[dict[str, Any]]:
        """Every toolResult block of the conversation, oldest first."""
        return [
            block["toolResult"]
            for message in self.messages
            for block in message.get("content", [])
            if "toolResult" in block
        ]


@dataclass
class BedrockStandIn:
    """A running Converse API stand-in; `script` is consumed one entry per request."""

    script: list[Entry] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    exhausted: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The endpoint URL (RECONBOT_BEDROCK_ENDPOINT_URL)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> BedrockStandIn:
        """Serve in the background."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> BedrockStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add(self, *entries: Entry) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script.extend(entries)

    def next_entry(self, request: Received) -> Reply | Fault | Stall:
        """Record a request and take the script's next entry for it."""
        with self._lock:
            self.received.append(request)
            if not self.script:
                self.exhausted += 1
                return text("(the stand-in's script has no more replies)")
            entry = self.script.pop(0)
        return entry(request.body) if callable(entry) else entry


def _usage() -> dict[str, Any]:
    return {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120}


def _converse_body(reply: Reply) -> bytes:
    return json.dumps(
        {
            "output": {"message": {"role": "assistant", "content": reply.content}},
            "stopReason": reply.stop_reason,
            "usage": _usage(),
            "metrics": {"latencyMs": 12},
        }
    ).encode()


def _stream_body(reply: Reply) -> bytes:
    events = [eventstream.event("messageStart", {"role": "assistant"})]
    for index, block in enumerate(reply.content):
        if "toolUse" in block:
            use = block["toolUse"]
            raw = use["input"] if isinstance(use["input"], str) else json.dumps(use["input"])
            events.append(
                eventstream.event(
                    "contentBlockStart",
                    {
                        "contentBlockIndex": index,
                        "start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}},
                    },
                )
            )
            events.append(
                eventstream.event(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"toolUse": {"input": raw}}},
                )
            )
        else:
            events.append(
                eventstream.event(
                    "contentBlockDelta",
                    {"contentBlockIndex": index, "delta": {"text": block["text"]}},
                )
            )
        events.append(eventstream.event("contentBlockStop", {"contentBlockIndex": index}))
    events.append(eventstream.event("messageStop", {"stopReason": reply.stop_reason}))
    events.append(eventstream.event("metadata", {"usage": _usage(), "metrics": {"latencyMs": 12}}))
    return b"".join(events)


def _handler_for(standin: BedrockStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, content_type: str, body: bytes, **headers: str) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("x-amzn-RequestId", f"standin-{next(_ids)}")
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a read timeout)

        def do_POST(self) -> None:
            parts = urllib.parse.unquote(self.path).strip("/").split("/")
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if (
                len(parts) != 3
                or parts[0] != "model"
                or parts[2]
                not in (
                    "converse",
                    "converse-stream",
                )
            ):
                self._send(404, "application/json", b'{"message":"unknown operation"}')
                return
            received = Received(parts[2], parts[1], body, self.headers.get("Authorization", ""))
            entry = standin.next_entry(received)
            while isinstance(entry, Stall):
                time.sleep(entry.seconds)
                return  # the connection closes without an answer
            if isinstance(entry, Fault):
                self._send(
                    entry.status,
                    "application/json",
                    json.dumps({"message": entry.message}).encode(),
                    **{"x-amzn-ErrorType": f"{entry.error_type}:http://internal.amazon.com/"},
                )
                return
            if received.operation == "converse":
                self._send(200, "application/json", _converse_body(entry))
            else:
                self._send(200, STREAM_TYPE, _stream_body(entry))

    return Handler
