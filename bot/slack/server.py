"""HTTP mode: one WSGI app serving `/slack/events` (events, interactivity and commands) and
`/healthz`, run by a threaded WSGI server here or by gunicorn in production.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

logger = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    """A WSGI server answering each request on its own thread (Slack expects 3-second acks)."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog is 5: a burst of clicks would be reset, not queued.
    request_queue_size = 256


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("request=%s | served", args[0] if args else "")


def wsgi_app(app: App) -> WSGIApplication:
    """The WSGI application: Bolt on /slack/events, a health check on /healthz."""
    slack = SlackRequestHandler(app, path=EVENTS_PATH)

    def application(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/healthz":
            body = json.dumps({"ok": True}).encode()
            start_response(
                "200 OK",
                [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
            )
            return [body]
        return slack(environ, start_response)

    return application


class HttpServer:
    """The threaded WSGI server of `reconbot serve`, startable in the background for tests."""

    def __init__(self, application: WSGIApplication, *, host: str, port: int) -> None:
        self.server = make_server(
            host, port, application, server_class=ThreadingWSGIServer, handler_class=_QuietHandler
        )
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
