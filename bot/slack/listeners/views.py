"""View submission listeners: the Reject modal (a reason is required) and the Edit mapping
modal (at least one field changed). Form problems are answered in the modal itself.
"""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App

from agent.errors import MalformedRequestError
from bot.slack import blocks
from bot.slack.handlers import Handlers
from bot.slack.payloads import ModalMetadata, option_lines_problem


def edited_fields(view: dict[str, Any]) -> dict[str, str]:
    """The fields whose column the person changed: `role.field` -> chosen column position, and
    each file's reading options as written: `options.role` -> the text."""
    values = (view.get("state") or {}).get("values") or {}
    changed = {}
    for block in view.get("blocks") or []:
        if block.get("type") != "input":
            continue
        block_id = block.get("block_id", "")
        if block_id.startswith(blocks.OPTIONS_BLOCK_PREFIX):
            text = ((values.get(block_id) or {}).get(blocks.OPTIONS_INPUT) or {}).get("value")
            if text and text.strip():
                changed[block_id] = str(text)
            continue
        initial = (block.get("element") or {}).get("initial_option") or {}
        chosen = ((values.get(block_id) or {}).get(blocks.COLUMN_INPUT) or {}).get(
            "selected_option"
        ) or {}
        if chosen.get("value") is not None and chosen.get("value") != initial.get("value"):
            changed[block_id] = str(chosen["value"])
    return changed


def register(app: App, handlers: Handlers) -> None:
    """Register the view listeners."""

    @app.view(blocks.REJECT_VIEW)
    def on_reject(ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        values = view["state"]["values"]
        reason = ((values.get(blocks.REASON_BLOCK) or {}).get(blocks.REASON_INPUT) or {}).get(
            "value"
        ) or ""
        if not reason.strip():
            ack(
                response_action="errors",
                errors={blocks.REASON_BLOCK: "Say why you reject the request."},
            )
            return
        try:
            metadata = ModalMetadata.decode(view.get("private_metadata"))
        except MalformedRequestError as error:
            ack(response_action="errors", errors={blocks.REASON_BLOCK: str(error)})
            return
        ack()
        handlers.work.submit(
            handlers.decisions.reject, metadata, str(body["user"]["id"]), reason.strip()
        )

    @app.view(blocks.EDIT_VIEW)
    def on_edit(ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        changed = edited_fields(view)
        inputs = [b["block_id"] for b in view.get("blocks") or [] if b.get("type") == "input"]
        if not changed:
            ack(
                response_action="errors",
                errors={inputs[0]: "Choose a different column for at least one field, or cancel."}
                if inputs
                else {},
            )
            return
        problems = {
            block_id: problem
            for block_id, text in changed.items()
            if block_id.startswith(blocks.OPTIONS_BLOCK_PREFIX)
            and (problem := option_lines_problem(text))
        }
        if problems:
            ack(response_action="errors", errors=problems)
            return
        try:
            metadata = ModalMetadata.decode(view.get("private_metadata"))
        except MalformedRequestError as error:
            ack(response_action="errors", errors={inputs[0]: str(error)})
            return
        ack()
        handlers.work.submit(handlers.decisions.edit, metadata, str(body["user"]["id"]), changed)
