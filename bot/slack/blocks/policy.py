"""A policy-change request as posted in its channel: each rule it changes in words, the
versions, what it would have changed on the channel's last approved reconciliation, and
Approve / Edit / Reject. Everything it would put in force is shown: a policy holds a dozen rules."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    HeaderBlock,
    InputBlock,
    PlainTextInputElement,
)
from slack_sdk.models.views import View

from agent.approval import approval_parties, parties_in_words, requesters_of
from agent.data.policy import RULE_KEYS, Policy
from agent.domain import ApprovalRequest
from agent.policy_change import MAX_VALUE_CHARS, rule_hint
from agent.usecases.policies import ChannelPolicy
from bot.presentation.request_text import TITLES
from bot.slack.blocks.common import (
    MAX_HEADER,
    MAX_SECTION,
    Rendered,
    context,
    cut,
    dicts,
    escape,
    person,
    section,
    short_digest,
    when,
)
from bot.slack.ids import (
    APPROVE,
    EDIT,
    POLICY_EDIT_VIEW,
    POLICY_VIEW,
    REJECT,
    RULE_BLOCK_PREFIX,
    RULE_INPUT,
)
from bot.slack.payloads import ButtonValue, ModalMetadata

MAX_INPUT_CHARS = 3000
"""The most a plain-text input holds (Block Kit's `max_length` limit)."""


def policy_change_body(request: ApprovalRequest) -> list[Block]:
    """The blocks that describe a policy change (the live message and its final states)."""
    change = request.policy_change
    assert change is not None
    blocks: list[Block] = [
        HeaderBlock(text=cut(f"{TITLES[request.kind]} · {request.investigation_id}", MAX_HEADER)),
        section(f"{person(request.requested_by)} proposes, for this channel:"),
        # One section a change: a value is at most `MAX_VALUE_CHARS`, so none is ever cut.
        *(section(f"• {escape(c.words)}") for c in change.changes),
        section(
            f"Version in force `{short_digest(change.before_version)}` → proposed "
            f"`{short_digest(change.after_version)}`. Every other rule stays as it is in force "
            "(`/recon policy`)."
        ),
        section(_effect(request)),
    ]
    allowed, excluded = approval_parties(request.approver_policy, requesters_of(request))
    blocks.append(
        context(
            f"request {request.pause_id} · who may approve: "
            f"{parties_in_words(allowed, excluded, person)} · expires {when(request.expires_at)}"
        )
    )
    return blocks


def policy_change_message(request: ApprovalRequest) -> Rendered:
    """The policy change as posted: what it would put in force, and Approve / Edit / Reject
    (an edit is a new proposal on top of this one, for someone else to approve)."""
    value = ButtonValue(request.pause_id, request.authorization_identity).encode()
    buttons = ActionsBlock(
        block_id="decision",
        elements=[
            ButtonElement(
                text="Approve",
                action_id=APPROVE,
                value=value,
                style="primary",
                confirm=ConfirmObject(
                    title="Put these rules in force?",
                    text="Every reconciliation of this channel follows them from now on; its "
                    "requests made under the rules in force are made again.",
                    confirm="Approve",
                    deny="Cancel",
                ),
            ),
            ButtonElement(text="Edit", action_id=EDIT, value=value),
            ButtonElement(text="Reject", action_id=REJECT, value=value, style="danger"),
        ],
    )
    change = request.policy_change
    assert change is not None
    said = escape("; ".join(c.words for c in change.changes))  # notifications read it too
    return Rendered(
        f"{TITLES[request.kind]} for {request.investigation_id}: {said}",
        dicts([*policy_change_body(request), buttons]),
    )


def _effect(request: ApprovalRequest) -> str:
    change = request.policy_change
    assert change is not None
    effect = change.effect
    if effect is None and change.effect_missing:
        return f"Its effect is not shown: {escape(change.effect_missing)}."
    if effect is None:
        return "No reconciliation was approved in this channel yet: nothing to compare."
    names = sorted(set(effect.before) | set(effect.after))
    moved = [
        f"• {escape(name)}: {effect.before.get(name, 0):,} → {effect.after.get(name, 0):,}"
        for name in names
        if effect.before.get(name, 0) != effect.after.get(name, 0)
    ]
    head = (
        f"*On {escape(effect.investigation_id)}*, the reconciliation approved "
        f"{when(effect.reconciled_at)}, reconciled again under the proposed rules (not new "
        "data, so shown to everyone here):"
    )
    body = "\n".join(moved) if moved else "no count changes."
    return cut(f"{head}\n{body}", MAX_SECTION)


def rule_text(policy: Policy, key: str) -> str:
    """A rule's value as the form and `/recon policy propose` write it: a number, status words
    separated by commas, or `word:meaning` pairs separated by commas."""
    value = getattr(policy, key)
    if isinstance(value, int):
        return str(value)
    if value and isinstance(value[0], tuple):
        return ", ".join(f"{word}:{meaning}" for word, meaning in value)
    return ", ".join(value)


def policy_modal(shown: ChannelPolicy, channel: str, team: str | None = None) -> dict[str, Any]:
    """`/recon policy`: the channel's policy in force (its version, where it came from, the
    versions before it) and every rule as today, to propose new values (submitted: a
    policy-change request in the channel, for someone else to approve)."""
    policy = shown.policy
    history = (
        "the configured policy (no change approved in this channel)"
        if shown.seeded
        else f"{len(shown.history)} versions put in force here; the latest "
        f"{when(shown.history[-1].since)} by {person(shown.history[-1].by)}"
    )
    blocks: list[Block] = [
        section(
            f"Version in force `{short_digest(policy.version)}`: {history}. Change the values "
            "you want to change: the change is posted in the channel for someone else to approve."
        ),
        *_rule_inputs(policy),
    ]
    view = View(
        type="modal",
        callback_id=POLICY_VIEW,
        title="Channel policy",
        submit="Propose",
        close="Cancel",
        private_metadata=json.dumps({"channel": channel, "team": team}),
        blocks=blocks,
    )
    return view.to_dict()


def policy_edit_modal(request: ApprovalRequest, metadata: ModalMetadata) -> dict[str, Any]:
    """Edit on a policy-change request: every rule as the request proposes it, to change
    further. Submitted, it is a new proposal on top of this one (naming its proposer and the
    editor, neither of whom may approve it) and this request is superseded."""
    change = request.policy_change
    assert change is not None
    said = "; ".join(c.words for c in change.changes)
    blocks: list[Block] = [
        section(
            cut(
                f"Request {escape(request.pause_id)} proposes: {escape(said)}. Change any value "
                "below: your edit is a new proposal, posted for someone other than you and its "
                "proposer to approve; this request is then superseded.",
                MAX_SECTION,
            )
        ),
        *_rule_inputs(change.after()),
    ]
    view = View(
        type="modal",
        callback_id=POLICY_EDIT_VIEW,
        title="Edit the proposal",
        submit="Propose",
        close="Cancel",
        private_metadata=metadata.encode(),
        blocks=blocks,
    )
    return view.to_dict()


def _rule_inputs(policy: Policy) -> list[Block]:
    """One optional text input a rule, holding `policy`'s value, with what the rule says. A
    value longer than Slack lets an input hold (a policy file's long word list) is said
    instead, with where to see it whole and how to change it: never shown cut in an input,
    where submitting it would propose the cut value."""
    blocks: list[Block] = []
    for key in RULE_KEYS:
        text = rule_text(policy, key)
        if len(text) > MAX_INPUT_CHARS:
            blocks.append(
                section(
                    f"*{key}*: {len(text):,} characters, more than this form holds: "
                    "`/recon policy show` shows it whole; change it with "
                    f"`/recon policy propose {key}=…`."
                )
            )
            continue
        blocks.append(
            InputBlock(
                block_id=f"{RULE_BLOCK_PREFIX}{key}",
                label=cut(key, 2000),
                optional=True,
                element=PlainTextInputElement(
                    action_id=RULE_INPUT,
                    initial_value=text or None,
                    max_length=max(MAX_VALUE_CHARS, len(text)),
                ),
                hint=cut(rule_hint(key), 2000),
            )
        )
    return blocks
