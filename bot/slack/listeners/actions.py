"""Block action listeners: Approve, Retry, Edit mapping, Reject, and a clarification's answer.

Each acknowledges before anything else, then hands the click to the investigation threads,
where the guard decides. Modals open straight away (a trigger id lasts three seconds).
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from agent.domain import ApprovalRequest
from agent.errors import ApprovalRefusedError, MalformedRequestError
from agent.workflow import InvestigationService
from bot.slack import blocks
from bot.slack.payloads import ButtonValue, ModalMetadata
from bot.slack.threads import InvestigationThreads


def register(app: App, service: InvestigationService, threads: InvestigationThreads) -> None:
    """Register the action listeners."""

    @app.action(blocks.APPROVE)
    def on_approve(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        threads.submit(threads.approve, body)

    @app.action(blocks.RETRY)
    def on_retry(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        threads.submit(threads.approve, body)

    @app.action(blocks.INVESTIGATE_AGAIN)
    def on_investigate_again(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        threads.submit(threads.investigate_again, body)

    @app.action(re.compile(f"^{blocks.ANSWER}:"))
    def on_answer(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        threads.submit(threads.answer, body)

    def _pending(body: dict[str, Any]) -> tuple[ModalMetadata, ApprovalRequest] | None:
        """The metadata for a decision modal, or None after telling the clicker why not."""
        channel = str(body["channel"]["id"])
        user = str(body["user"]["id"])
        message = body.get("message") or {}
        thread_ts = message.get("thread_ts")
        try:
            button = ButtonValue.decode(body["actions"][0].get("value"))
        except MalformedRequestError as error:
            threads.submit(threads.refuse, channel, user, thread_ts, error)
            return None
        try:
            state = service.decidable(button.pause_id)
        except ApprovalRefusedError as refusal:
            threads.submit(threads.refuse, channel, user, thread_ts, refusal)
            return None
        metadata = ModalMetadata(
            pause_id=button.pause_id,
            authorization=button.authorization,
            channel=channel,
            message_ts=str(message.get("ts", "")),
        )
        return metadata, state.request

    @app.action(blocks.REJECT)
    def on_reject(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        found = _pending(body)
        if found is not None:
            metadata, request = found
            client.views_open(
                trigger_id=body["trigger_id"], view=blocks.reject_modal(request, metadata)
            )

    @app.action(blocks.EDIT)
    def on_edit(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        found = _pending(body)
        if found is not None:
            metadata, request = found
            opened = client.views_open(
                trigger_id=body["trigger_id"], view=blocks.loading_modal("Edit the mapping")
            )
            threads.submit(threads.show_edit_modal, opened["view"]["id"], request, metadata)
