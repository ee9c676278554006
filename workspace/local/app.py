"""The local workspace: the Slack stand-in with a channel, four people, and what its web page
asks of it (share files, click, choose, submit or close a modal, write in a thread, run a
slash command), each turned into the same signed delivery Slack would send the app.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Self, TypeVar

from workspace.local.errors import PageError
from workspace.local.people import CHANNEL, CHANNEL_NAME, PEOPLE, Person
from workspace.local.routes import Pages
from workspace.slack import Message, SlackStandIn
from workspace.slack.blockkit import MAX_BLOCKS_VIEW, validate_blocks
from workspace.slack.calls import ApiError
from workspace.slack.signing import Delivery

logger = logging.getLogger(__name__)

T = TypeVar("T")

DemoFiles = Callable[[], list[tuple[str, bytes]]]
COMMANDS = ("/recon",)
MAX_DRAFT_BYTES = 1 << 30


class LocalWorkspace:
    """A Slack stand-in serving a web page on `host:port`, with fresh random credentials that
    the app is configured with (`bot_token`, `signing_secret`, `api_url`)."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 3000,
        demo: DemoFiles | None = None,
        people: Sequence[Person] = PEOPLE,
    ) -> None:
        self.standin = SlackStandIn(
            bot_token="xoxb-local-" + secrets.token_hex(24),
            signing_secret=secrets.token_hex(32),
            app_token="xapp-local-" + secrets.token_hex(24),
            host=host,
            port=port,
        )
        self.demo = demo
        self.people = tuple(people)
        self.closed_views: set[str] = set()
        self._drafts: dict[str, tuple[str, bytes]] = {}
        self._lock = threading.Lock()
        workspace = self.standin.workspace
        for person in self.people:
            workspace.add_user(person.id, person.name)
        workspace.add_channel(
            CHANNEL, CHANNEL_NAME, members=[p.id for p in self.people], default=True
        )
        self.standin.pages = Pages(self).route

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The page's address, ending in `/`."""
        return self.standin.base_url

    @property
    def bot_token(self) -> str:
        """The bot token the app must use (drawn at random for this run)."""
        return self.standin.workspace.bot_token

    @property
    def signing_secret(self) -> str:
        """The signing secret of the deliveries (drawn at random for this run)."""
        return self.standin.workspace.signing_secret

    @property
    def api_url(self) -> str:
        """The Web API base URL the app is configured with (SLACK_API_URL)."""
        return self.standin.api_url

    def connect(self, events_url: str) -> None:
        """Deliver events and interactions to the app's request URL (its /slack/events)."""
        self.standin.app_url = events_url

    def start(self) -> Self:
        """Serve the Web API and the page in background threads."""
        self.standin.start()
        logger.info("url=%s | local workspace serving", self.url)
        return self

    def stop(self) -> None:
        """Stop serving."""
        self.standin.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what the page does ---------------------------------------------------------------

    def person(self, user: object) -> str:
        """The id of one of the page's people; PageError for anyone else."""
        if not any(p.id == user for p in self.people):
            raise PageError("Choose one of the workspace's people.", 403)
        return str(user)

    def draft(self, name: str, content: bytes) -> str:
        """Keep a file the page uploaded until it is shared; returns its draft id."""
        if not name or "/" in name or "\\" in name or len(name) > 255:
            raise PageError("A file needs a plain name.")
        if len(content) > MAX_DRAFT_BYTES:
            raise PageError("That file is too big for the local workspace.", 413)
        key = secrets.token_hex(8)
        with self._lock:
            self._drafts[key] = (name, content)
        return key

    def share(
        self, user: str, drafts: Sequence[str], *, text: str = "", thread_ts: str | None = None
    ) -> Message:
        """Share uploaded drafts in the channel (or a thread) in one message, as Slack does:
        a `message`/`file_share` event (with `thread_ts` in a thread) and a `file_shared`
        event per file."""
        thread_ts = self.thread(thread_ts)
        with self._lock:
            missing = [d for d in drafts if d not in self._drafts]
            if missing or not drafts:
                raise PageError("Upload the files again: they are no longer here.", 404)
            files = [self._drafts.pop(d) for d in drafts]
        logger.info("user=%s files=%s | files shared", user, len(files))
        said = self.as_typed(text)
        return self._delivered(
            lambda: self.standin.post_files(user, CHANNEL, files, text=said, thread_ts=thread_ts)
        )

    def share_demo(self, user: str) -> Message:
        """Share the demo pair the start command provides."""
        if self.demo is None:
            raise PageError("This workspace has no demo files.", 404)
        files = self.demo()
        logger.info("user=%s files=%s | demo files shared", user, len(files))
        return self._delivered(
            lambda: self.standin.post_files(user, CHANNEL, files, text="Month-end reconciliation")
        )

    def say(self, user: str, text: str, *, thread_ts: str | None = None) -> Message | None:
        """Post what someone wrote (a slash command when it starts with one)."""
        text = text.strip()
        if not text:
            raise PageError("Write something first.")
        if text.startswith("/"):
            command, _, rest = text.partition(" ")
            if command not in COMMANDS:
                raise PageError(f"{command} is not a valid command.")
            logger.info("user=%s command=%s | slash command", user, command)
            self._check(self._delivered(lambda: self.standin.command(user, CHANNEL, command, rest)))
            return None
        said = self.as_typed(text)
        thread_ts = self.thread(thread_ts)
        return self._delivered(lambda: self.standin.say(user, CHANNEL, said, thread_ts=thread_ts))

    def thread(self, thread_ts: str | None) -> str | None:
        """The `thread_ts` of a reply in the thread of message `thread_ts`: its root's ts, as
        Slack's client sends it, whichever message of the thread was named (None: no thread).
        A message that is not in the channel is a PageError, before anything is posted."""
        if not thread_ts:
            return None
        try:
            named = self.standin.workspace.message(CHANNEL, thread_ts)
        except KeyError:
            raise PageError("That thread is gone.", 404) from None
        return named.thread_ts or named.ts

    def as_typed(self, text: str) -> str:
        """What Slack's client sends for typed text: `&`, `<` and `>` as entities, and
        `@Name` of someone in the workspace (or `@reconbot`) as their mention `<@U…>`."""
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        names = {name.lower(): user for user, name in self.standin.workspace.users.items()}
        return re.sub(
            r"(?<![\w@])@([A-Za-z][\w-]*)",
            lambda found: (
                f"<@{names[found.group(1).lower()]}>"
                if found.group(1).lower() in names
                else found.group(0)
            ),
            text,
        )

    def act(self, user: str, request: dict[str, Any]) -> None:
        """A click or a choice on a message (as the page shows it) or an ephemeral message."""
        action = _action(request.get("action"))
        ephemeral = request.get("ephemeral")
        if isinstance(ephemeral, str) and ephemeral:
            shown = self._ephemeral(user, ephemeral)
            payload = self.standin.ephemeral_actions(user, shown, action)
        else:
            try:
                message = self.standin.workspace.message(CHANNEL, str(request.get("ts")))
            except KeyError:
                raise PageError("That message is gone.", 404) from None
            blocks = request.get("blocks")
            seen = message.snapshot()
            if isinstance(blocks, list):
                seen = replace(seen, blocks=blocks)
            payload = self.standin.block_actions(user, seen, action)
        logger.info("user=%s action=%s | action delivered", user, action["action_id"])
        self._check(self._delivered(lambda: self.standin.deliver_interaction(payload)))

    def submit(self, user: str, view_id: str, values: dict[str, Any]) -> dict[str, Any]:
        """Submit a modal; returns the errors the app answered with, per block, and whether
        the modal is closed now (an app may answer with a new view instead)."""
        view = self._open_view(user, view_id)
        delivery = self._delivered(lambda: self.standin.submit_view(user, view_id, values))
        self._check(delivery)
        try:
            answer = delivery.json() or {}
        except ValueError:
            answer = {}
        action = answer.get("response_action") if isinstance(answer, dict) else None
        logger.info("user=%s view=%s answer=%s | view submitted", user, view_id, action)
        if action == "errors":
            errors = answer.get("errors")
            found = {str(k): str(v) for k, v in errors.items()} if isinstance(errors, dict) else {}
            return {"errors": found, "closed": False}
        views = self.standin.workspace.views
        with self.standin.workspace.condition:
            if action in ("update", "push"):
                shown = self._modal(answer.get("view"))
                key = view_id if action == "update" else self.standin.workspace.new_id("V")
                views[key] = {**shown, "id": key, "user": view["user"]}
            elif action == "clear":
                self.closed_views.update(k for k, v in views.items() if v.get("user") == user)
            else:
                self.closed_views.add(view_id)
        self.standin.workspace.changed()
        return {"errors": {}, "closed": action not in ("update", "push")}

    def close(self, user: str, view_id: str) -> None:
        """Cancel a modal (Slack tells the app only when the view asked, `notify_on_close`)."""
        self._open_view(user, view_id)
        with self.standin.workspace.condition:
            self.closed_views.add(view_id)
        self._delivered(lambda: self.standin.close_view(user, view_id))
        self.standin.workspace.changed()

    # -- helpers --------------------------------------------------------------------------

    def _open_view(self, user: str, view_id: str) -> dict[str, Any]:
        view = self.standin.workspace.views.get(view_id)
        if view is None or view.get("user") != user or view_id in self.closed_views:
            raise PageError("That dialog is closed.", 404)
        return view

    def _modal(self, view: object) -> dict[str, Any]:
        if not isinstance(view, dict) or view.get("type") != "modal":
            raise PageError("The app answered with a view that is not a modal.", 502)
        try:
            blocks = validate_blocks(view.get("blocks"), limit=MAX_BLOCKS_VIEW)
        except ApiError as error:
            raise PageError(f"The app answered with a view Slack refuses: {error}", 502) from None
        return {**view, "blocks": blocks}

    def _ephemeral(self, user: str, key: str) -> dict[str, Any]:
        kind, _, number = key.partition(":")
        shown = self.standin.workspace.ephemerals if kind == "e" else []
        index = int(number) if number.isdigit() else -1
        if not 0 <= index < len(shown) or shown[index].get("user") != user:
            raise PageError("That message is gone.", 404)
        return shown[index]

    @staticmethod
    def _delivered(send: Callable[[], T]) -> T:
        """Run a delivery to the app; an app that does not answer is said in words."""
        try:
            return send()
        except (OSError, RuntimeError) as error:
            logger.warning("error=%s | the app did not answer", type(error).__name__)
            raise PageError("reconbot did not answer; is it running?", 502) from None

    @staticmethod
    def _check(delivery: Delivery | None) -> None:
        if delivery is not None and delivery.status != 200:
            logger.warning("status=%s | the app refused a delivery", delivery.status)
            raise PageError(f"reconbot answered {delivery.status}; nothing was done.", 502)


def _action(found: object) -> dict[str, Any]:
    """The action of a block_actions payload, from what the page sent (only Slack's fields)."""
    if not isinstance(found, dict) or not isinstance(found.get("action_id"), str):
        raise PageError("An action needs its action_id.")
    kind = str(found.get("type") or "button")
    action: dict[str, Any] = {
        "type": kind,
        "action_id": found["action_id"],
        "block_id": str(found.get("block_id") or ""),
        "action_ts": f"{time.time():.6f}",
    }
    if kind == "button":
        if found.get("value") is not None:
            action["value"] = str(found["value"])
        if isinstance(found.get("text"), dict):
            action["text"] = found["text"]
        if found.get("style"):
            action["style"] = str(found["style"])
    elif kind == "static_select":
        option = found.get("selected_option")
        if not isinstance(option, dict):
            raise PageError("A choice needs its option.")
        action["selected_option"] = option
    else:
        raise PageError(f"The local workspace does not support {kind} elements.")
    return action
