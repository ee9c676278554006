"""The messages that show a request in its thread: posted with buttons, edited to each new
state without them, refusals to the clicker alone, results and failures.

Callers pass the pause as the use case returned it (or as a refusal carries it), so showing a
decision reads nothing again; only an id alone (a sweep's expired ids) is looked up.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from slack_sdk.errors import SlackApiError, SlackClientError

from agent.approval import requesters_of
from agent.domain import ApprovalRequest, Outcome, PauseState, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError, MalformedRequestError
from agent.usecases.queries import Queries
from bot.presentation import charts
from bot.presentation.charts import ChartFile
from bot.presentation.request_text import render_request
from bot.slack import blocks
from bot.slack.deliveries import Deliveries
from bot.slack.poster import ThreadPoster

logger = logging.getLogger(__name__)


class RequestMessages:
    """Shows requests, decisions, refusals and results in investigation threads."""

    def __init__(self, poster: ThreadPoster, deliveries: Deliveries, queries: Queries) -> None:
        self.poster = poster
        self.deliveries = deliveries
        self.queries = queries

    def post(self, request: ApprovalRequest) -> None:
        """Post a request with its buttons in its thread and remember the message."""
        assert request.channel is not None
        whole = not blocks.request_overflows(request) or self.attach_whole(request)
        rendered = blocks.approval_message(request, whole_shown=whole)
        ts = self.poster.post(request.channel, request.thread_ts, rendered)
        self.deliveries.remember_message(request.pause_id, ts)
        state = self.queries.pause(request.pause_id)
        if state is not None and state.status is not PauseStatus.PENDING:
            self.show(state)  # it moved on (expired) before it was shown

    def attach_whole(self, request: ApprovalRequest) -> bool:
        """Post the whole request as a text file in its thread, before the message that says
        the rest is there: what is approved is all shown, when Slack's limits cut the message.
        False when Slack refused the file (logged with a reference): the message then holds
        back Approve."""
        assert request.channel is not None
        name = blocks.request_file_name(request)
        try:
            self.poster.upload_text(
                request.channel,
                request.thread_ts,
                name,
                render_request(request) + "\n",
                f"The whole of request {request.pause_id}: every line of its reading, notes "
                "and questions (the message below cannot hold them all).",
            )
        except SlackClientError:
            self.log_internal_error(f"attaching {name}")
            return False
        return True

    def show(self, state: PauseState, line: str | None = None, newest: int | None = None) -> None:
        """Edit a request's message to `state`, without buttons."""
        if state.message_ts is None or state.request.channel is None:
            return
        text = line or blocks.state_line(state, newest_revision=newest)
        self.poster.update(
            state.request.channel, state.message_ts, blocks.decided_message(state.request, text)
        )

    def show_latest(self, pause_id: str, newest: int | None = None) -> None:
        """Edit a request's message to its saved state (when only its id is at hand)."""
        state = self.queries.pause(pause_id)
        if state is not None:
            self.show(state, newest=newest)

    def with_message(self, state: PauseState, message_ts: str | None) -> PauseState:
        """`state`, knowing the message that shows it: when the bot stopped between posting a
        request and remembering its message, the message Slack says was clicked is that one."""
        if state.message_ts is not None or not message_ts:
            return state
        self.deliveries.remember_message(state.request.pause_id, message_ts)
        return state.model_copy(update={"message_ts": message_ts})

    def refuse(
        self,
        channel: str,
        user: str,
        thread_ts: str | None,
        error: ApprovalRefusedError | MalformedRequestError,
        state: PauseState | None = None,
    ) -> None:
        """Tell the clicker alone why their click was refused (with `state`, the pause as the
        guard saw it: who decided it, who asked, who may approve)."""
        if isinstance(error, ApprovalRefusedError):
            reason = RefusalReason(error.reason)
        else:
            reason = RefusalReason.NOT_ISSUED
        words, who, people = str(error), "", []
        if state is not None:
            request = state.request
            makers = requesters_of(request)
            people = list(dict.fromkeys(p for p in (state.decided_by, *makers) if p))
            if reason is RefusalReason.NOT_AUTHORIZED:
                policy = request.approver_policy
                words = blocks.MAY_NOT_DECIDE
                who = blocks.who_may_approve(policy.approvers, makers, policy.self_approval)
        self.poster.ephemeral(
            channel,
            user,
            thread_ts,
            blocks.refusal_message(reason, words, who_may=who, people=people),
        )

    def report_outcome(self, outcome: Outcome, state: PauseState, user: str) -> None:
        """Results in the thread: the summary, first findings, how it was computed (the
        recorded trace), the exceptions file with the chart of findings per category and
        amounts per currency; and the request's message shows it was approved and reconciled
        (`state`, consumed)."""
        request = state.request
        if request.channel is None:
            return
        self.show(state)
        trace = self.queries.trace(outcome.investigation_id)
        results = blocks.results_message(outcome, user, trace)
        self.poster.post(request.channel, request.thread_ts, results)
        chart = self.chart(outcome)
        with self.queries.exceptions_file(outcome) as path:
            if path is not None:
                self.upload_files(request.channel, request.thread_ts, outcome, path, chart)
            elif chart is not None:
                self.upload_chart(request.channel, request.thread_ts, outcome, chart)

    def chart(self, outcome: Outcome) -> tuple[bytes, ChartFile] | None:
        """The outcome's chart and its name, or None when drawing it failed: the chart only
        illustrates the results, so its failure is logged and the results go out without it."""
        try:
            data = charts.chart_data(outcome)
            return charts.render(data), charts.chart_file(outcome, data)
        except Exception:
            logger.exception("investigation=%s | chart failed", outcome.investigation_id)
            return None

    def upload_files(
        self,
        channel: str,
        thread_ts: str | None,
        outcome: Outcome,
        path: Path,
        chart: tuple[bytes, ChartFile] | None,
    ) -> None:
        """Upload the exceptions file with the chart beside it; should Slack refuse the pair,
        the exceptions file alone (the chart must never cost the results)."""
        exceptions = blocks.exceptions_file(outcome)
        try:
            self.poster.upload_exceptions(channel, thread_ts, path, exceptions, chart)
        except SlackClientError:
            if chart is None:
                raise
            logger.exception(
                "investigation=%s | upload with the chart failed; the exceptions file alone",
                outcome.investigation_id,
            )
            self.poster.upload_exceptions(channel, thread_ts, path, exceptions)

    def upload_chart(
        self, channel: str, thread_ts: str | None, outcome: Outcome, chart: tuple[bytes, ChartFile]
    ) -> None:
        """Upload the chart alone (an outcome without an exceptions file); a refusal is logged,
        the results message already says everything."""
        try:
            self.poster.upload_chart(channel, thread_ts, *chart)
        except SlackClientError:
            logger.exception("investigation=%s | chart upload failed", outcome.investigation_id)

    def report_failure(self, state: PauseState, words: str) -> None:
        """A failed reconciliation: the request says so, and the thread offers a retry."""
        request = state.request
        if request.channel is None:
            return
        self.show(state)
        self.poster.post(request.channel, request.thread_ts, blocks.failure_message(request, words))

    def internal_error(self, channel: str, thread_ts: str | None, what: str) -> None:
        """Say in the thread that something broke on reconbot's side, with a reference to find
        it in the log (which holds the traceback)."""
        self.post_internal_error(channel, thread_ts, self.log_internal_error(what))

    def log_internal_error(self, what: str) -> str:
        """Log the exception being handled with a new reference; returns the reference."""
        ref = uuid.uuid4().hex[:8]
        logger.exception("ref=%s what=%s | internal error", ref, what)
        return ref

    def post_internal_error(self, channel: str, thread_ts: str | None, ref: str) -> None:
        """Say in the thread that something broke, with the log's reference `ref`."""
        try:
            self.poster.post(channel, thread_ts, blocks.internal_error_message(ref))
        except SlackApiError:
            logger.exception("ref=%s | could not report the error in the thread", ref)
