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

from agent.domain import ApprovalRequest, PauseKind
from agent.errors import ApprovalRefusedError, MalformedRequestError
from bot.slack import blocks
from bot.slack.listeners.deps import ListenerDeps, bound
from bot.slack.payloads import ButtonValue, ClarificationAnswer, Click, ModalMetadata

logger = logging.getLogger(__name__)


def register(app: App, deps: ListenerDeps) -> None:
    """Register the action listeners."""
    app.action(blocks.APPROVE)(bound(on_approve, deps))
    app.action(blocks.RETRY)(bound(on_approve, deps))
    app.action(blocks.INVESTIGATE_AGAIN)(bound(on_investigate_again, deps))
    app.action(re.compile(f"^{blocks.ANSWER}:"))(bound(on_answer, deps))
    app.action(blocks.REJECT)(ack=acknowledge, lazy=[bound(open_reject_modal, deps)])
    app.action(blocks.EDIT)(ack=acknowledge, lazy=[bound(open_edit_modal, deps)])


def on_approve(deps: ListenerDeps, ack: Ack, body: dict[str, Any]) -> None:
    """Approve, or Retry on a failure message (the same decision: the guard lets a failed
    pause be claimed again): enqueue it; the guard runs in the job."""
    ack()
    click = _click(body)
    button = _decision(deps, click) if click else None
    if click is not None and button is not None:
        deps.handlers.jobs.approve(click, button)


def on_investigate_again(deps: ListenerDeps, ack: Ack, body: dict[str, Any]) -> None:
    """ "Try again" after the model could not take its turn: enqueue the inspection."""
    ack()
    click = _click(body)
    if click is not None:
        deps.handlers.jobs.investigate_again(click)


def on_answer(deps: ListenerDeps, ack: Ack, body: dict[str, Any]) -> None:
    """A clarification answered with its select: enqueue the edit it makes."""
    ack()
    click = _click(body)
    if click is None:
        return
    try:
        answer = ClarificationAnswer.from_body(body)
    except MalformedRequestError as error:
        _refuse(deps, click, error)
        return
    deps.handlers.jobs.answer(click, answer)


def acknowledge(ack: Ack) -> None:
    """Acknowledge at once; the modal is opened by the lazy listener."""
    ack()


def open_reject_modal(deps: ListenerDeps, body: dict[str, Any], client: WebClient) -> None:
    """Open the Reject modal for a request the guard still lets the clicker decide."""
    click = _click(body)
    found = _pending(deps, click) if click else None
    if click is not None and found is not None:
        metadata, request = found
        client.views_open(trigger_id=click.trigger_id, view=blocks.reject_modal(request, metadata))


def open_edit_modal(deps: ListenerDeps, body: dict[str, Any], client: WebClient) -> None:
    """Open a loading modal at once (the trigger id is short-lived), then let the decision
    lane fill it with the edit form once the files' headers are read. A policy change's form
    (its proposed rules) is opened at once."""
    click = _click(body)
    found = _pending(deps, click) if click else None
    if click is not None and found is not None:
        metadata, request = found
        if request.kind is PauseKind.POLICY_CHANGE:  # its rules are in the request: no files
            client.views_open(
                trigger_id=click.trigger_id, view=blocks.policy_edit_modal(request, metadata)
            )
            return
        opened = client.views_open(
            trigger_id=click.trigger_id, view=blocks.loading_modal("Edit the mapping")
        )
        handlers = deps.handlers
        handlers.work.decide(
            handlers.decisions.show_edit_modal, opened["view"]["id"], request, metadata
        )


def _click(body: dict[str, Any]) -> Click | None:
    """The click, or None (logged) for a payload without a clicker or a channel: there is
    nobody to tell, and nothing is done."""
    try:
        return Click.from_body(body)
    except MalformedRequestError:
        logger.warning("a block action without a user or a channel; ignored")
        return None


def _refuse(deps: ListenerDeps, click: Click, error: Exception) -> None:
    """Tell the clicker alone why nothing is done, from the decision lane."""
    handlers = deps.handlers
    handlers.work.decide(
        handlers.messages.refuse, click.channel, click.user, click.thread_ts, error
    )


def _decision(deps: ListenerDeps, click: Click) -> ButtonValue | None:
    """The decision button's value, or None after telling the clicker it is not ours."""
    try:
        return ButtonValue.decode(click.value)
    except MalformedRequestError as error:
        logger.warning("user=%s | a decision button that reconbot did not issue", click.user)
        _refuse(deps, click, error)
        return None


def _pending(deps: ListenerDeps, click: Click) -> tuple[ModalMetadata, ApprovalRequest] | None:
    """The metadata for a decision modal, or None after telling the clicker why not."""
    button = _decision(deps, click)
    if button is None:
        return None
    try:
        state = deps.service.decisions.decidable(
            button.pause_id, button.authorization, click.origin
        )
    except ApprovalRefusedError as refusal:
        _refuse(deps, click, refusal)
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
