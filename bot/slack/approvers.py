"""Who is deciding: the Slack user and the approver groups (user groups) they belong to.

Group membership is read from Slack (`usergroups.users.list`) and cached for a minute per
process; a group Slack will not list counts as empty for that click (nobody gains a right by
an error), and is not cached.
"""

from __future__ import annotations

import logging
import time

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.domain import Approver, ApproverPolicy

logger = logging.getLogger(__name__)

GROUP_CACHE_SECONDS = 60.0


class ApproverDirectory:
    """Turns a Slack user id into the `Approver` the guard checks."""

    def __init__(self, client: WebClient, policy: ApproverPolicy) -> None:
        self.client = client
        self.policy = policy
        self._groups: dict[str, tuple[float, frozenset[str]]] = {}

    def approver(self, user: str) -> Approver:
        """`user` with the approver groups of the policy they are a member of."""
        groups = [g for g in self.policy.approvers if g.startswith("S")]
        return Approver(user=user, groups=tuple(g for g in groups if user in self._members(g)))

    def _members(self, group: str) -> frozenset[str]:
        cached = self._groups.get(group)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        try:
            members = frozenset(self.client.usergroups_users_list(usergroup=group)["users"])
        except SlackApiError as error:
            # Unknown counts as empty for this click only: nobody gains a right by an error,
            # and the next click asks Slack again instead of refusing real approvers a minute.
            logger.warning("group=%s | members unknown: %s", group, error.response.get("error"))
            return frozenset()
        self._groups[group] = (time.monotonic() + GROUP_CACHE_SECONDS, members)
        return members
