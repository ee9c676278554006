"""The rules a person submitted in a policy form (`/recon policy`, or Edit on a policy-change
request), read from the view's state, and checked before the form closes: a value that does not
read is said beside its rule, while the person can still mend it."""

from __future__ import annotations

from typing import Any

from agent.data.policy import Policy
from agent.errors import PolicyProposalError
from agent.policy_change import proposed_policy
from bot.slack.ids import RULE_BLOCK_PREFIX, RULE_INPUT


def rule_blocks(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The form's rule inputs, in their order (each has its rule in its block id)."""
    found = view.get("blocks")
    return [
        b
        for b in (found if isinstance(found, list) else [])
        if isinstance(b, dict)
        and b.get("type") == "input"
        and isinstance(b.get("block_id"), str)
        and b["block_id"].startswith(RULE_BLOCK_PREFIX)
    ]


def submitted_rules(view: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """Every rule as submitted (key -> text: what was typed, or the value the form showed when
    nothing was sent for it) and those the person changed."""
    values = _dict(_dict(view.get("state")).get("values"))
    every: dict[str, str] = {}
    changed: dict[str, str] = {}
    for block in rule_blocks(view):
        key = block["block_id"].removeprefix(RULE_BLOCK_PREFIX)
        initial = str(_dict(block.get("element")).get("initial_value") or "")
        sent = _dict(values.get(block["block_id"]))
        entered = _dict(sent.get(RULE_INPUT)).get("value") if RULE_INPUT in sent else initial
        text = entered if isinstance(entered, str) else ""
        every[key] = text
        if text.strip() != initial.strip():
            changed[key] = text
    return every, changed


def form_problems(view: dict[str, Any]) -> dict[str, str]:
    """Why the rules the person changed cannot make a policy, by block id (the changed rule's
    input); empty when they can, or when the problem lies in a value the person did not
    change (the proposal decides that one, on the policy in force)."""
    every, changed = submitted_rules(view)
    if not changed:
        return {}
    try:
        proposed_policy(Policy(), every, source="the form")
    except PolicyProposalError as error:
        if error.key not in changed:
            # Not what the person typed (a value the form showed as it is in force, such as
            # a policy file's longer word list): the proposal itself decides, on the policy
            # in force, and says why to its proposer.
            return {}
        return {f"{RULE_BLOCK_PREFIX}{error.key}": str(error)[:2000]}
    return {}


def checked_rules(view: dict[str, Any], unchanged: str) -> tuple[dict[str, str], dict[str, str]]:
    """The rules the person changed, and what the form must say before it closes, by block
    id: `unchanged` beside the first rule when none changed, else each value that does not
    read (`form_problems`); no errors when the proposal can be made."""
    _, changes = submitted_rules(view)
    rules = rule_blocks(view)
    if not changes and rules:
        return changes, {rules[0]["block_id"]: unchanged}
    return changes, form_problems(view)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
