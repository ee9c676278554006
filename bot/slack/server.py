"""HTTP mode: one WSGI app serving `/slack/events` (events, interactivity and commands) and
`/healthz`, run by a threaded WSGI server here or by gunicorn in production.

The app refuses what Slack never sends before Bolt dispatches it (Bolt parses a body before it
checks the signature, so this holds for unsigned requests too): a body over MAX_BODY_BYTES gets
413 without being read (judged from `Content-Length`, or, when there is none, by reading at
most one byte past the limit); a body that is not UTF-8, that Bolt cannot parse, or whose JSON
nests deeper than MAX_JSON_DEPTH gets 400. Each refusal is one log line, never the body.
Signature checking stays with Bolt, on the body exactly as received (an interaction's form
is decoded faster than Bolt would, into the same body: `interaction_form`). `reconbot serve`
runs it on `threaded_server`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, BinaryIO
from wsgiref.simple_server import make_server

from slack_bolt import App, BoltResponse
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.adapter.wsgi.http_response import WsgiHttpResponse
from slack_bolt.request import BoltRequest

from bot.slack.answering import ANSWERING
from bot.slack.interaction_form import parsed_request
from bot.slack.threaded_server import REQUEST_TIMEOUT_SECONDS, QuietHandler, ThreadingWSGIServer

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

logger = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
# Slack's payloads are a few kilobytes; a 1 MB cap leaves a wide margin.
MAX_BODY_BYTES = 1 << 20
# Slack's deepest payloads (views with rich text) nest a dozen levels or so.
MAX_JSON_DEPTH = 64
_READ_CHUNK = 64 * 1024


class _RefusedError(Exception):
    """A request answered by the guard, never passed to Bolt."""

    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """Up to `limit` bytes of the stream, read in chunks; fewer at its end."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = stream.read(min(_READ_CHUNK, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _declared_length(environ: WSGIEnvironment) -> int | None:
    """The Content-Length, refused if malformed or over MAX_BODY_BYTES; None if absent."""
    declared = (environ.get("CONTENT_LENGTH") or "").strip()
    if not declared:
        return None
    if not (declared.isascii() and declared.isdigit()):
        raise _RefusedError(HTTPStatus.BAD_REQUEST, "malformed content-length")
    length = int(declared)
    if length > MAX_BODY_BYTES:
        raise _RefusedError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body over the limit")
    return length


def _read_body(environ: WSGIEnvironment) -> bytes:
    """The request body, read only up to MAX_BODY_BYTES (plus one byte to tell it is over)."""
    length = _declared_length(environ)
    stream = environ.get("wsgi.input")
    try:
        if length is not None:
            body = _read_at_most(stream, length) if stream is not None else b""
            if len(body) < length:
                raise _RefusedError(HTTPStatus.BAD_REQUEST, "body shorter than its content-length")
            return body
        if stream is not None and environ.get("wsgi.input_terminated"):
            # The server decoded the framing (chunked): the stream ends with the body.
            body = _read_at_most(stream, MAX_BODY_BYTES + 1)
            if len(body) > MAX_BODY_BYTES:
                raise _RefusedError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body over the limit")
            return body
    except OSError as error:
        raise _RefusedError(
            HTTPStatus.REQUEST_TIMEOUT, f"body not received ({type(error).__name__})"
        ) from None
    if environ.get("HTTP_TRANSFER_ENCODING"):
        # A framing this server does not decode (the threaded server and chunked bodies).
        raise _RefusedError(HTTPStatus.LENGTH_REQUIRED, "body without content-length")
    return b""


def _nesting_depth(value: Any) -> int:
    """How deep lists and dicts nest in a parsed JSON value (without recursion), counted one
    level at a time; past MAX_JSON_DEPTH it stops and says MAX_JSON_DEPTH + 1."""
    depth = 0
    level = [value]
    while depth <= MAX_JSON_DEPTH:
        children: list[Any] = []
        nested = False
        for item in level:
            if isinstance(item, dict):
                children.extend(item.values())
                nested = True
            elif isinstance(item, list):
                children.extend(item)
                nested = True
        if not nested:
            return depth
        depth += 1
        level = children
    return depth


def _bolt_request(environ: WSGIEnvironment, body: bytes) -> BoltRequest:
    """The request as Bolt sees it, refused with 400 if Bolt could not parse it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _RefusedError(HTTPStatus.BAD_REQUEST, "body not UTF-8") from None
    wsgi_request = WsgiHttpRequest(environ)
    try:
        # Building the request is all of Bolt's parsing (JSON, or a form whose `payload`
        # field is JSON, then a look into it for team and user): anything it raises means
        # a body Slack does not send; RecursionError is JSON nested past Python's limit.
        request = parsed_request(text, wsgi_request.query_string, wsgi_request.get_headers())
    except (ValueError, RecursionError, TypeError, AttributeError, LookupError) as error:
        raise _RefusedError(
            HTTPStatus.BAD_REQUEST, f"body not parsed ({type(error).__name__})"
        ) from None
    if _nesting_depth(request.body) > MAX_JSON_DEPTH:
        raise _RefusedError(HTTPStatus.BAD_REQUEST, "JSON nested too deeply")
    return request


def _answer(
    start_response: StartResponse, status: HTTPStatus, payload: dict[str, Any]
) -> list[bytes]:
    body = json.dumps(payload).encode()
    start_response(
        f"{status.value} {status.phrase}",
        [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
    )
    return [body]


def wsgi_app(app: App) -> WSGIApplication:
    """The WSGI application: Bolt on /slack/events, a health check on /healthz."""
    slack = SlackRequestHandler(app, path=EVENTS_PATH)

    def dispatch(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        request = _bolt_request(environ, _read_body(environ))
        answer: BoltResponse = app.dispatch(request)
        response = WsgiHttpResponse(status=answer.status, headers=answer.headers, body=answer.body)
        start_response(response.status, response.get_headers())
        return response.get_body()

    def application(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/healthz":
            return _answer(start_response, HTTPStatus.OK, {"ok": True})
        try:
            if environ.get("REQUEST_METHOD") == "POST" and environ.get("PATH_INFO") == EVENTS_PATH:
                with ANSWERING.answering():
                    return dispatch(environ, start_response)
            _declared_length(environ)
        except _RefusedError as refused:
            logger.info(
                "status=%s client=%s | request refused: %s",
                refused.status.value,
                environ.get("REMOTE_ADDR", "?"),
                refused.reason,
            )
            return _answer(start_response, refused.status, {"error": refused.status.phrase})
        # Anything else (a GET, another path): Bolt answers, without reading a body.
        return slack(environ, start_response)

    return application


class HttpServer:
    """The threaded WSGI server of `reconbot serve`, startable in the background for tests;
    a connection silent for `timeout` seconds is closed."""

    def __init__(
        self,
        application: WSGIApplication,
        *,
        host: str,
        port: int,
        timeout: float = REQUEST_TIMEOUT_SECONDS,
    ) -> None:
        self.server = make_server(
            host, port, application, server_class=ThreadingWSGIServer, handler_class=QuietHandler
        )
        self.server.request_timeout = timeout
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL it listens on."""
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def serve_forever(self) -> None:
        """Serve until shut down."""
        self.server.serve_forever(poll_interval=0.5)

    def start(self) -> HttpServer:
        """Serve on a background thread."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True, name="http")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
