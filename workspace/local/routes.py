"""The web page's routes on the stand-in's address: the page itself (`/`, `/static/…`), the
state it polls (`GET /local/state`), the files of the channel (`GET /local/files/…`), and the
small JSON endpoints its people act through (`POST /local/…`).

Only the page may act: every POST carries the `X-Reconbot-Local` header (a page of another
site cannot send it without a CORS preflight this server never grants), and a request whose
Host is not this loopback address is refused (DNS rebinding).
"""

from __future__ import annotations

import json
import logging
from importlib import resources
from typing import TYPE_CHECKING, Any

from workspace.local.errors import PageError
from workspace.local.state import snapshot
from workspace.slack.http import PageAnswer, PageRequest

if TYPE_CHECKING:
    from workspace.local.app import LocalWorkspace

logger = logging.getLogger(__name__)

STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "blockkit.js": "text/javascript; charset=utf-8",
    "composer.js": "text/javascript; charset=utf-8",
    "mrkdwn.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
LOCAL_HEADER = "x-reconbot-local"
SAFE = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}


def _json(body: Any, status: int = 200) -> PageAnswer:
    return PageAnswer(status, "application/json; charset=utf-8", json.dumps(body).encode(), SAFE)


def _static(name: str) -> PageAnswer:
    content = resources.files("workspace.local").joinpath("static", name).read_bytes()
    headers = {**SAFE, "Content-Security-Policy": POLICY, "Referrer-Policy": "no-referrer"}
    return PageAnswer(200, STATIC[name], content, headers)


class Pages:
    """Answers the page's requests for one local workspace."""

    def __init__(self, local: LocalWorkspace) -> None:
        self.local = local

    def _hosts(self) -> set[str]:
        port = self.local.url.rstrip("/").rsplit(":", 1)[-1]
        return {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}

    def route(self, request: PageRequest) -> PageAnswer | None:
        """Answer a request of the page, or None for a path that is not the page's."""
        if request.headers.get("host", "") not in self._hosts():
            return PageAnswer(403, "text/plain", b"this page answers on its loopback address only")
        try:
            if request.verb == "GET":
                return self._get(request)
            if request.headers.get(LOCAL_HEADER) != "1":
                raise PageError("Only the local workspace's page may act here.", 403)
            return self._post(request)
        except PageError as error:
            return _json({"ok": False, "error": error.words}, error.status)
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            logger.info("path=%s error=%s | malformed request", request.path, type(error).__name__)
            return _json({"ok": False, "error": "That request was malformed."}, 400)

    def _get(self, request: PageRequest) -> PageAnswer | None:
        path = request.path
        if path in ("/", "/index.html"):
            return _static("index.html")
        if path.startswith("/static/") and path.removeprefix("/static/") in STATIC:
            return _static(path.removeprefix("/static/"))
        if path == "/local/state" and "user" not in request.query:
            people = [{"id": p.id, "name": p.name, "role": p.role} for p in self.local.people]
            return _json({"people": people})
        if path == "/local/state":
            user = self.local.person(request.query.get("user"))
            state = snapshot(self.local, user)
            if request.query.get("since") == state["version"]:
                return _json({"version": state["version"], "unchanged": True})
            return _json(state)
        parts = path.strip("/").split("/")
        if len(parts) == 4 and parts[:2] == ["local", "files"]:
            return self._file(parts[2])
        return None

    def _file(self, file_id: str) -> PageAnswer:
        stored = self.local.standin.workspace.files.get(file_id)
        if stored is None:
            raise PageError("That file is gone.", 404)
        image = stored.mimetype in ("image/png", "image/jpeg", "image/gif")
        quoted = stored.name.replace("\\", "_").replace('"', "_")
        disposition = "inline" if image else f'attachment; filename="{quoted}"'
        content_type = stored.mimetype if image else "application/octet-stream"
        headers = {**SAFE, "Content-Disposition": disposition}
        return PageAnswer(200, content_type, stored.content, headers)

    def _post(self, request: PageRequest) -> PageAnswer | None:
        local, path = self.local, request.path
        if path == "/local/upload":
            key = local.draft(request.query.get("name", ""), request.body)
            return _json({"ok": True, "draft": key})
        body = json.loads(request.body or b"{}")
        if not isinstance(body, dict):
            raise PageError("Send a JSON object.")
        user = local.person(body.get("user"))
        if path == "/local/share":
            drafts = [str(d) for d in body.get("drafts") or []]
            thread = body.get("thread_ts")
            shared = local.share(
                user,
                drafts,
                text=str(body.get("text") or ""),
                thread_ts=str(thread) if thread else None,
            )
            return _json({"ok": True, "ts": shared.ts, "thread_ts": shared.thread_ts})
        if path == "/local/demo":
            return _json({"ok": True, "ts": local.share_demo(user).ts})
        if path == "/local/say":
            thread = body.get("thread_ts")
            said = local.say(user, str(body.get("text") or ""), thread_ts=thread and str(thread))
            return _json({"ok": True, "ts": said.ts if said else None})
        if path == "/local/act":
            local.act(user, body)
            return _json({"ok": True})
        if path == "/local/submit":
            values = body.get("values")
            answer = local.submit(
                user, str(body.get("view_id")), values if isinstance(values, dict) else {}
            )
            return _json({"ok": True, **answer})
        if path == "/local/close":
            local.close(user, str(body.get("view_id")))
            return _json({"ok": True})
        return None
