"""The HTTP side of the stand-in: one request handler for the Web API (`/api/…`), private
files (`/files-pri/…`), upload URLs (`/upload/…`), response URLs (`/response/…`), the Socket
Mode WebSocket (`/link`), and, when set, other pages served on the same address.
"""

from __future__ import annotations

import json
import socket
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from workspace.slack.socket_mode import accept_key


@dataclass(frozen=True)
class PageRequest:
    """A request for a page the Slack side does not answer."""

    verb: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class PageAnswer:
    """What a page answers: status, content type, bytes and extra headers."""

    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


PageRoute = Callable[[PageRequest], PageAnswer | None]


class Serving(Protocol):
    """What the handler needs of the stand-in."""

    pages: PageRoute | None

    def handle_api(
        self, method: str, token: str | None, args: dict[str, Any]
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Answer one Web API call: (status, headers, JSON body)."""
        ...

    def handle_download(self, file_id: str, token: str | None) -> tuple[int, str, bytes]:
        """Serve a private file: (status, content type, bytes)."""
        ...

    def handle_upload(self, file_id: str, data: bytes) -> tuple[int, bytes]:
        """Take the bytes of an upload: (status, answer)."""
        ...

    def handle_response(self, key: str, body: dict[str, Any]) -> int:
        """Take a post to a response URL; returns the status."""
        ...

    def accept_socket(self, sock: socket.socket) -> None:
        """Serve one Socket Mode connection until the app closes it."""
        ...


def handler_for(standin: Serving) -> type[BaseHTTPRequestHandler]:
    """The request handler class of a stand-in's HTTP server."""

    class Handler(BaseHTTPRequestHandler):
        """One request to the stand-in, routed by its path."""

        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Say nothing per request (tests make thousands)."""
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
            """A GET: the Socket Mode upgrade, a file, a page, or an API call."""
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
            """A POST: an API call, an upload, a response URL, or a page's action."""
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
                self._page(verb, url, body)

        def _page(self, verb: str, url: urllib.parse.SplitResult, body: bytes) -> None:
            answer = None
            if standin.pages is not None:
                request = PageRequest(
                    verb=verb,
                    path=url.path,
                    query=dict(urllib.parse.parse_qsl(url.query)),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                answer = standin.pages(request)
            if answer is None:
                self._send(404, "text/plain", b"not found")
            else:
                self._send(answer.status, answer.content_type, answer.body, answer.headers)

    return Handler
