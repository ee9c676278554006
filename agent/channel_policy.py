"""A channel's policy: the rules a team's channel reconciles under, kept in the database.

Each channel has one policy in force. Until a change is approved for a channel, its policy is
the seed: the process's configured policy (the TOML file `RECONBOT_POLICY` names, or the
built-in defaults). Each version put in force is a `PolicyRecord`: its rules (as a policy file
would write them), its version (`Policy.version`: the digest of the canonical rules), when and
by whom. Investigations outside any chat channel (the terminal's) share the policy of
`TERMINAL_CHANNEL`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent.data.policy import RULE_KEYS, WORD_KEYS, Policy

TERMINAL_CHANNEL = "(terminal)"
"""The channel key of investigations started outside a chat channel."""


def channel_key(channel: str | None) -> str:
    """The key a case's channel keeps its policy under (`TERMINAL_CHANNEL` for none)."""
    return channel or TERMINAL_CHANNEL


def rules_of(policy: Policy) -> dict[str, Any]:
    """`policy`'s rules as a policy file writes them (every key, defaults filled in, words in
    their order): the same policy reads back from them, shown as it was."""
    rules: dict[str, Any] = {}
    for key in RULE_KEYS:
        value = getattr(policy, key)
        if key in WORD_KEYS:
            rules[key] = dict(value)
        elif isinstance(value, tuple):
            rules[key] = list(value)
        else:
            rules[key] = value
    return rules


class PolicyRecord(BaseModel):
    """One version of a channel's policy, as it was put in force."""

    model_config = ConfigDict(frozen=True)

    channel: str
    version: str
    """The version when it was put in force (`Policy.version` of its rules)."""
    rules: dict[str, Any]
    since: datetime
    by: str
    """Who put it in force: the approver of the change, or `seed` for the configured policy."""
    source: str
    """Where it came from, for people: the policy file, the defaults, or the approved change."""
    pause_id: str | None = None
    """The approved policy-change request that put it in force (None for the seed)."""
    number: int = 0
    """Its place among the channel's versions (1 is the first; 0 until it is stored)."""

    def policy(self) -> Policy:
        """The policy these rules make (its version is this record's while the built-in
        vocabulary is unchanged)."""
        return Policy.model_validate({**self.rules, "source": self.source})


def record_of(
    channel: str,
    policy: Policy,
    *,
    since: datetime,
    by: str,
    source: str,
    pause_id: str | None = None,
) -> PolicyRecord:
    """The record of `policy` put in force for `channel`."""
    return PolicyRecord(
        channel=channel,
        version=policy.version,
        rules=rules_of(policy),
        since=since,
        by=by,
        source=source,
        pause_id=pause_id,
    )
