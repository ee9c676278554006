"""The Conversations API of the stand-in (`users.conversations`): Slack's scopes, membership
rules and cursor pagination."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from workspace.slack.calls import ApiError, Call
from workspace.slack.workspace import BOT_USER, CONVERSATION_KINDS, Channel

# The scope a conversation type needs in the Conversations API methods.
CONVERSATION_SCOPES = {
    "public_channel": "channels:read",
    "private_channel": "groups:read",
    "mpim": "mpim:read",
    "im": "im:read",
}
DEFAULT_PAGE = 100
MAX_PAGE = 999


def _limit(value: Any) -> int:
    """A page size: default 100, at most 999, as Slack's cursor-paginated methods take it."""
    if value in (None, ""):
        return DEFAULT_PAGE
    try:
        limit = int(value)
    except (TypeError, ValueError):
        raise ApiError("invalid_limit") from None
    if not 1 <= limit <= MAX_PAGE:
        raise ApiError("invalid_limit", f"limit must be 1 to {MAX_PAGE}")
    return limit


def _cursor_of(key: str) -> str:
    """An opaque cursor, as Slack's look (`dXNlcjpVMDYxTkZUVDI=` is `user:U061NFTT2`)."""
    return base64.b64encode(key.encode()).decode()


def _page(call: Call, ids: list[str], prefix: str) -> tuple[list[str], str]:
    """One page of `ids` from the call's cursor and limit, and the next cursor ("" at the
    end, as Slack answers on the last page)."""
    limit = _limit(call.args.get("limit"))
    start = 0
    cursor = call.args.get("cursor")
    if cursor:
        try:
            key = base64.b64decode(str(cursor), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise ApiError("invalid_cursor") from None
        if not key.startswith(prefix) or key[len(prefix) :] not in ids:
            raise ApiError("invalid_cursor")
        start = ids.index(key[len(prefix) :])
    page = ids[start : start + limit]
    rest = ids[start + limit :]
    return page, _cursor_of(prefix + rest[0]) if rest else ""


def _needs_scopes(call: Call, scopes: list[str]) -> None:
    """`missing_scope` naming the first scope the bot token lacks, as Slack answers."""
    granted = call.workspace.scopes
    for scope in scopes:
        if scope not in granted:
            raise ApiError("missing_scope", needed=scope, provided=",".join(sorted(granted)))


def users_conversations(call: Call) -> dict[str, Any]:
    """users.conversations: the conversations a person is in, of the given types, paginated.
    With a bot token Slack lists a person's public channels, and the private channels, group
    DMs and DMs only where the bot is a member too; the bot's own when no `user` is given."""
    workspace = call.workspace
    types = [t.strip() for t in str(call.args.get("types") or "public_channel").split(",")]
    if not types or any(t not in CONVERSATION_KINDS for t in types):
        raise ApiError("invalid_types")
    _needs_scopes(call, [CONVERSATION_SCOPES[t] for t in types])
    user = str(call.args.get("user") or BOT_USER)
    if user not in workspace.users:
        raise ApiError("user_not_found")
    exclude_archived = str(call.args.get("exclude_archived", "")).lower() in ("1", "true")

    def listed(channel: Channel) -> bool:
        """Whether Slack lists `channel` for this call."""
        return (
            channel.kind in types
            and user in channel.members
            and (channel.kind == "public_channel" or BOT_USER in channel.members)
            and not (exclude_archived and channel.archived)
        )

    with workspace.condition:
        found = {c.id: c for c in workspace.channels.values() if listed(c)}
    page, next_cursor = _page(call, list(found), "channel:")
    return {
        "channels": [found[i].info() for i in page],
        "response_metadata": {"next_cursor": next_cursor},
    }
