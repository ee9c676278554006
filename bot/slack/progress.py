"""The one message of a thread that shows what the agent is doing, edited as it works."""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

from bot.slack import blocks
from bot.slack.poster import ThreadPoster

logger = logging.getLogger(__name__)


class ProgressMessage:
    """Posted when a step starts, edited as each tool finishes, and replaced by the step's
    final word (a note, or a problem with an optional "Try again" button)."""

    def __init__(
        self, poster: ThreadPoster, channel: str, thread_ts: str | None, names: list[str]
    ) -> None:
        self.poster = poster
        self.channel = channel
        self.names = names
        self.done: list[str] = []
        self.reading: dict[str, tuple[int, float]] = {}
        self.ts = poster.post(channel, thread_ts, blocks.progress_message(names, []))

    def tool_started(self, name: str) -> None:
        """A tool started: the message shows steps as they finish, and the rows read while a
        file is read, so a start changes nothing (one Web API call fewer per tool)."""

    def tool_done(self, name: str) -> None:
        """One more tool finished: show it (a failed edit never stops the work)."""
        self.done.append(name)
        self.reading.clear()
        self._show()

    def rows_read(self, file_name: str, rows: int, share: float) -> None:
        """A large file is being read: show its rows so far (about once a second per file)."""
        self.reading[file_name] = (rows, share)
        if all(done >= 1.0 for _, done in self.reading.values()):
            self.reading.clear()
        self._show()

    def _show(self) -> None:
        try:
            self.poster.update(
                self.channel,
                self.ts,
                blocks.progress_message(self.names, self.done, self.reading),
            )
        except SlackApiError:
            logger.warning("channel=%s | progress not updated", self.channel)

    def finish(self, rendered: blocks.Rendered) -> None:
        """The final word of this step."""
        self.poster.update(self.channel, self.ts, rendered)

    def fail(self, text: str, *, retry: str | None = None) -> None:
        """The step stopped on a problem the person can fix; say what it is (with a button
        to investigate again when only the model's turn failed)."""
        self.poster.update(self.channel, self.ts, blocks.problem_message(text, retry=retry))
