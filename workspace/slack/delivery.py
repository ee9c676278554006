"""The stand-in's side of the app's connection: where it serves, and the deliveries (events,
interactions, commands) it signs and sends to the app's request URL, or over the app's Socket
Mode connection when it opened one. `people.py` builds on this with what people do, and
`server.py` with the Web API it answers.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import queue
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from typing import Any, Self

from workspace.slack.http import PageRoute
from workspace.slack.signing import Delivery, form_body, sign
from workspace.slack.socket_mode import SocketModeLink
from workspace.slack.workspace import APP_ID, BOT_ID, BOT_USER, TEAM_ID, Message, Workspace

DELIVERY_TIMEOUT_SECONDS = 10


class Deliveries:
    """A workspace that serves over HTTP on a loopback address and delivers to one app."""

    _server: ThreadingHTTPServer

    def __init__(
        self,
        *,
        bot_token: str,
        signing_secret: str,
        app_token: str,
        echo_bot_messages: bool,
    ) -> None:
        self.workspace = Workspace(bot_token=bot_token, signing_secret=signing_secret)
        self.app_token = app_token
        self._links: list[SocketModeLink] = []
        self.app_url: str | None = None
        # Several web processes behind a balancer: deliveries go to each in turn.
        self.app_urls: list[str] = []
        self._turn = itertools.count()
        self.echo_bot_messages = echo_bot_messages
        self._threads: list[threading.Thread] = []
        self._echoes: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._response_urls: dict[str, dict[str, Any]] = {}
        self.release_downloads = threading.Event()
        # Other pages served on the same address (the local workspace's web page).
        self.pages: PageRoute | None = None

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The root of everything the stand-in serves, ending in `/`."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/"

    @property
    def api_url(self) -> str:
        """The Web API base URL an app is configured with (SLACK_API_URL)."""
        return self.base_url + "api/"

    def start(self) -> Self:
        """Serve in background threads."""
        for target in (self._server.serve_forever, self._deliver_echoes):
            thread = threading.Thread(target=target, daemon=True, name="slack-standin")
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._echoes.put(None)
        self._server.shutdown()
        self._server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- deliveries -----------------------------------------------------------------------

    def interaction(self, kind: str, user: str) -> dict[str, Any]:
        """The fields every interaction payload has: who, which app, a fresh trigger id."""
        return {
            "type": kind,
            "team": {"id": TEAM_ID, "domain": "standin"},
            "user": {
                "id": user,
                "username": self.workspace.users.get(user, user),
                "team_id": TEAM_ID,
            },
            "api_app_id": APP_ID,
            "token": "verification-token-unused",
            "trigger_id": self.workspace.new_trigger(user),
        }

    def envelope(self, event: dict[str, Any]) -> dict[str, Any]:
        """The Events API envelope of `event`, with a fresh event id."""
        return {
            "token": "verification-token-unused",
            "team_id": TEAM_ID,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": self.workspace.new_id("Ev"),
            "event_time": int(time.time()),
            "authorizations": [
                {"team_id": TEAM_ID, "user_id": BOT_USER, "is_bot": True, "enterprise_id": None}
            ],
        }

    def deliver_event(self, event: dict[str, Any]) -> Delivery:
        """Deliver one event in its envelope."""
        return self.deliver_envelope(self.envelope(event))

    def deliver_envelope(self, envelope: dict[str, Any], *, retry: int = 0) -> Delivery:
        """Deliver an envelope; `retry` > 0 adds Slack's retry headers, as a redelivery."""
        link = self.socket_link()
        if link is not None:
            return self._over_socket(link, "events_api", envelope)
        headers = {}
        if retry:
            headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        return self.deliver(json.dumps(envelope).encode(), "application/json", headers=headers)

    def deliver_interaction(self, payload: dict[str, Any]) -> Delivery:
        """Deliver a block action or view submission as Slack's form-encoded `payload`."""
        link = self.socket_link()
        if link is not None:
            return self._over_socket(link, "interactive", payload)
        return self.deliver(form_body(payload), "application/x-www-form-urlencoded")

    def deliver(
        self,
        body: bytes,
        content_type: str,
        *,
        headers: dict[str, str] | None = None,
        timestamp: int | None = None,
        signature: str | None = None,
    ) -> Delivery:
        """POST a signed request to the app (or a forged one, with `signature`/`timestamp`)."""
        url = self.app_urls[next(self._turn) % len(self.app_urls)] if self.app_urls else None
        url = url or self.app_url
        if url is None:
            raise RuntimeError("set app_url to the app's /slack/events first")
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        # The app's request URL, as its owner set it (http on loopback, in tests and locally).
        request = urllib.request.Request(  # noqa: S310
            url,
            data=body,
            method="POST",
            headers={
                "Content-Type": content_type,
                "X-Slack-Request-Timestamp": stamp,
                "X-Slack-Signature": signature or sign(self.workspace.signing_secret, stamp, body),
                "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
                **(headers or {}),
            },
        )
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=DELIVERY_TIMEOUT_SECONDS) as answer:  # noqa: S310
                status, content = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, content = error.code, error.read()
        return Delivery(status, content, time.perf_counter() - started)

    # -- Socket Mode ----------------------------------------------------------------------

    def socket_link(self) -> SocketModeLink | None:
        """The app's live Socket Mode connection, if it opened one."""
        live = [link for link in self._links if not link.closed.is_set()]
        return live[-1] if live else None

    def _over_socket(self, link: SocketModeLink, kind: str, payload: dict[str, Any]) -> Delivery:
        ack, seconds = link.deliver(kind, payload, self.workspace.new_id("E"))
        if ack is None:
            return Delivery(504, b"", seconds)
        answer = ack.get("payload")
        return Delivery(200, json.dumps(answer).encode() if answer else b"", seconds)

    def connections_open(self, token: str | None) -> dict[str, Any]:
        """apps.connections.open: a WebSocket URL for an app-level token."""
        if token != self.app_token:
            return {"ok": False, "error": "invalid_auth"}
        return {"ok": True, "url": self.base_url.replace("http://", "ws://") + "link/?ticket=1"}

    def accept_socket(self, sock: socket.socket) -> None:
        """Serve one Socket Mode connection until the app closes it."""
        link = SocketModeLink(sock)
        self._links.append(link)
        link.send_text(
            {
                "type": "hello",
                "num_connections": len(self._links),
                "connection_info": {"app_id": APP_ID},
                "debug_info": {"host": "standin", "approximate_connection_time": 3600},
            }
        )
        link.serve()

    # -- response URLs and echoes ---------------------------------------------------------

    def response_url(self, channel: str, user: str) -> str:
        """A fresh response URL for an action or a command of `user` in `channel`."""
        key = self.workspace.new_id("R")
        self._response_urls[key] = {"channel": channel, "user": user}
        return f"{self.base_url}response/{key}"

    def response_target(self, key: str) -> dict[str, Any] | None:
        """Where a post to the response URL `key` goes (None for a URL never issued)."""
        return self._response_urls.get(key)

    def _deliver_echoes(self) -> None:
        while True:
            event = self._echoes.get()
            if event is None:
                return
            if self.app_url is not None or self.socket_link() is not None:
                # The app may be restarting; Slack would give up on the delivery too.
                with contextlib.suppress(OSError):
                    self.deliver_event(event)

    def echo(self, message: Message) -> None:
        """Queue the `message` event Slack sends the bot about its own message."""
        if not self.echo_bot_messages:
            return
        event = {
            "type": "message",
            "channel": message.channel,
            "user": BOT_USER,
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "text": message.text,
            "ts": message.ts,
            "event_ts": message.ts,
            "channel_type": "channel",
        }
        if message.thread_ts:
            event["thread_ts"] = message.thread_ts
        self._echoes.put(event)
