"""The one place the bot posts, edits and reacts to messages in investigation threads, and
uploads files there: rendered messages in, Web API calls out."""

from __future__ import annotations

import logging
from pathlib import Path

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.blocks import ExceptionsFile, Rendered

logger = logging.getLogger(__name__)


class ThreadPoster:
    """Posts and edits the bot's messages through one WebClient (its token, its retries)."""

    def __init__(self, client: WebClient) -> None:
        self.client = client

    def post(self, channel: str, thread_ts: str | None, rendered: Rendered) -> str:
        """Post a message in a thread (or the channel); returns its ts."""
        answer = self.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=rendered.text, blocks=rendered.blocks
        )
        return str(answer["ts"])

    def update(self, channel: str, ts: str, rendered: Rendered) -> None:
        """Replace a message the bot posted."""
        self.client.chat_update(channel=channel, ts=ts, text=rendered.text, blocks=rendered.blocks)

    def ephemeral(self, channel: str, user: str, thread_ts: str | None, rendered: Rendered) -> None:
        """A message in a thread that only `user` sees."""
        self.client.chat_postEphemeral(
            channel=channel,
            user=user,
            thread_ts=thread_ts,
            text=rendered.text,
            blocks=rendered.blocks,
        )

    def react(self, channel: str, ts: str, name: str) -> None:
        """Add a reaction to a message; a reaction Slack refuses never stops the work."""
        try:
            self.client.reactions_add(channel=channel, timestamp=ts, name=name)
        except SlackApiError as error:
            logger.info("channel=%s | no reaction: %s", channel, error.response.get("error"))

    def upload_exceptions(
        self, channel: str, thread_ts: str | None, path: Path | str, file: ExceptionsFile
    ) -> None:
        """Upload an outcome's exceptions file into its thread."""
        self.client.files_upload_v2(
            channel=channel,
            thread_ts=thread_ts,
            file=str(path),
            filename=file.filename,
            title=file.title,
            initial_comment=file.comment,
        )
