"""The bot's side of an investigation: runs the use cases off the request thread, on an
executor the bot owns, and keeps the Slack thread up to date.

Listeners acknowledge first and hand the payload here. Every method below runs on the
executor, makes the one service call the click or upload asks for, and renders the result
into the thread: progress, requests, refusals (to the clicker alone), results, failures.
Work on one investigation is serialised in this process, so two questions in one thread do
not interleave their conversations.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.data.schema import Role
from agent.domain import (
    ApprovalRequest,
    Approver,
    ApproverPolicy,
    Outcome,
    PauseState,
    PauseStatus,
    RefusalReason,
)
from agent.errors import (
    ApprovalRefusedError,
    MalformedRequestError,
    ModelError,
    ReconbotError,
)
from agent.workflow import InvestigationService, Upload
from bot.slack import blocks
from bot.slack.files import SharedFile, SlackFiles
from bot.slack.payloads import NOT_ISSUED, ButtonValue, ModalMetadata, option_lines

logger = logging.getLogger(__name__)

GROUP_CACHE_SECONDS = 60.0
INTERNAL_ERROR = (
    "Something went wrong on reconbot's side (reference {ref}); nothing you uploaded or decided "
    "was lost. Try again, or ask whoever runs the bot to look up the reference in its log."
)


@dataclass(frozen=True)
class ThreadsSettings:
    """How the bot runs its work: pool size and how often it looks for expired requests."""

    workers: int = 4
    expiry_sweep_seconds: float = 30.0


class InvestigationThreads:
    """Runs investigations for Slack and shows each step in the investigation's thread."""

    def __init__(
        self,
        service: InvestigationService,
        client: WebClient,
        files: SlackFiles,
        approver_policy: ApproverPolicy,
        settings: ThreadsSettings | None = None,
    ) -> None:
        self.service = service
        self.client = client
        self.files = files
        self.policy = approver_policy
        self.settings = settings or ThreadsSettings()
        self.executor = ThreadPoolExecutor(
            max_workers=self.settings.workers, thread_name_prefix="reconbot-work"
        )
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._groups: dict[str, tuple[float, frozenset[str]]] = {}
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Report approvals recovered at start-up, then sweep for expired requests."""
        self.submit(self.recover)
        self._sweeper = threading.Thread(
            target=self._sweep_forever, name="reconbot-expiry", daemon=True
        )
        self._sweeper.start()

    def close(self) -> None:
        """Stop sweeping and finish the work already started."""
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5)
        self.executor.shutdown(wait=True)

    def submit(self, work: Callable[..., None], *args: Any) -> Future[None]:
        """Run `work(*args)` on the bot's executor; failures are logged, never lost silently."""

        def run() -> None:
            try:
                work(*args)
            except Exception:
                logger.exception("work=%s | background work failed", work.__name__)

        return self.executor.submit(run)

    def _lock(self, channel: str | None, thread_ts: str | None) -> threading.Lock:
        """The lock of one Slack thread: every kind of work on a case (uploads, decisions,
        questions) takes the same one, whether or not the investigation exists yet."""
        with self._locks_guard:
            return self._locks.setdefault(f"{channel}:{thread_ts}", threading.Lock())

    @contextmanager
    def _serialised(self, channel: str | None, thread_ts: str | None) -> Iterator[None]:
        with self._lock(channel, thread_ts):
            yield

    # -- posting helpers --------------------------------------------------------------------

    def _post(self, channel: str, thread_ts: str | None, rendered: blocks.Rendered) -> str:
        answer = self.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=rendered.text, blocks=rendered.blocks
        )
        return str(answer["ts"])

    def _update(self, channel: str, ts: str, rendered: blocks.Rendered) -> None:
        self.client.chat_update(channel=channel, ts=ts, text=rendered.text, blocks=rendered.blocks)

    def _ephemeral(
        self, channel: str, user: str, thread_ts: str | None, rendered: blocks.Rendered
    ) -> None:
        self.client.chat_postEphemeral(
            channel=channel,
            user=user,
            thread_ts=thread_ts,
            text=rendered.text,
            blocks=rendered.blocks,
        )

    def _internal_error(self, channel: str, thread_ts: str | None, what: str) -> None:
        ref = uuid.uuid4().hex[:8]
        logger.exception("ref=%s what=%s | internal error", ref, what)
        try:
            self._post(channel, thread_ts, blocks.problem_message(INTERNAL_ERROR.format(ref=ref)))
        except SlackApiError:
            logger.exception("ref=%s | could not report the error in the thread", ref)

    def post_request(self, request: ApprovalRequest) -> None:
        """Post a request with its buttons in its thread and remember the message."""
        assert request.channel is not None
        ts = self._post(request.channel, request.thread_ts, blocks.approval_message(request))
        self.service.remember_message(request.pause_id, ts)
        state = self.service.pause(request.pause_id)
        if state is not None and state.status is not PauseStatus.PENDING:
            self.show_state(request.pause_id)  # it moved on (expired) before it was shown

    def show_state(self, pause_id: str, line: str | None = None, newest: int | None = None) -> None:
        """Edit a request's message to its current state, without buttons."""
        state = self.service.pause(pause_id)
        if state is None or state.message_ts is None or state.request.channel is None:
            return
        text = line or blocks.state_line(state, newest_revision=newest)
        self._update(
            state.request.channel,
            state.message_ts,
            blocks.decided_message(state.request, text),
        )

    # -- uploads ----------------------------------------------------------------------------

    def files_shared(self, event: dict[str, Any], delivery_id: str | None = None) -> None:
        """A message with files: start an investigation on its CSVs, or add them to the
        investigation of the thread it was posted in. The delivery is marked done however it
        ends, unless the process dies first: then another picks it up (`sweep`)."""
        try:
            self._files_shared(event)
        finally:
            if delivery_id:
                self.service.delivery_done(delivery_id)

    def _files_shared(self, event: dict[str, Any]) -> None:
        channel = str(event["channel"])
        user = str(event.get("user", ""))
        upload_ts = str(event["ts"])
        thread_ts = str(event.get("thread_ts") or upload_ts)
        shared = [SharedFile.from_event(item) for item in event.get("files") or []]
        csvs = [f for f in shared if f.is_csv]
        others = [f for f in shared if not f.is_csv]
        if others:
            names = ", ".join(blocks.code(f.name, 60) for f in others)
            self._post(
                channel,
                thread_ts,
                blocks.note(
                    f"Thanks, but I only read CSV exports; I left {names} alone. Share the orders "
                    "and captured-payments exports as .csv files."
                ),
            )
        if not csvs:
            return
        with self._serialised(channel, thread_ts):
            investigation = self.service.find_by_thread(channel, thread_ts)
            try:
                self.client.reactions_add(channel=channel, timestamp=upload_ts, name="mag")
            except SlackApiError as error:
                logger.info("channel=%s | no reaction: %s", channel, error.response.get("error"))
            progress = _ProgressMessage(self, channel, thread_ts, [f.name for f in csvs])
            try:
                if investigation is None:
                    self._start(channel, thread_ts, user, csvs, progress)
                else:
                    for item in csvs:
                        self._add(investigation.id, user, item, progress)
            except ModelError as error:
                # The files are stored and the case exists; only the model's turn failed.
                case = self.service.find_by_thread(channel, thread_ts)
                progress.fail(str(error), retry=case.id if case else None)
            except ReconbotError as error:
                progress.fail(str(error))
            except Exception:
                progress.fail("the files could not be processed")
                self._internal_error(channel, thread_ts, "files_shared")

    def _start(
        self,
        channel: str,
        thread_ts: str,
        user: str,
        csvs: list[SharedFile],
        progress: _ProgressMessage,
    ) -> None:
        with ExitStack() as stack:
            uploads = []
            for item in csvs:
                stream = self.files.open(item)
                stack.callback(stream.close)
                uploads.append(Upload(stream, item.name, slack_file_id=item.id))
            started = self.service.start(
                uploads,
                requested_by=user,
                channel=channel,
                thread_ts=thread_ts,
                progress=progress.tool_done,
            )
        if started.request is None:
            assert started.missing is not None
            have = next(role for role in Role if role is not started.missing)
            progress.finish(
                f":inbox_tray: Started *{started.investigation.id}* with the {have.value} export "
                f"{blocks.code(csvs[0].name, 60)}. Upload the *{started.missing.value}* export in "
                "this thread to continue."
            )
            return
        progress.finish(_inspected(started.investigation.id))
        self.post_request(started.request)

    def _add(
        self, investigation_id: str, user: str, item: SharedFile, progress: _ProgressMessage
    ) -> None:
        with self.files.open(item) as stream:
            added = self.service.add_file(
                investigation_id,
                Upload(stream, item.name, slack_file_id=item.id),
                actor=user,
                progress=progress.tool_done,
            )
        if added.unchanged:
            progress.finish(
                f":information_source: {blocks.code(item.name, 60)} is byte-identical to the "
                f"{added.role.value} file this investigation already has; nothing changed and "
                "the pending request stands."
            )
            return
        for pause_id in added.superseded:
            self.show_state(pause_id, newest=added.revision)
        if added.request is None:
            progress.finish(
                f":inbox_tray: Added {blocks.code(item.name, 60)} as the {added.role.value} "
                f"export (revision {added.revision}). Upload the other export to continue."
            )
            return
        progress.finish(
            f":arrows_counterclockwise: Revision {added.revision}: {blocks.code(item.name, 60)} "
            f"is the new {added.role.value} export. Inspected and validated again; decision "
            "needed below."
        )
        self.post_request(added.request)

    # -- decisions --------------------------------------------------------------------------

    def _approver(self, user: str) -> Approver:
        groups = [g for g in self.policy.approvers if g.startswith("S")]
        return Approver(user=user, groups=tuple(g for g in groups if user in self._members(g)))

    def _members(self, group: str) -> frozenset[str]:
        cached = self._groups.get(group)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        try:
            members = frozenset(self.client.usergroups_users_list(usergroup=group)["users"])
        except SlackApiError as error:
            logger.warning("group=%s | members unknown: %s", group, error.response.get("error"))
            members = frozenset()
        self._groups[group] = (time.monotonic() + GROUP_CACHE_SECONDS, members)
        return members

    def refuse(
        self,
        channel: str,
        user: str,
        thread_ts: str | None,
        error: ApprovalRefusedError | MalformedRequestError,
        request: ApprovalRequest | None = None,
    ) -> None:
        """Tell the clicker alone why their click was refused."""
        reason = error.reason if isinstance(error, ApprovalRefusedError) else "NOT_ISSUED"
        words, who, people = str(error), "", []
        if request is not None:
            latest = self.service.pause(request.pause_id)
            people = [p for p in (latest.decided_by if latest else None, request.requested_by) if p]
            if reason == RefusalReason.NOT_AUTHORIZED:
                policy = request.approver_policy
                words = "You may not decide this request."
                who = blocks.who_may_approve(
                    policy.approvers, request.requested_by, policy.self_approval
                )
        self._ephemeral(
            channel,
            user,
            thread_ts,
            blocks.refusal_message(reason, words, who_may=who, people=people),
        )

    def approve(self, body: dict[str, Any]) -> None:
        """Approve (or retry) a request through the guard; the winner reconciles."""
        channel, user, thread_ts, value = _click(body)
        try:
            button = ButtonValue.decode(value)
        except MalformedRequestError as error:
            logger.warning("user=%s | a decision button that reconbot did not issue", user)
            self.refuse(channel, user, thread_ts, error)
            return
        state = self.service.pause(button.pause_id)
        clicked_ts = (body.get("container") or {}).get("message_ts")
        if state is not None and state.message_ts is None and clicked_ts:
            # The bot stopped between posting the request and remembering it: the message
            # Slack says was clicked is the one that shows this pause.
            self.service.remember_message(button.pause_id, str(clicked_ts))
        # Not serialised: the conditional claim picks one winner, and the others must hear
        # at once why they lost rather than wait for the winner's reconciliation.
        self._confirm(channel, user, thread_ts, button, state)

    def _confirm(
        self,
        channel: str,
        user: str,
        thread_ts: str | None,
        button: ButtonValue,
        state: PauseState | None,
    ) -> None:
        held: list[threading.Lock] = []

        def claimed(claimed_state: PauseState) -> None:
            # Only the winner serialises with other work on the case (questions, uploads), so
            # their conversations do not interleave; refusals never wait for it.
            lock = self._lock(claimed_state.request.channel, claimed_state.request.thread_ts)
            lock.acquire()
            held.append(lock)
            try:
                self.show_state(button.pause_id, blocks.approved_line(user))
            except SlackApiError:
                logger.exception("pause=%s | could not show the approval", button.pause_id)

        try:
            outcome = self.service.confirm(
                button.pause_id, button.authorization, self._approver(user), on_claimed=claimed
            )
        except ApprovalRefusedError as error:
            self.refuse(channel, user, thread_ts, error, state.request if state else None)
            if error.reason in (RefusalReason.EXPIRED, RefusalReason.SUPERSEDED):
                self.show_state(button.pause_id)
            return
        except Exception as error:
            failed = self.service.pause(button.pause_id)
            if failed is None or failed.status is not PauseStatus.FAILED:
                raise
            words = str(error) if isinstance(error, ReconbotError) else "an internal error"
            if not isinstance(error, ReconbotError):
                logger.exception("pause=%s | resumed phase failed", button.pause_id)
            self.report_failure(failed, words)
            return
        finally:
            for lock in held:
                lock.release()
        self.report_outcome(outcome, user)

    def report_outcome(self, outcome: Outcome, user: str) -> None:
        """Results in the thread: the summary, first findings, the exceptions file; and the
        request's message shows it was approved and reconciled."""
        state = self.service.pause(outcome.pause_id)
        if state is None or state.request.channel is None:
            return
        request = state.request
        self.show_state(outcome.pause_id)
        channel = request.channel
        assert channel is not None
        self._post(channel, request.thread_ts, blocks.results_message(outcome, user))
        with self.service.exceptions_file(outcome) as path:
            if path is None:
                return
            self.client.files_upload_v2(
                channel=channel,
                thread_ts=request.thread_ts,
                file=str(path),
                filename=f"exceptions-{outcome.investigation_id}-r{outcome.revision}.csv",
                title=f"Exceptions of {outcome.investigation_id}, revision {outcome.revision}",
                initial_comment=f"All {outcome.export_rows} exceptions, with file rows and ids.",
            )

    def report_failure(self, state: PauseState, words: str) -> None:
        """A failed reconciliation: the request says so, and the thread offers a retry."""
        request = state.request
        if request.channel is None:
            return
        self.show_state(request.pause_id)
        self._post(request.channel, request.thread_ts, blocks.failure_message(request, words))

    def reject(self, metadata: ModalMetadata, user: str, reason: str) -> None:
        """Reject a request with the reason from the modal."""
        state = self.service.pause(metadata.pause_id)
        thread_ts = state.request.thread_ts if state else None
        try:
            self.service.reject(
                metadata.pause_id, metadata.authorization, self._approver(user), reason
            )
        except ApprovalRefusedError as error:
            self.refuse(metadata.channel, user, thread_ts, error, state.request if state else None)
            return
        self.show_state(metadata.pause_id)
        self._post(
            metadata.channel,
            thread_ts,
            blocks.note(f":x: Rejected by {blocks.mention(user)}. Nothing was reconciled."),
        )

    def edit(self, metadata: ModalMetadata, user: str, choices: dict[str, str]) -> None:
        """An edited mapping from the modal (`role.field` -> column position): a new request."""
        state = self.service.pause(metadata.pause_id)
        if state is None:
            return
        columns = self.service.columns(state.request)
        answers: dict[Role, dict[str, str]] = {}
        for key, position in choices.items():
            if key.startswith(blocks.OPTIONS_BLOCK_PREFIX):
                role = Role(key.removeprefix(blocks.OPTIONS_BLOCK_PREFIX))
                answers.setdefault(role, {}).update(option_lines(position))
                continue
            role_name, _, name = key.partition(".")
            role = Role(role_name)
            header = columns.get(role, [])
            if not position.isdigit() or int(position) >= len(header):
                raise MalformedRequestError(NOT_ISSUED)
            answers.setdefault(role, {})[name] = header[int(position)]
        self._revise(metadata.channel, user, state, metadata.authorization, answers)

    def answer(self, body: dict[str, Any]) -> None:
        """A clarification answered with its select: `role.field=column` becomes an edit."""
        channel, user, thread_ts, _ = _click(body)
        selected = body["actions"][0].get("selected_option") or {}
        key, _, column = str(selected.get("value", "")).partition("=")
        role_name, _, name = key.partition(".")
        try:
            button = ButtonValue.decode(_decision_value(body))
            role = Role(role_name)
        except (MalformedRequestError, ValueError):
            self.refuse(channel, user, thread_ts, MalformedRequestError(NOT_ISSUED))
            return
        state = self.service.pause(button.pause_id)
        if state is None:
            return
        self._revise(channel, user, state, button.authorization, {role: {name: column}})

    def _revise(
        self,
        channel: str,
        user: str,
        state: PauseState,
        authorization: str,
        answers: dict[Role, dict[str, str]],
    ) -> None:
        request = state.request
        with self._serialised(request.channel, request.thread_ts):
            progress = _ProgressMessage(
                self, channel, request.thread_ts, [ref.name for ref in request.files]
            )
            try:
                new = self.service.edit(
                    request.pause_id,
                    authorization,
                    self._approver(user),
                    answers,
                    progress=progress.tool_done,
                )
            except ApprovalRefusedError as error:
                progress.finish("The edit was not applied.")
                self.refuse(channel, user, request.thread_ts, error, request)
                return
            except ReconbotError as error:
                progress.fail(str(error))
                return
            progress.finish(
                f":pencil2: {blocks.mention(user)} edited the mapping; validated again, "
                "decision needed below."
            )
            self.show_state(request.pause_id, blocks.edited_line(user))
            self.post_request(new)

    def investigate_again(self, body: dict[str, Any]) -> None:
        """ "Try again" after the model failed its turn: inspect and validate the case again."""
        channel, user, thread_ts, value = _click(body)
        case = self.service.find_by_thread(channel, str(thread_ts)) if thread_ts else None
        if case is None or case.id != value:
            self.refuse(channel, user, thread_ts, MalformedRequestError(NOT_ISSUED))
            return
        with self._serialised(channel, thread_ts):
            revision = self.service.status(case.id).revisions[-1]
            progress = _ProgressMessage(
                self, channel, thread_ts, [ref.name for ref in revision.files.values()]
            )
            try:
                request = self.service.investigate_again(
                    case.id, actor=user, progress=progress.tool_done
                )
            except ModelError as error:
                progress.fail(str(error), retry=case.id)
                return
            except ReconbotError as error:
                progress.fail(str(error))
                return
            progress.finish(_inspected(case.id))
            self.post_request(request)

    # -- questions, commands, home ------------------------------------------------------------

    def question(self, event: dict[str, Any], text: str) -> None:
        """A question in an investigation's thread: the agent answers with evidence."""
        channel = str(event["channel"])
        thread_ts = str(event.get("thread_ts") or event["ts"])
        investigation = self.service.find_by_thread(channel, thread_ts)
        if investigation is None:
            self._post(channel, thread_ts, blocks.help_message())
            return
        with self._serialised(channel, thread_ts):
            try:
                answer = self.service.ask(investigation.id, text, actor=str(event.get("user", "")))
            except ReconbotError as error:
                self._post(channel, thread_ts, blocks.problem_message(str(error)))
                return
            self._post(channel, thread_ts, blocks.answer_message(answer.text))
            if answer.request is not None:
                self.post_request(answer.request)

    def show_edit_modal(
        self, view_id: str, request: ApprovalRequest, metadata: ModalMetadata
    ) -> None:
        """Replace the loading modal with the edit form once the files' headers are read."""
        try:
            columns = self.service.columns(request)
        except ReconbotError as error:
            self.client.views_update(
                view_id=view_id, view=blocks.message_modal("Edit the mapping", str(error))
            )
            return
        self.client.views_update(
            view_id=view_id, view=blocks.edit_modal(request, columns, metadata)
        )

    def publish_home(self, user: str) -> None:
        """The App Home tab with the recent investigations."""
        self.client.views_publish(
            user_id=user, view=blocks.home_view(self.service.recent(limit=20))
        )

    # -- time and recovery ----------------------------------------------------------------

    def sweep(self) -> list[str]:
        """Expire the requests whose time is up and say so on their messages; pick up uploads
        and inspections that a dead process left unfinished. Returns the expired pause ids."""
        for delivery_id, event in self.service.deliveries_to_resume():
            logger.info("event=%s | resuming an upload a stopped process left", delivery_id)
            self.submit(self.files_shared, event, delivery_id)  # long work: not on the sweeper
        expired = self.service.expire_due()
        for pause_id in expired:
            self.show_state(pause_id)
        for case in self.service.find_stalled():
            if case.channel is None:
                continue
            self._post(
                case.channel,
                case.thread_ts,
                blocks.problem_message(
                    f"{case.id}: the bot stopped while inspecting these files. Nothing you "
                    "uploaded was lost; try again to get the request.",
                    retry=case.id,
                ),
            )
        return expired

    def _sweep_forever(self) -> None:
        while not self._stop.wait(self.settings.expiry_sweep_seconds):
            try:
                self.sweep()
            except Exception:
                logger.exception("sweep=expiry | failed; trying again later")

    def recover(self) -> None:
        """Finish approvals interrupted by a crash and report them in their threads; offer to
        go on with inspections interrupted by one."""
        self.sweep()
        for pause_id in self.service.recover():
            state = self.service.pause(pause_id)
            if state is None:
                continue
            if state.status is PauseStatus.CONSUMED:
                report = self.service.status(state.request.investigation_id)
                if report.outcome is not None:
                    self.report_outcome(report.outcome, state.decided_by or "reconbot")
            elif state.status is PauseStatus.FAILED:
                self.report_failure(state, "the bot restarted while reconciling")


class _ProgressMessage:
    """The one message of a thread that shows what the agent is doing, edited as it works."""

    def __init__(
        self, threads: InvestigationThreads, channel: str, thread_ts: str | None, names: list[str]
    ) -> None:
        self.threads = threads
        self.channel = channel
        self.names = names
        self.done: list[str] = []
        self.ts = threads._post(channel, thread_ts, blocks.progress_message(names, []))

    def tool_done(self, name: str) -> None:
        """One more tool finished: show it (a failed edit never stops the work)."""
        self.done.append(name)
        try:
            self.threads._update(
                self.channel, self.ts, blocks.progress_message(self.names, self.done)
            )
        except SlackApiError:
            logger.warning("channel=%s | progress not updated", self.channel)

    def finish(self, text: str) -> None:
        """The final word of this step."""
        self.threads._update(self.channel, self.ts, blocks.note(text))

    def fail(self, text: str, *, retry: str | None = None) -> None:
        """The step stopped on a problem the person can fix; say what it is (with a button
        to investigate again when only the model's turn failed)."""
        self.threads._update(self.channel, self.ts, blocks.problem_message(text, retry=retry))


def _inspected(investigation_id: str) -> str:
    return (
        f":mag: *{investigation_id}*: inspected both files and checked the proposed mapping on "
        "every row. Decision needed below."
    )


def _click(body: dict[str, Any]) -> tuple[str, str, str | None, str | None]:
    container = body.get("container") or {}
    channel = str((body.get("channel") or {}).get("id") or container.get("channel_id"))
    message = body.get("message") or {}
    thread_ts = message.get("thread_ts") or container.get("thread_ts")
    action = (body.get("actions") or [{}])[0]
    return channel, str(body["user"]["id"]), thread_ts, action.get("value")


def _decision_value(body: dict[str, Any]) -> str | None:
    for block in (body.get("message") or {}).get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("action_id") == blocks.EDIT:
                return str(element.get("value"))
    return None
