"""A proposed change to a channel's policy: the rules it would put in force, and each change in
the words a person approves.

A proposal names only the rules it changes (`KEY=VALUE`, as `reconbot policy propose` and the
`/recon policy` form give them); every other rule stays as it is in force. The result is a whole
policy, validated as a policy file is (`Policy`), so a proposal can never put in force rules a
policy file could not hold.
"""

from __future__ import annotations

import difflib
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agent.channel_policy import rules_of
from agent.data.policy import NUMBER_KEYS, RULE_KEYS, STATUS_KEYS, WORD_KEYS, Policy
from agent.errors import PolicyProposalError

MAX_VALUE_CHARS = 1000
"""The longest value a rule may be given (a list of status words): a request shows every
change whole, one section each, within Block Kit's 3,000 characters."""
APPROVED_SOURCE = "approved in the channel"
"""Where a version put in force by an approved change came from (with the request's id)."""

_NUMBER_WORDS = {
    "amount_tolerance_minor": "amounts agree within {n} minor unit(s) of their currency",
    "window_days_after": "a capture may be up to {n} days after its order",
    "window_hours_before": "a capture may be up to {n} hours before its order",
}
_LIST_WORDS = {
    "failed_payment_statuses": "payment statuses that mean a failed attempt (ignored)",
    "refunded_payment_statuses": "payment statuses that mean refunded",
    "voided_order_statuses": "order statuses that mean voided",
    "refunded_order_statuses": "order statuses that mean refunded",
    "paid_order_statuses": "order statuses that mean paid",
    "order_status_words": "the team's own order status words",
    "payment_value_words": "the team's own payment value words",
}


class PolicyEffect(BaseModel):
    """What a proposed policy would have changed on the channel's last approved
    reconciliation: its counts as approved, and as the same inputs reconcile under the
    proposed rules. Not a reconciliation of new data, so shown to everyone."""

    model_config = ConfigDict(frozen=True)

    investigation_id: str
    pause_id: str
    reconciled_at: datetime
    before: dict[str, int]
    after: dict[str, int]


class RuleChange(BaseModel):
    """One rule a proposal changes: its key, its value before and after, as people read them,
    and the change in words ("a capture may be up to 7 days after its order (was 30)")."""

    model_config = ConfigDict(frozen=True)

    key: str
    before: str
    after: str
    words: str


class PolicyChange(BaseModel):
    """What a policy-change request asks to approve: the channel, the version in force it
    changes, the rules it would put in force (and their version), each change in words, and
    its effect on the channel's last approved reconciliation (None: there is none)."""

    model_config = ConfigDict(frozen=True)

    channel: str
    before_version: str
    after_version: str
    after_rules: dict[str, Any]
    changes: list[RuleChange]
    effect: PolicyEffect | None = None
    effect_missing: str | None = None
    """Why the effect is not shown when the channel has an approved reconciliation (its files
    could not be reconciled again); None when it is shown or there is none."""

    def after(self) -> Policy:
        """The policy this change would put in force (its version is `after_version` while
        the rules are the ones proposed)."""
        return Policy.model_validate(self.after_rules)


def proposed_policy(current: Policy, changes: dict[str, str], *, source: str) -> Policy:
    """The policy `current` becomes with `changes` (rule key -> value as typed: a number, a
    comma-separated list of status words, or `word:meaning` pairs separated by commas).

    Raises PolicyProposalError naming the rule for an unknown key, a value that does not read,
    or rules a policy file could not hold.
    """
    if not changes:
        raise PolicyProposalError("name at least one rule to change, as KEY=VALUE")
    rules: dict[str, Any] = rules_of(current)
    for key, text in changes.items():
        if key not in RULE_KEYS:
            close = difflib.get_close_matches(key, RULE_KEYS, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise PolicyProposalError(
                f"no such rule; {hint}the rules are {', '.join(RULE_KEYS)}", key=key
            )
        rules[key] = _value(key, text)
    try:
        proposed = Policy.model_validate({**rules, "source": source})
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        wrong = str(first["loc"][0]) if first["loc"] else None
        words = str(first["msg"]).removeprefix("Value error, ")
        raise PolicyProposalError(words, key=wrong) from None
    return proposed


def rule_changes(before: Policy, after: Policy) -> list[RuleChange]:
    """Each rule whose value differs between `before` and `after`, in the order of the rules,
    in words."""
    was, now = before.rule_values(), after.rule_values()
    found = []
    for key in RULE_KEYS:
        if was[key] == now[key]:
            continue
        if key in NUMBER_KEYS:
            words = _NUMBER_WORDS[key].format(n=now[key]) + f" (was {was[key]})"
        else:
            words = f"{_LIST_WORDS[key]}: {now[key]} (was {was[key]})"
        found.append(RuleChange(key=key, before=was[key], after=now[key], words=words))
    return found


def rule_hint(key: str) -> str:
    """What rule `key` says and how its value is written, for a form."""
    if key in NUMBER_KEYS:
        return _NUMBER_WORDS[key].format(n="N") + " (a whole number)"
    if key in WORD_KEYS:
        return f"{_LIST_WORDS[key]}, as word:meaning separated by commas"
    return f"{_LIST_WORDS[key]}, separated by commas"


def _value(key: str, text: str) -> Any:
    """A typed value of rule `key` as the policy reads it."""
    text = text.strip()
    if len(text) > MAX_VALUE_CHARS:
        raise PolicyProposalError(
            f"is {len(text):,} characters long; a rule's value may have {MAX_VALUE_CHARS:,}",
            key=key,
        )
    if key in NUMBER_KEYS:
        try:
            return int(text)
        except ValueError:
            raise PolicyProposalError(f"must be a whole number (got {text!r})", key=key) from None
    items = [item.strip() for item in text.split(",") if item.strip()]
    if key in STATUS_KEYS:
        return items
    assert key in WORD_KEYS
    pairs = {}
    for item in items:
        word, colon, meaning = item.rpartition(":")
        if not colon or not word.strip():
            raise PolicyProposalError(
                f"write each word as word:meaning, e.g. Erledigt:paid (got {item!r})", key=key
            )
        pairs[word.strip()] = meaning.strip()
    return pairs
