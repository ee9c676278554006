"""Event listeners: shared files start or extend investigations; replies and mentions ask the
agent; the App Home tab shows recent investigations. Bolt acknowledges an event when its
listener returns (they only enqueue); a reply, which needs a look into the database to tell
whether its thread is an investigation's, is looked at in a lazy listener after the ack.
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt import App, BoltContext

from bot.slack.listeners.deps import ListenerDeps, bound

_MENTION = re.compile(r"<@[A-Z0-9]+>")


def question_text(text: str) -> str:
    """A message's text without mentions of the bot or anyone else."""
    return _MENTION.sub("", text if isinstance(text, str) else "").strip()


def register(app: App, deps: ListenerDeps) -> None:
    """Register the event listeners."""
    app.event({"type": "message", "subtype": "file_share"})(bound(on_file_share, deps))
    app.event("file_shared")(on_file_shared)
    app.event("app_mention")(bound(on_mention, deps))
    app.event("message")(ack=acknowledged, lazy=[bound(on_message, deps)])
    app.event("app_home_opened")(bound(on_home_opened, deps))


def on_file_share(deps: ListenerDeps, event: dict[str, Any], body: dict[str, Any]) -> None:
    """A person's message with files: enqueue the upload, resumable by its event id."""
    if event.get("bot_id"):
        return
    # The workspace travels with the work (an upload resumed after a crash has only this).
    upload = {**event, "team": event.get("team") or body.get("team_id")}
    deps.handlers.jobs.files_shared(upload, body.get("event_id"))


def on_file_shared() -> None:
    """The same upload as the `file_share` message; acknowledged and left to it."""


def on_mention(deps: ListenerDeps, event: dict[str, Any]) -> None:
    """A mention of the bot with a question (not an upload): enqueue the answer."""
    if event.get("bot_id") or event.get("files"):
        return
    deps.handlers.jobs.question(event, question_text(event.get("text", "")))


def acknowledged() -> None:
    """Bolt acknowledges the event; the work is the lazy listener's."""


def on_message(deps: ListenerDeps, event: dict[str, Any], context: BoltContext) -> None:
    """A reply in an investigation's thread (not a mention of the bot, which `on_mention`
    answers): enqueue the answer; a thread that is not an investigation's is left alone."""
    if event.get("subtype") or event.get("bot_id") or not event.get("thread_ts"):
        return
    text = event.get("text", "")
    if context.bot_user_id and f"<@{context.bot_user_id}>" in text:
        return  # the app_mention of the same message answers it
    if not question_text(text):
        return
    if not isinstance(event.get("channel"), str) or not isinstance(event["thread_ts"], str):
        return
    if deps.service.queries.find_by_thread(event["channel"], event["thread_ts"]) is None:
        return  # a thread that is not an investigation's: not ours to answer
    deps.handlers.jobs.question(event, question_text(text))


def on_home_opened(deps: ListenerDeps, event: dict[str, Any]) -> None:
    """The App Home tab opened: enqueue its publishing."""
    if event.get("tab", "home") == "home" and isinstance(event.get("user"), str):
        deps.handlers.jobs.publish_home(event["user"])
