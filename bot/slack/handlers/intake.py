"""Files shared in a channel or thread: start an investigation, or give it a new revision;
and "Try again" when the model could not take its turn. Each step shows its progress in one
message of the thread, then its final word; a new request is posted with its buttons."""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import Any

from agent.data.schema import Role
from agent.errors import MalformedRequestError, ModelError, ReconbotError
from agent.usecases import UseCases
from agent.usecases.common import Upload
from bot.slack import blocks
from bot.slack.deliveries import Deliveries
from bot.slack.files import SharedFile, SlackFiles
from bot.slack.payloads import NOT_ISSUED, Click
from bot.slack.poster import ThreadPoster
from bot.slack.progress import ProgressMessage
from bot.slack.request_messages import RequestMessages
from bot.slack.work import BotWork

logger = logging.getLogger(__name__)


class IntakeHandlers:
    """Uploads and inspections, shown in the investigation's thread."""

    def __init__(
        self,
        service: UseCases,
        files: SlackFiles,
        deliveries: Deliveries,
        work: BotWork,
        poster: ThreadPoster,
        messages: RequestMessages,
    ) -> None:
        self.service = service
        self.files = files
        self.deliveries = deliveries
        self.work = work
        self.poster = poster
        self.messages = messages

    def files_shared(self, event: dict[str, Any], delivery_id: str | None = None) -> None:
        """A message with files: start an investigation on its CSVs, or add them to the
        investigation of the thread it was posted in. The delivery is marked done once the
        person has been answered (a request, a note, or a problem in words). If Slack or the
        database failed before that, or the process dies, it stays unfinished and the sweep
        hands it out again once its hold has run out: an upload is never dropped unanswered."""
        self._files_shared(event)
        if delivery_id:
            self.deliveries.done(delivery_id)

    def _files_shared(self, event: dict[str, Any]) -> None:
        channel = str(event["channel"])
        user = str(event.get("user", ""))
        upload_ts = str(event["ts"])
        thread_ts = str(event.get("thread_ts") or upload_ts)
        shared = [SharedFile.from_event(item) for item in event.get("files") or []]
        csvs = [f for f in shared if f.is_csv]
        others = [f for f in shared if not f.is_csv]
        if others:
            self.poster.post(channel, thread_ts, blocks.not_csv_note([f.name for f in others]))
        if not csvs:
            return
        with self.work.serialised(channel, thread_ts):
            investigation = self.service.queries.find_by_thread(channel, thread_ts)
            self.poster.react(channel, upload_ts, "mag")
            progress = ProgressMessage(self.poster, channel, thread_ts, [f.name for f in csvs])
            try:
                if investigation is None:
                    team = str(event["team"]) if event.get("team") else None
                    self._start(channel, thread_ts, user, team, csvs, progress)
                else:
                    for item in csvs:
                        self._add(investigation.id, user, item, progress)
            except ModelError as error:
                # The files are stored and the case exists; only the model's turn failed.
                case = self.service.queries.find_by_thread(channel, thread_ts)
                progress.fail(str(error), retry=case.id if case else None)
            except ReconbotError as error:
                progress.fail(str(error))
            except Exception:
                progress.fail(blocks.FILES_NOT_PROCESSED)
                self.messages.internal_error(channel, thread_ts, "files_shared")

    def _start(
        self,
        channel: str,
        thread_ts: str,
        user: str,
        team: str | None,
        csvs: list[SharedFile],
        progress: ProgressMessage,
    ) -> None:
        with ExitStack() as stack:
            uploads = []
            for item in csvs:
                stream = self.files.open(item)
                stack.callback(stream.close)
                uploads.append(Upload(stream, item.name, slack_file_id=item.id))
            started = self.service.intake.start(
                uploads,
                requested_by=user,
                channel=channel,
                thread_ts=thread_ts,
                team=team,
                progress=progress.tool_done,
            )
        if started.request is None:
            assert started.missing is not None
            have = next(role for role in Role if role is not started.missing)
            progress.finish(
                blocks.started_note(started.investigation.id, have, csvs[0].name, started.missing)
            )
            return
        progress.finish(blocks.inspected_note(started.investigation.id))
        self.messages.post(started.request)

    def _add(
        self, investigation_id: str, user: str, item: SharedFile, progress: ProgressMessage
    ) -> None:
        with self.files.open(item) as stream:
            added = self.service.intake.add_file(
                investigation_id,
                Upload(stream, item.name, slack_file_id=item.id),
                actor=user,
                progress=progress.tool_done,
            )
        if added.unchanged:
            progress.finish(blocks.unchanged_note(item.name, added.role))
            return
        for pause_id in added.superseded:
            self.messages.show_latest(pause_id, newest=added.revision)
        if added.request is None:
            progress.finish(blocks.added_note(item.name, added.role, added.revision))
            return
        progress.finish(blocks.revised_note(added.revision, item.name, added.role))
        self.messages.post(added.request)

    def investigate_again(self, click: Click) -> None:
        """ "Try again" after the model failed its turn: inspect and validate the case again."""
        channel, user, thread_ts = click.channel, click.user, click.thread_ts
        case = self.service.queries.find_by_thread(channel, thread_ts) if thread_ts else None
        if case is None or case.id != click.value:
            self.messages.refuse(channel, user, thread_ts, MalformedRequestError(NOT_ISSUED))
            return
        with self.work.serialised(channel, thread_ts):
            revision = self.service.queries.status(case.id).revisions[-1]
            progress = ProgressMessage(
                self.poster, channel, thread_ts, [ref.name for ref in revision.files.values()]
            )
            try:
                request = self.service.intake.investigate_again(
                    case.id, actor=user, progress=progress.tool_done
                )
            except ModelError as error:
                progress.fail(str(error), retry=case.id)
                return
            except ReconbotError as error:
                progress.fail(str(error))
                return
            progress.finish(blocks.inspected_note(case.id))
            self.messages.post(request)
