"""HTTP mode: one WSGI app serving `/slack/events` (events, interactivity and commands) and
`/healthz`, run by a threaded WSGI server here or by gunicorn in production.

The app refuses what Slack never sends before Bolt dispatches it (Bolt parses a body before it
checks the signature, so this holds for unsigned requests too): a body over MAX_BODY_BYTES gets
413 without being read (judged from `Content-Length`, or, when there is none, by reading at
most one byte past the limit); a body that is not UTF-8, that Bolt cannot parse, or whose JSON
nests deeper than MAX_JSON_DEPTH gets 400. Each refusal is one log line, never the body.
Signature checking stays with Bolt. The threaded server closes a connection that stays silent
for `timeout` seconds (a half-open or stalled client), logging one line, not a traceback.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Iterable
from http import HTTPStatus
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any, BinaryIO
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from slack_bolt import App, BoltResponse
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.adapter.wsgi.http_response import WsgiHttpResponse
from slack_bolt.request import BoltRequest

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

logger = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
# Slack's payloads are a few kilobytes; a 1 MB cap leaves a wide margin.
MAX_BODY_BYTES = 1 << 20
# Slack's deepest payloads (views with rich text) nest a dozen levels or so.
MAX_JSON_DEPTH = 64
# How long the threaded server waits on a silent connection before closing it.
REQUEST_TIMEOUT_SECONDS = 10.0
_READ_CHUNK = 64 * 1024
# After answering, how long and how much the threaded server drains of a request it did not
# read (a refused body), so that closing does not reset the connection under the answer.
_LINGER_SECONDS = 2.0
_LINGER_BYTES = 64 * 1024


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    """A WSGI server answering each request on its own thread (Slack expects 3-second acks)."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog is 5: a burst of clicks would be reset, not queued.
    request_queue_size = 256
    # Seconds a connection may stay silent (reading the request or writing the answer).
    request_timeout: float | None = REQUEST_TIMEOUT_SECONDS

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A dropped or timed-out connection is one line in the log, not a traceback."""
        error = sys.exc_info()[1]
        client = client_address[0] if client_address else "?"
        if isinstance(error, OSError):
            logger.info("client=%s error=%s | connection closed", client, type(error).__name__)
            return
        logger.error("client=%s | request failed", client, exc_info=True)

    def shutdown_request(self, request: Any) -> None:
        """Close after a lingering drain: closing with unread request bytes (a refused body)
        would reset the connection and could lose the answer on its way to the client."""
        try:
            request.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        else:
            _drain(request)
        self.close_request(request)


def _drain(connection: socket.socket) -> None:
    deadline = time.monotonic() + _LINGER_SECONDS
    drained = 0
    try:
        while drained < _LINGER_BYTES:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            connection.settimeout(remaining)
            data = connection.recv(_READ_CHUNK)
            if not data:
                return
            drained += len(data)
    except OSError:
        return


class _QuietHandler(WSGIRequestHandler):
    def setup(self) -> None:
        super().setup()
        # Every read and write on the connection gives up after this long.
        self.connection.settimeout(getattr(self.server, "request_timeout", REQUEST_TIMEOUT_SECONDS))

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("request=%s | served", args[0] if args else "")


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
    """How deep lists and dicts nest in a parsed JSON value (without recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


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
        request = BoltRequest(
            body=text, query=wsgi_request.query_string, headers=wsgi_request.get_headers()
        )
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
            host, port, application, server_class=ThreadingWSGIServer, handler_class=_QuietHandler
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
