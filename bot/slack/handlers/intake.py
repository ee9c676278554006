"""Files shared in a channel or thread: start an investigation, or give it a new revision;
and "Try again" when the model could not take its turn. Each step shows its progress in one
message of the thread, then its final word; a new request is posted with its buttons."""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import Any

from slack_sdk.errors import SlackApiError

from agent.data.schema import Role
from agent.errors import MalformedRequestError, ModelError, ReconbotError, StorageUnavailableError
from agent.usecases import UseCases
from agent.usecases.common import Upload
from agent.usecases.intake import FileAdded
from bot.jobs.queue import FIRST, Attempt, RetryPolicy
from bot.slack import blocks
from bot.slack.deliveries import Deliveries
from bot.slack.files import SharedFile, SlackFiles
from bot.slack.payloads import NOT_ISSUED, Click
from bot.slack.poster import ThreadPoster
from bot.slack.progress import ProgressMessage
from bot.slack.request_messages import RequestMessages
from bot.slack.work import BotWork

logger = logging.getLogger(__name__)

RETRY = RetryPolicy()


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

    def files_shared(
        self, event: dict[str, Any], delivery_id: str | None = None, *, attempt: Attempt = FIRST
    ) -> None:
        """A message with files: start an investigation on its CSVs, or add them to the
        investigation of the thread it was posted in.

        The delivery is marked done once the person has been answered (a request, a note, or
        a problem in words); a delivery already done is not worked on again, however many
        times it is handed out. If the file store is down, the job is retried later (raises
        StorageUnavailableError) unless this is its last attempt; if the process dies, the
        job runs again elsewhere and the cut-off progress message says so."""
        try:
            self._files_shared(event, delivery_id, attempt)
        except StorageUnavailableError:
            if not attempt.last:
                raise  # the queue runs it again; the thread says when
        if delivery_id:
            self.deliveries.done(delivery_id)

    def _files_shared(
        self, event: dict[str, Any], delivery_id: str | None, attempt: Attempt
    ) -> None:
        channel = str(event["channel"])
        user = str(event.get("user", ""))
        upload_ts = str(event["ts"])
        thread_ts = str(event.get("thread_ts") or upload_ts)
        shared = [SharedFile.from_event(item) for item in event.get("files") or []]
        csvs = [f for f in shared if f.is_csv]
        others = [f for f in shared if not f.is_csv]
        if others and attempt.number == 1:
            self.poster.post(channel, thread_ts, blocks.not_csv_note([f.name for f in others]))
        if not csvs:
            return
        names = [f.name for f in csvs]
        with self.work.serialised(channel, thread_ts):
            if delivery_id and self.deliveries.finished(delivery_id):
                # Handed out again while a run that had it was still working (it waited for
                # that run's lock): answered already, not worked on twice.
                logger.info("event=%s | already answered; not worked on again", delivery_id)
                return
            investigation = self.service.queries.find_by_thread(channel, thread_ts)
            self._close_cut_off(channel, delivery_id, names)
            if attempt.number == 1:
                self.poster.react(channel, upload_ts, "mag")
            progress = ProgressMessage(self.poster, channel, thread_ts, names)
            if delivery_id:
                self.deliveries.remember_progress(delivery_id, progress.ts)
            try:
                if investigation is None:
                    team = str(event["team"]) if event.get("team") else None
                    self._start(channel, thread_ts, user, team, csvs, progress)
                else:
                    same = [self._add(investigation.id, user, item, progress) for item in csvs]
                    if all(role is not None for role in same):
                        self._unchanged(investigation.id, user, csvs[-1].name, same[-1], progress)
            except StorageUnavailableError as error:
                if attempt.last:
                    progress.fail(str(error))
                    return
                progress.finish(blocks.store_down_note(names, RETRY.wait(attempt.number)))
                if delivery_id:
                    self.deliveries.remember_progress(delivery_id, None)
                raise
            except ModelError as error:
                # The files are stored and the case exists; only the model's turn failed.
                case = self.service.queries.find_by_thread(channel, thread_ts)
                progress.fail(str(error), retry=case.id if case else None)
            except ReconbotError as error:
                progress.fail(str(error))
            except Exception:
                progress.fail(blocks.FILES_NOT_PROCESSED)
                self.messages.internal_error(channel, thread_ts, "files_shared")

    def _close_cut_off(self, channel: str, delivery_id: str | None, names: list[str]) -> None:
        """The progress message of an earlier run that was cut off says so, instead of
        "reading the files…" forever."""
        if not delivery_id:
            return
        cut_off = self.deliveries.progress_of(delivery_id)
        if cut_off is None:
            return
        try:
            self.poster.update(channel, cut_off, blocks.interrupted_note(names))
        except SlackApiError:
            logger.warning("event=%s | the cut-off progress message was not updated", delivery_id)

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
                progress=progress,
            )
        if started.added:  # the thread had its investigation already: the files joined it
            names = self._names(started.investigation.id)
            same = [
                self._shown(added, names.get(added.role, ""), progress) for added in started.added
            ]
            if all(role is not None for role in same):
                last = started.added[-1].role
                self._unchanged(started.investigation.id, user, names.get(last, ""), last, progress)
            return
        if started.request is None:
            assert started.missing is not None
            have = next(role for role in Role if role is not started.missing)
            progress.finish(
                blocks.started_note(started.investigation.id, have, csvs[0].name, started.missing)
            )
            return
        progress.finish(blocks.inspected_note(started.investigation.id))
        self.messages.post(started.request)

    def _unchanged(
        self,
        investigation_id: str,
        user: str,
        name: str,
        role: Role | None,
        progress: ProgressMessage,
    ) -> None:
        """Every file was byte-identical to the case's: say nothing changed, or show the request
        of the inspection that had been cut off, so the person is never told of a request that
        does not exist."""
        request = self.service.intake.inspect_if_unanswered(
            investigation_id, actor=user, progress=progress
        )
        if request is None:
            assert role is not None
            progress.finish(blocks.unchanged_note(name, role))
            return
        progress.finish(blocks.inspected_note(investigation_id))
        self.messages.post(request)

    def _add(
        self, investigation_id: str, user: str, item: SharedFile, progress: ProgressMessage
    ) -> Role | None:
        """Add one file; its role when it was byte-identical to the case's (nothing changed),
        else None."""
        with self.files.open(item) as stream:
            added = self.service.intake.add_file(
                investigation_id,
                Upload(stream, item.name, slack_file_id=item.id),
                actor=user,
                progress=progress,
            )
        return self._shown(added, item.name, progress)

    def _names(self, investigation_id: str) -> dict[Role, str]:
        """The file names of the case's current revision, by role."""
        revision = self.service.queries.status(investigation_id).revisions[-1]
        return {role: ref.name for role, ref in revision.files.items()}

    def _shown(self, added: FileAdded, name: str, progress: ProgressMessage) -> Role | None:
        """Show what adding one file did; its role when it changed nothing, else None."""
        if added.unchanged:
            return added.role
        for pause_id in added.superseded:
            self.messages.show_latest(pause_id, newest=added.revision)
        if added.request is None:
            progress.finish(blocks.added_note(name, added.role, added.revision))
            return None
        progress.finish(blocks.revised_note(added.revision, name, added.role))
        self.messages.post(added.request)
        return None

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
                    case.id, actor=user, progress=progress
                )
            except ModelError as error:
                progress.fail(str(error), retry=case.id)
                return
            except ReconbotError as error:
                progress.fail(str(error))
                return
            progress.finish(blocks.inspected_note(case.id))
            self.messages.post(request)
