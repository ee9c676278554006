"""The stand-in's HTTP side: the Web API, file hosting, uploads and response URLs on 127.0.0.1,
and the deliveries (events, interactions, commands) it signs and sends to the app.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import queue
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.standins.slack.socket_mode import SocketModeLink, accept_key
from tests.standins.slack.web_api import METHODS, ApiError, Call, filetype_of
from tests.standins.slack.workspace import (
    APP_ID,
    BOT_ID,
    BOT_USER,
    TEAM_ID,
    Message,
    StoredFile,
    Workspace,
)

SIGN_IN_PAGE = b"<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"
DELIVERY_TIMEOUT_SECONDS = 10
STALL_SECONDS = 60


@dataclass(frozen=True)
class Delivery:
    """What the app answered to one delivery, and how long it took."""

    status: int
    body: bytes
    seconds: float

    def json(self) -> Any:
        """The answer as JSON (an `ack()` with a body)."""
        return json.loads(self.body) if self.body else None


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # a burst of bot calls is queued, not reset


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's request signature: `v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def form_body(payload: dict[str, Any]) -> bytes:
    """An interaction payload as Slack posts it: form-encoded, in the field `payload`."""
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


class SlackStandIn:
    """A running stand-in workspace: start it, point the app at it, then act as people do."""

    def __init__(
        self,
        *,
        bot_token: str = "xoxb-standin-token",
        signing_secret: str = "standin-signing-secret",
        app_token: str = "xapp-standin-app-token",
        echo_bot_messages: bool = True,
    ) -> None:
        self.workspace = Workspace(bot_token=bot_token, signing_secret=signing_secret)
        self.app_token = app_token
        self._links: list[SocketModeLink] = []
        self.app_url: str | None = None
        # Several web processes behind a balancer: deliveries go to each in turn.
        self.app_urls: list[str] = []
        self._turn = itertools.count()
        self.echo_bot_messages = echo_bot_messages
        self._server = _Server(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._threads: list[threading.Thread] = []
        self._echoes: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._response_urls: dict[str, dict[str, Any]] = {}
        self.release_downloads = threading.Event()

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

    def start(self) -> SlackStandIn:
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

    def __enter__(self) -> SlackStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what people do -------------------------------------------------------------------

    def post_files(
        self,
        user: str,
        channel: str,
        files: list[tuple[str, bytes]],
        *,
        text: str = "",
        thread_ts: str | None = None,
        serve_as: str = "file",
        deliveries: int = 1,
    ) -> Message:
        """Share files in a channel (or a thread), and deliver `message`/`file_share` and
        `file_shared`, as Slack does; `deliveries` > 1 redelivers the same event as Slack's
        retries do (0: none, as when the app was down). Returns the message."""
        workspace = self.workspace
        channel_type = self._speaking_in(user, channel)
        stored = [
            StoredFile(
                id=workspace.new_id("F"),
                name=name,
                filetype=filetype_of(name),
                mimetype="text/csv"
                if name.lower().endswith(".csv")
                else "application/octet-stream",
                content=content,
                user=user,
                created=int(time.time()),
                serve_as=serve_as,
            )
            for name, content in files
        ]
        message = Message(
            channel=channel,
            ts=workspace.new_ts(),
            user=user,
            text=text,
            thread_ts=thread_ts,
            files=stored,
        )
        with workspace.condition:
            for item in stored:
                workspace.files[item.id] = item
            workspace.messages.append(message)
        event: dict[str, Any] = {
            "type": "message",
            "subtype": "file_share",
            "channel": channel,
            "user": user,
            "text": text,
            "ts": message.ts,
            "event_ts": message.ts,
            "channel_type": channel_type,
            "files": [f.info(self.base_url) for f in stored],
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        envelope = self.envelope(event)
        for attempt in range(deliveries):
            self.deliver_envelope(envelope, retry=attempt)
        for item in stored if deliveries else []:
            self.deliver_event(
                {
                    "type": "file_shared",
                    "file_id": item.id,
                    "user_id": user,
                    "file": {"id": item.id},
                    "channel_id": channel,
                    "event_ts": message.ts,
                }
            )
        return message

    def reply(self, user: str, channel: str, thread_ts: str, text: str) -> Message:
        """Reply in a thread; a reply that mentions the bot is also an `app_mention`."""
        channel_type = self._speaking_in(user, channel)
        message = Message(
            channel=channel, ts=self.workspace.new_ts(), user=user, text=text, thread_ts=thread_ts
        )
        with self.workspace.condition:
            self.workspace.messages.append(message)
        event = {
            "type": "message",
            "channel": channel,
            "user": user,
            "text": text,
            "ts": message.ts,
            "thread_ts": thread_ts,
            "event_ts": message.ts,
            "channel_type": channel_type,
        }
        self.deliver_event(event)
        if f"<@{BOT_USER}>" in text:
            self.deliver_event({**event, "type": "app_mention"})
        return message

    def _speaking_in(self, user: str, channel: str) -> str:
        """Check that `user` may post in `channel` (a default channel takes anyone in); returns
        the `channel_type` of its message events."""
        with self.workspace.condition:
            found = self.workspace.channel(channel)
            if found.default:
                found.members.add(user)
            elif user not in found.members:
                raise PermissionError(f"{user} is not in {channel}; only members post there")
            kind = found.kind
        return {"public_channel": "channel", "private_channel": "group"}.get(kind, kind)

    def click(
        self, user: str, message: Message, action_id: str, *, value: str | None = None
    ) -> Delivery:
        """Click a button of a message (optionally with a tampered value)."""
        return self.deliver_interaction(self.click_payload(user, message, action_id, value=value))

    def click_payload(
        self, user: str, message: Message, action_id: str, *, value: str | None = None
    ) -> dict[str, Any]:
        """The interaction payload Slack sends when `user` clicks a button of a message (for
        a caller that sends it itself, e.g. from another process: `form_body`, `sign`)."""
        block, element = message.element(action_id)
        action = {
            "type": element.get("type", "button"),
            "action_id": action_id,
            "block_id": block.get("block_id", ""),
            "value": element.get("value") if value is None else value,
            "action_ts": str(time.time()),
        }
        return self._block_actions(user, message, action)

    def select(self, user: str, message: Message, action_id: str, option_value: str) -> Delivery:
        """Choose an option of a select in a message."""
        block, element = message.element(action_id)
        options = {o["value"]: o for o in element.get("options", [])}
        if option_value not in options:
            raise KeyError(f"{action_id} offers no {option_value!r}; it offers {sorted(options)}")
        action = {
            "type": "static_select",
            "action_id": action_id,
            "block_id": block.get("block_id", ""),
            "selected_option": options[option_value],
            "action_ts": str(time.time()),
        }
        return self.deliver_interaction(self._block_actions(user, message, action))

    def _interaction(self, kind: str, user: str) -> dict[str, Any]:
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

    def _block_actions(self, user: str, message: Message, action: dict[str, Any]) -> dict[str, Any]:
        return {
            **self._interaction("block_actions", user),
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": False,
                "thread_ts": message.thread_ts,
            },
            "channel": {"id": message.channel, "name": message.channel},
            "message": {
                "type": "message",
                "ts": message.ts,
                "text": message.text,
                "blocks": message.blocks,
                "thread_ts": message.thread_ts,
                "bot_id": message.bot_id,
                "user": message.user,
            },
            "response_url": self._response_url(message.channel),
            "actions": [action],
        }

    def submit_view(self, user: str, view_id: str, values: dict[str, dict[str, Any]]) -> Delivery:
        """Submit an open modal with `values[block_id][action_id] = {...}` as Slack sends them."""
        view = self.workspace.views[view_id]
        payload = {
            **self._interaction("view_submission", user),
            "view": {**view, "state": {"values": values}},
        }
        return self.deliver_interaction(payload)

    def command(self, user: str, channel: str, command: str, text: str) -> Delivery:
        """Run a slash command (in a channel the person may or may not be a member of)."""
        self.workspace.channel(channel)
        fields = {
            "token": "verification-token-unused",
            "team_id": TEAM_ID,
            "team_domain": "standin",
            "channel_id": channel,
            "channel_name": channel,
            "user_id": user,
            "user_name": self.workspace.users.get(user, user),
            "command": command,
            "text": text,
            "api_app_id": APP_ID,
            "response_url": self._response_url(channel),
            "trigger_id": self.workspace.new_trigger(user),
        }
        link = self.socket_link()
        if link is not None:
            return self._over_socket(link, "slash_commands", fields)
        return self.deliver(
            urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded"
        )

    def open_home(self, user: str) -> Delivery:
        """Open the app's Home tab."""
        return self.deliver_event(
            {
                "type": "app_home_opened",
                "user": user,
                "channel": "D0HOME",
                "tab": "home",
                "event_ts": self.workspace.new_ts(),
            }
        )

    # -- deliveries -----------------------------------------------------------------------

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
        request = urllib.request.Request(
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
            with urllib.request.urlopen(request, timeout=DELIVERY_TIMEOUT_SECONDS) as answer:
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

    def _response_url(self, channel: str) -> str:
        key = self.workspace.new_id("R")
        self._response_urls[key] = {"channel": channel}
        return f"{self.base_url}response/{key}"

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

    # -- serving --------------------------------------------------------------------------

    def handle_api(
        self, method: str, token: str | None, args: dict[str, Any]
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Answer one Web API call: (status, headers, JSON body)."""
        workspace = self.workspace
        workspace.record_call(method, args)
        if method == "apps.connections.open":
            return 200, {}, self.connections_open(token)
        fault = workspace.take_fault(method)
        if fault is not None:
            headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after else {}
            return fault.status, headers, {"ok": False, "error": fault.error}
        if token != workspace.bot_token:
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        handler = METHODS.get(method)
        if handler is None:
            return 200, {}, {"ok": False, "error": "unknown_method"}
        call = Call(workspace, self.base_url, args)
        try:
            body = {"ok": True, **handler(call)}
        except ApiError as error:
            body = {"ok": False, "error": error.error, **error.fields}
            if error.detail:
                body["response_metadata"] = {"messages": [error.detail]}
        for message in call.echo:
            self.echo(message)
        workspace.changed()
        return 200, {}, body

    def handle_download(self, file_id: str, token: str | None) -> tuple[int, str, bytes]:
        """Serve a private file: its bytes with the bot token, Slack's sign-in page without."""
        stored = self.workspace.files.get(file_id)
        if stored is None:
            return 404, "text/plain", b"not found"
        self.workspace.record_call("download", {"file": file_id})
        if stored.serve_as == "stall":
            # Hold the download until the test releases it (bounded), like a stuck transfer.
            self.release_downloads.wait(timeout=STALL_SECONDS)
        if token != self.workspace.bot_token or stored.serve_as == "signin":
            return 200, "text/html; charset=utf-8", SIGN_IN_PAGE
        return 200, stored.mimetype, stored.content

    def handle_upload(self, file_id: str, data: bytes) -> tuple[int, bytes]:
        """Take the bytes of an upload started with files.getUploadURLExternal."""
        with self.workspace.condition:
            upload = self.workspace.uploads.get(file_id)
            if upload is None:
                return 404, b"unknown upload"
            upload["data"] = data
        return 200, b"OK - " + str(len(data)).encode()

    def handle_response(self, key: str, body: dict[str, Any]) -> int:
        """Take a post to a response URL (a command's or an action's reply)."""
        target = self._response_urls.get(key)
        if target is None:
            return 404
        with self.workspace.condition:
            self.workspace.responses.append({**target, **body})
            self.workspace.condition.notify_all()
        return 200


def _handler_for(standin: SlackStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _token(self) -> str | None:
            header = self.headers.get("Authorization", "")
            return header[7:] if header.startswith("Bearer ") else None

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _send(
            self, status: int, content_type: str, body: bytes, headers: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if (
                self.path.startswith("/link")
                and self.headers.get("Upgrade", "").lower() == "websocket"
            ):
                self.send_response(101, "Switching Protocols")
                self.send_header("Upgrade", "websocket")
                self.send_header("Connection", "Upgrade")
                self.send_header(
                    "Sec-WebSocket-Accept", accept_key(self.headers.get("Sec-WebSocket-Key", ""))
                )
                self.end_headers()
                self.wfile.flush()
                self.close_connection = True
                standin.accept_socket(self.connection)
                return
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def _route(self, verb: str) -> None:
            url = urllib.parse.urlsplit(self.path)
            parts = url.path.strip("/").split("/")
            body = self._body() if verb == "POST" else b""
            if parts[0] == "api" and len(parts) == 2:
                args: dict[str, Any] = dict(urllib.parse.parse_qsl(url.query))
                content_type = self.headers.get("Content-Type", "")
                if body and content_type.startswith("application/json"):
                    args.update(json.loads(body))
                elif body:
                    args.update(urllib.parse.parse_qsl(body.decode()))
                status, headers, answer = standin.handle_api(parts[1], self._token(), args)
                self._send(
                    status, "application/json; charset=utf-8", json.dumps(answer).encode(), headers
                )
            elif parts[0] == "files-pri" and len(parts) >= 3:
                file_id = parts[1].rsplit("-", 1)[-1]
                status, content_type, content = standin.handle_download(file_id, self._token())
                self._send(status, content_type, content)
            elif parts[0] == "upload" and len(parts) == 2 and verb == "POST":
                status, content = standin.handle_upload(parts[1], body)
                self._send(status, "text/plain", content)
            elif parts[0] == "response" and len(parts) == 2 and verb == "POST":
                status = standin.handle_response(parts[1], json.loads(body or b"{}"))
                self._send(status, "application/json", b'{"ok":true}')
            else:
                self._send(404, "text/plain", b"not found")

    return Handler
