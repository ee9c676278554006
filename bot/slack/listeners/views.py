"""View submission listeners: the Reject modal (a reason is required), the Edit mapping
modal (at least one field changed) and the policy forms (`/recon policy` and Edit on a
policy-change request: at least one rule changed, every value readable). Form problems are
answered in the modal itself.
"""

from __future__ import annotations

import json
from typing import Any

from slack_bolt import Ack, App

from agent.errors import MalformedRequestError
from bot.slack import blocks
from bot.slack.ids import POLICY_EDIT_VIEW, POLICY_VIEW
from bot.slack.listeners.deps import ListenerDeps, bound
from bot.slack.payloads import NOT_ISSUED, ModalMetadata, option_lines_problem
from bot.slack.policy_form import checked_rules, rule_blocks


def edited_fields(view: dict[str, Any]) -> dict[str, str]:
    """The fields whose column the person changed: `role.field` -> chosen column position, and
    each file's reading options as written: `options.role` -> the text."""
    view = _dict(view)
    values = _dict(_dict(view.get("state")).get("values"))
    changed: dict[str, str] = {}
    for block in input_blocks(view):
        block_id = block["block_id"]
        entered = _dict(values.get(block_id))
        if block_id.startswith(blocks.OPTIONS_BLOCK_PREFIX):
            text = _dict(entered.get(blocks.OPTIONS_INPUT)).get("value")
            if isinstance(text, str) and text.strip():
                changed[block_id] = text
            continue
        initial = _dict(_dict(block.get("element")).get("initial_option")).get("value")
        chosen = _dict(_dict(entered.get(blocks.COLUMN_INPUT)).get("selected_option")).get("value")
        if isinstance(chosen, str) and chosen != initial:
            changed[block_id] = chosen
    return changed


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def input_blocks(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The view's input blocks that have a block id (as every input the bot renders has)."""
    found = view.get("blocks")
    return [
        b
        for b in (found if isinstance(found, list) else [])
        if isinstance(b, dict) and b.get("type") == "input" and isinstance(b.get("block_id"), str)
    ]


def _reason(view: dict[str, Any]) -> str:
    values = _dict(_dict(view.get("state")).get("values"))
    reason = _dict(_dict(values.get(blocks.REASON_BLOCK)).get(blocks.REASON_INPUT)).get("value")
    return reason if isinstance(reason, str) else ""


def _user(body: dict[str, Any]) -> str | None:
    user = _dict(body.get("user")).get("id")
    return user if isinstance(user, str) and user else None


def register(app: App, deps: ListenerDeps) -> None:
    """Register the view listeners."""
    app.view(blocks.REJECT_VIEW)(bound(on_reject, deps))
    app.view(blocks.EDIT_VIEW)(bound(on_edit, deps))
    app.view(POLICY_VIEW)(bound(on_policy, deps))
    app.view(POLICY_EDIT_VIEW)(bound(on_policy_edit, deps))


def on_policy(deps: ListenerDeps, ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
    """The `/recon policy` form submitted: at least one rule changed, by a member of the
    channel; then the proposal is enqueued (it is posted in the channel)."""
    view, user = _dict(view), _user(body)
    try:
        where = _dict(json.loads(str(view.get("private_metadata") or "")))
    except ValueError:
        where = {}
    channel, team = where.get("channel"), where.get("team")
    first = next((b["block_id"] for b in input_blocks(view)), "")
    if not first or (team is not None and not isinstance(team, str)):
        ack(response_action="errors", errors={blocks.REASON_BLOCK: NOT_ISSUED})
        return
    if (
        user is None
        or not isinstance(channel, str)
        or channel not in deps.visibility.channels_of(user)
    ):
        ack(response_action="errors", errors={first: "Propose in a channel you are a member of."})
        return
    changes, errors = checked_rules(view, "Change at least one value to propose.")
    if errors:
        ack(response_action="errors", errors=errors)
        return
    ack()
    deps.handlers.jobs.propose_policy(channel, user, changes, team)


def on_policy_edit(
    deps: ListenerDeps, ack: Ack, body: dict[str, Any], view: dict[str, Any]
) -> None:
    """Edit on a policy-change request submitted: at least one rule changed from what it
    proposes and every value readable, else the form says why beside the rule; then the edit
    (a new proposal on top of it) is enqueued, decided by the guard."""
    view, user = _dict(view), _user(body)
    rules = rule_blocks(view)
    if not rules:
        ack(response_action="update", view=blocks.message_modal("Edit the proposal", NOT_ISSUED))
        return
    first = rules[0]["block_id"]
    changes, errors = checked_rules(view, "Change at least one value, or cancel.")
    if errors:
        ack(response_action="errors", errors=errors)
        return
    try:
        metadata, clicker = _issued(view, user)
    except MalformedRequestError as error:
        ack(response_action="errors", errors={first: str(error)})
        return
    ack()
    deps.handlers.jobs.edit(metadata, clicker, changes)


def on_reject(deps: ListenerDeps, ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
    """The Reject modal submitted: a reason is required; then the rejection is enqueued."""
    view, user = _dict(view), _user(body)
    reason = _reason(view)
    if not reason.strip():
        ack(
            response_action="errors",
            errors={blocks.REASON_BLOCK: "Say why you reject the request."},
        )
        return
    try:
        metadata, clicker = _issued(view, user)
    except MalformedRequestError as error:
        ack(response_action="errors", errors={blocks.REASON_BLOCK: str(error)})
        return
    ack()
    deps.handlers.jobs.reject(metadata, clicker, reason.strip())


def on_edit(deps: ListenerDeps, ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
    """The Edit mapping modal submitted: at least one field changed and every file's options
    well formed, else the form says why; then the edit is enqueued."""
    view, user = _dict(view), _user(body)
    changed = edited_fields(view)
    inputs = [b["block_id"] for b in input_blocks(view)]
    if not inputs:  # not a form reconbot issued: nothing done, and the person is told
        ack(
            response_action="update",
            view=blocks.message_modal("Edit the mapping", NOT_ISSUED),
        )
        return
    if not changed:
        ack(
            response_action="errors",
            errors={inputs[0]: "Choose a different column for at least one field, or cancel."},
        )
        return
    problems = {
        block_id: problem
        for block_id, text in changed.items()
        if block_id.startswith(blocks.OPTIONS_BLOCK_PREFIX)
        and (
            problem := option_lines_problem(
                text, block_id.removeprefix(blocks.OPTIONS_BLOCK_PREFIX)
            )
        )
    }
    if problems:
        ack(response_action="errors", errors=problems)
        return
    try:
        metadata, clicker = _issued(view, user)
    except MalformedRequestError as error:
        ack(response_action="errors", errors={inputs[0]: str(error)})
        return
    ack()
    deps.handlers.jobs.edit(metadata, clicker, changed)


def _issued(view: dict[str, Any], user: str | None) -> tuple[ModalMetadata, str]:
    """The request a submitted form is about, as the bot issued it with the form, and who
    submitted it; a form without either was not issued by the bot (`MalformedRequestError`)."""
    metadata = ModalMetadata.decode(view.get("private_metadata"))
    if user is None:
        raise MalformedRequestError(NOT_ISSUED)
    return metadata, user
