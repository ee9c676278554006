"""Event listeners: shared files start or extend investigations; replies and mentions ask the
agent; the App Home tab shows recent investigations. Bolt acknowledges an event when its
listener returns (they only enqueue); a reply, which needs a look into the database to tell
whether its thread is an investigation's, is looked at in a lazy listener after the ack.
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt import App, BoltContext

from agent.usecases import UseCases
from bot.slack.handlers import Handlers

_MENTION = re.compile(r"<@[A-Z0-9]+>")


def question_text(text: str) -> str:
    """A message's text without mentions of the bot or anyone else."""
    return _MENTION.sub("", text if isinstance(text, str) else "").strip()


def register(app: App, service: UseCases, handlers: Handlers) -> None:
    """Register the event listeners."""

    @app.event({"type": "message", "subtype": "file_share"})
    def on_file_share(event: dict[str, Any], body: dict[str, Any]) -> None:
        if event.get("bot_id"):
            return
        # The workspace travels with the work (an upload resumed after a crash has only this).
        upload = {**event, "team": event.get("team") or body.get("team_id")}
        handlers.jobs.files_shared(upload, body.get("event_id"))

    @app.event("file_shared")
    def on_file_shared() -> None:
        """The same upload as the `file_share` message; acknowledged and left to it."""

    @app.event("app_mention")
    def on_mention(event: dict[str, Any]) -> None:
        if event.get("bot_id") or event.get("files"):
            return
        handlers.jobs.question(event, question_text(event.get("text", "")))

    def acknowledged() -> None:
        """Bolt acknowledges the event; the work is the lazy listener's."""

    def on_message(event: dict[str, Any], context: BoltContext) -> None:
        if event.get("subtype") or event.get("bot_id") or not event.get("thread_ts"):
            return
        text = event.get("text", "")
        if context.bot_user_id and f"<@{context.bot_user_id}>" in text:
            return  # the app_mention of the same message answers it
        if not question_text(text):
            return
        if not isinstance(event.get("channel"), str) or not isinstance(event["thread_ts"], str):
            return
        if service.queries.find_by_thread(event["channel"], event["thread_ts"]) is None:
            return  # a thread that is not an investigation's: not ours to answer
        handlers.jobs.question(event, question_text(text))

    app.event("message")(ack=acknowledged, lazy=[on_message])

    @app.event("app_home_opened")
    def on_home_opened(event: dict[str, Any]) -> None:
        if event.get("tab", "home") == "home" and isinstance(event.get("user"), str):
            handlers.jobs.publish_home(event["user"])
