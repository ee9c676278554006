"""Decisions clicked in Slack: Approve (and Retry), Reject with a reason, Edit the mapping,
a clarification's answer. The guard decides in the use case; here the outcome is shown: the
request's message, a refusal to the clicker alone, the results or a failure in the thread.

An Approve reads nothing itself: the use case reads the pause once and commits the claim once,
hands the claimed pause to `claimed`, and returns the outcome; a refusal carries the pause.
"""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.approval import Origin
from agent.data.schema import Role
from agent.dependencies import SYSTEM_ACTOR
from agent.domain import ApprovalRequest, PauseKind, PauseState, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError, MalformedRequestError, ReconbotError
from agent.pause import Transition, apply
from agent.usecases import UseCases
from bot.jobs.queue import FIRST, Attempt
from bot.slack import blocks
from bot.slack.approvers import ApproverDirectory
from bot.slack.handlers.policy_changes import (
    approve_policy_change,
    edit_policy_change,
    propose_policy_change,
)
from bot.slack.payloads import (
    NOT_ISSUED,
    ButtonValue,
    ClarificationAnswer,
    Click,
    ModalMetadata,
    option_lines,
)
from bot.slack.poster import ThreadPoster
from bot.slack.progress import ProgressMessage
from bot.slack.request_messages import RequestMessages
from bot.slack.work import BotWork

logger = logging.getLogger(__name__)


class DecisionHandlers:
    """Approve, reject, edit and answer, each shown in the request's thread."""

    def __init__(
        self,
        service: UseCases,
        approvers: ApproverDirectory,
        work: BotWork,
        poster: ThreadPoster,
        messages: RequestMessages,
        client: WebClient,
    ) -> None:
        self.service = service
        self.approvers = approvers
        self.work = work
        self.poster = poster
        self.messages = messages
        self.client = client

    def approve(self, click: Click, button: ButtonValue, *, attempt: Attempt = FIRST) -> None:
        """Approve (or retry) a request through the guard; the winner reconciles.

        Not serialised up front in this process: the claim picks one winner, and the others
        hear at once why they lost. Only the winner takes the thread's lock, so its turn does
        not interleave with questions or uploads. A run of the job after its worker stopped
        (`attempt.retried`) finishes the approval that run had claimed, and says so.
        """
        if attempt.retried and self._finish_interrupted(click, button, attempt):
            return
        pending = self.service.queries.pause(button.pause_id)
        if pending is not None and pending.request.kind is PauseKind.POLICY_CHANGE:
            approve_policy_change(self.service, self.approvers, self.messages, click, button)
            return
        user = click.user
        held: list[PauseState] = []
        locks = []

        def claimed(state: PauseState) -> None:
            lock = self.work.lock(state.request.channel, state.request.thread_ts)
            lock.acquire()
            locks.append(lock)
            shown = self.messages.with_message(state, click.message_ts)
            held.append(shown)
            try:
                self.messages.show(shown, blocks.approved_line(user))
                if click.message_ts and click.message_ts != shown.message_ts:
                    # Retry on a failure message: its button is used up; the outcome follows.
                    self.poster.update(click.channel, click.message_ts, blocks.retried_note(user))
            except SlackApiError:
                logger.exception("pause=%s | could not show the approval", button.pause_id)

        try:
            outcome = self.service.decisions.confirm(
                button.pause_id,
                button.authorization,
                self.approvers.approver(user),
                on_claimed=claimed,
                origin=click.origin,
            )
        except ApprovalRefusedError as error:
            state = error.state if isinstance(error.state, PauseState) else None
            if state is not None:
                state = self.messages.with_message(state, click.message_ts)
            self.messages.refuse(click.channel, user, click.thread_ts, error, state)
            if error.reason in (RefusalReason.EXPIRED, RefusalReason.SUPERSEDED):
                self.messages.show_latest(button.pause_id)
            return
        except Exception as error:
            if not held:  # failed before any claim: nothing ran, but the clicker is told
                self.messages.internal_error(click.channel, click.thread_ts, "approve")
                return
            if not isinstance(error, ReconbotError):
                logger.exception("pause=%s | resumed phase failed", button.pause_id)
            words = str(error) if isinstance(error, ReconbotError) else blocks.INTERNAL_FAILURE
            # Failure path only: read where the pause stands, and show a failure (with its
            # retry) only if it failed; a claim still held is finished by recovery.
            latest = self.service.queries.pause(button.pause_id)
            if latest is not None and latest.status is PauseStatus.FAILED:
                self.messages.report_failure(self.messages.with_message(latest, None), words)
            else:
                self.messages.internal_error(click.channel, click.thread_ts, "approve")
            return
        finally:
            for lock in locks:
                lock.release()
        consumed = apply(held[0], Transition.CONSUME, actor=SYSTEM_ACTOR, at=outcome.created_at)
        self.messages.report_outcome(outcome, consumed, user)

    def _finish_interrupted(self, click: Click, button: ButtonValue, attempt: Attempt) -> bool:
        """After a cut-off run: finish the claim it held, or show what it had finished; False
        when that run had claimed nothing (decide as on a first run)."""
        locks = []

        def rerun(state: PauseState) -> None:
            request = state.request
            self.poster.post(
                click.channel,
                request.thread_ts,
                blocks.picked_up_note("the reconciliation", attempt.number),
            )
            lock = self.work.lock(request.channel, request.thread_ts)
            lock.acquire()
            locks.append(lock)

        try:
            finished = self.service.recovery.finish_interrupted(
                button.pause_id, click.user, on_rerun=rerun
            )
        finally:
            for lock in locks:
                lock.release()
        if finished is None:
            return False
        if finished.outcome is not None:
            self.messages.report_outcome(finished.outcome, finished.state, click.user)
        elif finished.state.status is PauseStatus.FAILED:
            error = finished.error
            if isinstance(error, ReconbotError):
                words = str(error)
            else:
                words = blocks.INTERNAL_FAILURE if error else blocks.RESTARTED_WHILE_RECONCILING
            self.messages.report_failure(finished.state, words)
        return True

    def propose_policy(
        self, channel: str, user: str, changes: dict[str, str], team: str | None = None
    ) -> None:
        """Propose `changes` to `channel`'s policy as `user` and post the request there; a
        change that cannot be made is told to `user` alone, naming the rule."""
        propose_policy_change(
            self.service, self.messages, self.poster, channel, user, changes, team
        )

    def reject(self, metadata: ModalMetadata, user: str, reason: str) -> None:
        """Reject a request with the reason from the modal."""
        try:
            rejected = self.service.decisions.reject(
                metadata.pause_id,
                metadata.authorization,
                self.approvers.approver(user),
                reason,
                origin=metadata.origin,
            )
        except ApprovalRefusedError as error:
            state = error.state if isinstance(error.state, PauseState) else None
            thread_ts = state.request.thread_ts if state else metadata.thread_ts or None
            self.messages.refuse(metadata.channel, user, thread_ts, error, state)
            return
        except Exception:
            self.messages.internal_error(metadata.channel, metadata.thread_ts or None, "reject")
            return
        rejected = self.messages.with_message(rejected, metadata.message_ts)
        self.messages.show(rejected)
        policy_change = rejected.request.kind is PauseKind.POLICY_CHANGE
        # A policy change is posted at the channel's top level: its note goes in its thread.
        thread = rejected.request.thread_ts or (rejected.message_ts if policy_change else None)
        self.poster.post(
            metadata.channel, thread, blocks.rejected_note(user, policy_change=policy_change)
        )

    def show_edit_modal(
        self, view_id: str, request: ApprovalRequest, metadata: ModalMetadata
    ) -> None:
        """Replace the loading modal with the edit form once the files' headers are read."""
        try:
            columns = self.service.queries.columns(request)
        except Exception as error:
            if not isinstance(error, ReconbotError):
                logger.exception("pause=%s | edit form not built", metadata.pause_id)
            words = str(error) if isinstance(error, ReconbotError) else blocks.INTERNAL_FAILURE
            self.client.views_update(
                view_id=view_id, view=blocks.message_modal("Edit the mapping", words)
            )
            return
        self.client.views_update(
            view_id=view_id, view=blocks.edit_modal(request, columns, metadata)
        )

    def edit(self, metadata: ModalMetadata, user: str, choices: dict[str, str]) -> None:
        """An edited mapping from the modal (`role.field` -> column position, or a file's
        reading options as `name=value` lines): a new request. An edited policy change
        (rule -> value, from its form): a new proposal on top of it."""
        origin = metadata.origin
        state = self.service.queries.pause(metadata.pause_id)
        if state is None:
            self.messages.refuse(
                origin.channel, user, origin.thread_ts, MalformedRequestError(NOT_ISSUED)
            )
            return
        if state.request.kind is PauseKind.POLICY_CHANGE:  # its form's rules -> values
            edit_policy_change(
                self.service, self.approvers, self.messages, self.poster, metadata, user, choices
            )
            return
        try:
            answers = _chosen(choices, self.service.queries.columns(state.request))
        except (MalformedRequestError, ValueError):
            self.messages.refuse(
                origin.channel, user, origin.thread_ts, MalformedRequestError(NOT_ISSUED)
            )
            return
        except ReconbotError as error:
            self.poster.post(origin.channel, origin.thread_ts, blocks.problem_message(str(error)))
            return
        self._revise(origin, user, state, metadata.authorization, answers)

    def answer(self, click: Click, answer: ClarificationAnswer) -> None:
        """A clarification answered with its select: `role.field=column` becomes an edit."""
        state = self.service.queries.pause(answer.button.pause_id)
        if state is None:
            self.messages.refuse(
                click.channel, click.user, click.thread_ts, MalformedRequestError(NOT_ISSUED)
            )
            return
        self._revise(
            click.origin,
            click.user,
            state,
            answer.button.authorization,
            {answer.role: {answer.field: answer.column}},
        )

    def _revise(
        self,
        origin: Origin,
        user: str,
        state: PauseState,
        authorization: str,
        answers: dict[Role, dict[str, str]],
    ) -> None:
        request = state.request
        channel = origin.channel
        with self.work.serialised(request.channel, request.thread_ts):
            progress = ProgressMessage(
                self.poster, channel, request.thread_ts, [ref.name for ref in request.files]
            )
            try:
                new = self.service.decisions.edit(
                    request.pause_id,
                    authorization,
                    self.approvers.approver(user),
                    answers,
                    progress=progress,
                    origin=origin,
                )
            except ApprovalRefusedError as error:
                progress.finish(blocks.edit_not_applied_note())
                self.messages.refuse(channel, user, request.thread_ts, error, error.state)
                return
            except ReconbotError as error:
                # The edit was taken and the edited request closed; the turn that validates
                # the new reading did not end on a request: offer to inspect again.
                progress.fail(str(error), retry=request.investigation_id)
                return
            except Exception:
                progress.fail(blocks.INTERNAL_FAILURE, retry=request.investigation_id)
                self.messages.internal_error(channel, request.thread_ts, "edit")
                return
            progress.finish(blocks.edited_note(user))
            self.messages.show(state, blocks.edited_line(user))
            self.messages.post(new)


def _chosen(choices: dict[str, str], columns: dict[Role, list[str]]) -> dict[Role, dict[str, str]]:
    """The edit form's choices as answers: a column position becomes the column's name, a
    file's reading options stay `name=value`; ValueError or MalformedRequestError for a form
    reconbot did not build."""
    answers: dict[Role, dict[str, str]] = {}
    for key, position in choices.items():
        if key.startswith(blocks.OPTIONS_BLOCK_PREFIX):
            role = Role(key.removeprefix(blocks.OPTIONS_BLOCK_PREFIX))
            answers.setdefault(role, {}).update(option_lines(position, role.value))
            continue
        role_name, _, name = key.partition(".")
        header = columns.get(Role(role_name), [])
        if not position.isdigit() or int(position) >= len(header):
            raise MalformedRequestError(NOT_ISSUED)
        answers.setdefault(Role(role_name), {})[name] = header[int(position)]
    return answers
