"""Questions in an investigation's thread, answered by the agent with evidence; and the App
Home tab with the recent investigations."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from agent.errors import ReconbotError
from agent.usecases import UseCases
from bot.slack import blocks
from bot.slack.poster import ThreadPoster
from bot.slack.request_messages import RequestMessages
from bot.slack.visibility import visibility_for
from bot.slack.work import BotWork


class QuestionHandlers:
    """Answers in threads; the home tab."""

    def __init__(
        self,
        service: UseCases,
        work: BotWork,
        poster: ThreadPoster,
        messages: RequestMessages,
        client: WebClient,
    ) -> None:
        self.service = service
        self.work = work
        self.poster = poster
        self.messages = messages
        self.client = client

    def question(self, event: dict[str, Any], text: str) -> None:
        """A question in an investigation's thread: the agent answers with evidence (and a new
        request when the answer needs a decision)."""
        channel = str(event["channel"])
        thread_ts = str(event.get("thread_ts") or event["ts"])
        investigation = self.service.queries.find_by_thread(channel, thread_ts)
        if investigation is None:
            self.poster.post(channel, thread_ts, blocks.help_message())
            return
        with self.work.serialised(channel, thread_ts):
            try:
                answer = self.service.questions.ask(
                    investigation.id, text, actor=str(event.get("user", ""))
                )
            except ReconbotError as error:
                self.poster.post(channel, thread_ts, blocks.problem_message(str(error)))
                return
            self.poster.post(channel, thread_ts, blocks.answer_message(answer.text))
            if answer.request is not None:
                self.messages.post(answer.request)

    def publish_home(self, user: str) -> None:
        """The App Home tab with the recent investigations of channels `user` is in."""
        shown = visibility_for(self.client).newest(self.service.queries, user)
        self.client.views_publish(user_id=user, view=blocks.home_view(shown))
