"""The stand-in: a stateful Slack workspace served over real HTTP on a loopback address.

It answers the Web API methods reconbot calls, hosts files behind a bearer-token check, takes
uploads and response-URL posts, returns 429s on demand, and signs and delivers events, block
actions, view submissions and slash commands to an app's request URL exactly as Slack does.
"""

from __future__ import annotations

import logging
from http.server import ThreadingHTTPServer
from typing import Any

from workspace.slack.calls import ApiError, Call
from workspace.slack.http import handler_for
from workspace.slack.people import People
from workspace.slack.signing import Delivery, form_body, sign
from workspace.slack.web_api import METHODS

logger = logging.getLogger(__name__)

SIGN_IN_PAGE = b"<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"
STALL_SECONDS = 60


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # a burst of bot calls is queued, not reset


class SlackStandIn(People):
    """A running stand-in workspace: start it, point the app at it, then act as people do.

    It listens on `host` (a loopback address) and `port` (0: any free port)."""

    def __init__(
        self,
        *,
        # The stand-in's own made-up credentials (the local workspace draws random ones).
        bot_token: str = "xoxb-standin-token",  # noqa: S107
        signing_secret: str = "standin-signing-secret",  # noqa: S107
        app_token: str = "xapp-standin-app-token",  # noqa: S107
        echo_bot_messages: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(
            bot_token=bot_token,
            signing_secret=signing_secret,
            app_token=app_token,
            echo_bot_messages=echo_bot_messages,
        )
        self._server = _Server((host, port), handler_for(self))
        self._server.daemon_threads = True

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
            logger.info("method=%s error=%s | Web API call refused", method, error.error)
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
        target = self.response_target(key)
        if target is None:
            return 404
        with self.workspace.condition:
            self.workspace.responses.append({**target, **body, "ts": self.workspace.new_ts()})
            self.workspace.condition.notify_all()
        return 200


__all__ = ["Delivery", "SlackStandIn", "form_body", "sign"]
