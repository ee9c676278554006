"""Each channel's policy as people read it: the version in force and how it came to be.

Until a change is approved for a channel its policy is the seed (the configured policy file, or
the built-in defaults); every version put in force since is kept, with when, by whom and from
which request (`agent.channel_policy`).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.channel_policy import PolicyRecord, channel_key
from agent.data.policy import Policy
from agent.dependencies import Dependencies


@dataclass(frozen=True)
class ChannelPolicy:
    """A channel's policy in force and its history (oldest first; empty under the seed)."""

    channel: str
    policy: Policy
    history: list[PolicyRecord]

    @property
    def seeded(self) -> bool:
        """Whether the channel is still under the seed (no change approved there yet)."""
        return not self.history


class Policies:
    """Read each channel's policy (changes to it are requests a person approves)."""

    def __init__(self, deps: Dependencies) -> None:
        self.deps = deps

    def of_channel(self, channel: str | None) -> ChannelPolicy:
        """The policy in force in `channel` (None: the terminal's cases) and its history."""
        key = channel_key(channel)
        with self.deps.uow() as uow:
            history = uow.policies.history(key)
        policy = history[-1].policy() if history else self.deps.settings.policy
        return ChannelPolicy(key, policy, history)
