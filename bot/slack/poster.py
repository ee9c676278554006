"""The one place the bot posts, edits and reacts to messages in investigation threads, and
uploads files there: rendered messages in, Web API calls out."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.presentation.charts import ChartFile
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
        self,
        channel: str,
        thread_ts: str | None,
        path: Path | str,
        file: ExceptionsFile,
        chart: tuple[bytes, ChartFile] | None = None,
    ) -> None:
        """Upload an outcome's exceptions file into its thread, with its chart (PNG bytes and
        how they are named) beside it when given: one message, one
        files.completeUploadExternal, so the results' files arrive together."""
        uploads: list[dict[str, Any]] = [
            {"file": str(path), "filename": file.filename, "title": file.title}
        ]
        if chart is not None:
            uploads.append(_chart_upload(*chart))
        self.client.files_upload_v2(
            channel=channel, thread_ts=thread_ts, file_uploads=uploads, initial_comment=file.comment
        )

    def upload_chart(
        self, channel: str, thread_ts: str | None, png: bytes, file: ChartFile
    ) -> None:
        """Upload an outcome's chart alone into its thread (when it has no exceptions file)."""
        self.client.files_upload_v2(
            channel=channel, thread_ts=thread_ts, file_uploads=[_chart_upload(png, file)]
        )

    def upload_text(
        self, channel: str, thread_ts: str | None, name: str, text: str, comment: str
    ) -> None:
        """Upload a text file into a thread (a request too long for its message, whole)."""
        self.client.files_upload_v2(
            channel=channel,
            thread_ts=thread_ts,
            content=text,
            filename=name,
            title=name,
            initial_comment=comment,
        )


def _chart_upload(png: bytes, file: ChartFile) -> dict[str, Any]:
    """One file of files_upload_v2: the chart's bytes, name, title and alt text."""
    return {"file": png, "filename": file.filename, "title": file.title, "alt_txt": file.alt}
