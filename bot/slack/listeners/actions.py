"""Block action listeners: Approve, Retry, Edit mapping, Reject, and a clarification's answer.

Each acknowledges before anything else, parses the payload into typed values (`Click`, a
`ButtonValue`, a `ClarificationAnswer`) and hands them to the handlers, where
the guard decides; a payload reconbot did not issue is refused to the clicker alone. They run
on the request's thread and the ack is answered when they return, so they only parse and
enqueue. Reject and Edit open their modal in a lazy listener, right after the ack (a trigger
id lasts three seconds), so that neither the database nor `views.open` holds the ack up.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from agent.domain import ApprovalRequest
from agent.errors import ApprovalRefusedError, MalformedRequestError
from agent.usecases import UseCases
from bot.slack import blocks
from bot.slack.handlers import Handlers
from bot.slack.payloads import ButtonValue, ClarificationAnswer, Click, ModalMetadata

logger = logging.getLogger(__name__)


def register(app: App, service: UseCases, handlers: Handlers) -> None:
    """Register the action listeners."""

    def _click(body: dict[str, Any]) -> Click | None:
        """The click, or None (logged) for a payload without a clicker or a channel: there is
        nobody to tell, and nothing is done."""
        try:
            return Click.from_body(body)
        except MalformedRequestError:
            logger.warning("a block action without a user or a channel; ignored")
            return None

    def _decision(click: Click) -> ButtonValue | None:
        """The decision button's value, or None after telling the clicker it is not ours."""
        try:
            return ButtonValue.decode(click.value)
        except MalformedRequestError as error:
            logger.warning("user=%s | a decision button that reconbot did not issue", click.user)
            handlers.work.decide(
                handlers.messages.refuse, click.channel, click.user, click.thread_ts, error
            )
            return None

    @app.action(blocks.APPROVE)
    def on_approve(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = _click(body)
        button = _decision(click) if click else None
        if click is not None and button is not None:
            handlers.jobs.approve(click, button)

    @app.action(blocks.RETRY)
    def on_retry(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = _click(body)
        button = _decision(click) if click else None
        if click is not None and button is not None:
            handlers.jobs.approve(click, button)

    @app.action(blocks.INVESTIGATE_AGAIN)
    def on_investigate_again(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = _click(body)
        if click is not None:
            handlers.jobs.investigate_again(click)

    @app.action(re.compile(f"^{blocks.ANSWER}:"))
    def on_answer(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        click = _click(body)
        if click is None:
            return
        try:
            answer = ClarificationAnswer.from_body(body)
        except MalformedRequestError as error:
            handlers.work.decide(
                handlers.messages.refuse, click.channel, click.user, click.thread_ts, error
            )
            return
        handlers.jobs.answer(click, answer)

    def _pending(click: Click) -> tuple[ModalMetadata, ApprovalRequest] | None:
        """The metadata for a decision modal, or None after telling the clicker why not."""
        button = _decision(click)
        if button is None:
            return None
        try:
            state = service.decisions.decidable(button.pause_id, button.authorization, click.origin)
        except ApprovalRefusedError as refusal:
            handlers.work.decide(
                handlers.messages.refuse, click.channel, click.user, click.thread_ts, refusal
            )
            return None
        metadata = ModalMetadata(
            pause_id=button.pause_id,
            authorization=button.authorization,
            channel=click.channel,
            message_ts=click.message_ts or "",
            thread_ts=click.thread_ts or "",
            team=click.team or "",
        )
        return metadata, state.request

    def acknowledge(ack: Ack) -> None:
        ack()

    def open_reject_modal(body: dict[str, Any], client: WebClient) -> None:
        click = _click(body)
        found = _pending(click) if click else None
        if click is not None and found is not None:
            metadata, request = found
            client.views_open(
                trigger_id=click.trigger_id, view=blocks.reject_modal(request, metadata)
            )

    def open_edit_modal(body: dict[str, Any], client: WebClient) -> None:
        click = _click(body)
        found = _pending(click) if click else None
        if click is not None and found is not None:
            metadata, request = found
            opened = client.views_open(
                trigger_id=click.trigger_id, view=blocks.loading_modal("Edit the mapping")
            )
            handlers.work.decide(
                handlers.decisions.show_edit_modal, opened["view"]["id"], request, metadata
            )

    app.action(blocks.REJECT)(ack=acknowledge, lazy=[open_reject_modal])
    app.action(blocks.EDIT)(ack=acknowledge, lazy=[open_edit_modal])
