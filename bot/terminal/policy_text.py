"""A channel's policy in force, and how it came to be, as lines for a terminal."""

from __future__ import annotations

from agent.usecases.policies import ChannelPolicy


def policy_lines(shown: ChannelPolicy) -> list[str]:
    """Where the policy in force came from in its channel, then each version put in force
    there, oldest first (none while the channel is under the configured policy)."""
    if shown.seeded:
        return [
            f"in force in {shown.channel}: the configured policy (no change approved there)",
            "",
        ]
    lines = [f"in force in {shown.channel} (oldest first):"]
    for record in shown.history:
        request = f", request {record.pause_id}" if record.pause_id else ""
        lines.append(
            f"  {record.version}  since {record.since:%Y-%m-%d %H:%M} UTC, by {record.by}"
            f" ({record.source}{request})"
        )
    lines.append("")
    return lines
