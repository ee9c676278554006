"""What a stand-in workspace is made of: files, conversations and messages, and the ids and
scopes of the one app installed in it.
"""

from __future__ import annotations

import copy
import time
import urllib.parse
from dataclasses import dataclass, field, replace
from typing import Any

TEAM_ID = "T0STANDIN"
BOT_USER = "U0BOT"
BOT_ID = "B0BOT"
APP_ID = "A0RECONBOT"
TRIGGER_TTL_SECONDS = 3.0
# The scopes the stand-in's bot token is granted (manifest.yml's, and the read scopes of the
# Conversations API); a test takes one away with `revoke_scope`.
BOT_SCOPES = (
    "app_mentions:read",
    "channels:history",
    "channels:read",
    "chat:write",
    "commands",
    "files:read",
    "files:write",
    "groups:history",
    "groups:read",
    "im:read",
    "mpim:read",
    "reactions:write",
    "usergroups:read",
)


@dataclass
class StoredFile:
    """A file someone shared, with its bytes and how its download behaves."""

    id: str
    name: str
    filetype: str
    mimetype: str
    content: bytes
    user: str
    created: int
    serve_as: str = "file"  # "file", "signin" (Slack's HTML sign-in page) or "stall"
    title: str = ""

    def info(self, base_url: str) -> dict[str, Any]:
        """The file object of `files.info`."""
        name = urllib.parse.quote(self.name)
        url = f"{base_url}files-pri/{TEAM_ID}-{self.id}/{name}"
        return {
            "id": self.id,
            "name": self.name,
            "title": self.title or self.name,
            "filetype": self.filetype,
            "mimetype": self.mimetype,
            "size": len(self.content),
            "user": self.user,
            "created": self.created,
            "url_private": url,
            "url_private_download": url.replace(f"/{name}", f"/download/{name}"),
        }


CONVERSATION_KINDS = ("public_channel", "private_channel", "mpim", "im")
MIMETYPES = {
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "pdf": "application/pdf",
}


def filetype_of(name: str) -> str:
    """Slack's filetype for a file name."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return {"csv": "csv", "tsv": "tsv", "png": "png", "pdf": "pdf", "xlsx": "xlsx"}.get(
        suffix, "text"
    )


def mimetype_of(name: str) -> str:
    """The MIME type Slack gives a file of this name (`application/octet-stream` when unknown)."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return MIMETYPES.get(suffix, "application/octet-stream")


@dataclass
class Channel:
    """A conversation: a public or private channel, a group DM or a DM, with its members."""

    id: str
    name: str
    kind: str = "public_channel"
    members: set[str] = field(default_factory=set)
    default: bool = False
    archived: bool = False
    created: int = field(default_factory=lambda: int(time.time()))

    def info(self) -> dict[str, Any]:
        """The limited conversation object of `users.conversations` (no `is_member`, no
        `num_members`, as Slack omits them there)."""
        if self.kind == "im":
            user = next((m for m in sorted(self.members) if m != BOT_USER), BOT_USER)
            return {
                "id": self.id,
                "created": self.created,
                "is_archived": self.archived,
                "is_im": True,
                "is_org_shared": False,
                "context_team_id": TEAM_ID,
                "user": user,
                "is_user_deleted": False,
                "priority": 0,
            }
        return {
            "id": self.id,
            "name": self.name,
            "name_normalized": self.name,
            "created": self.created,
            "creator": BOT_USER,
            "is_channel": self.kind in ("public_channel", "private_channel"),
            "is_group": False,
            "is_im": False,
            "is_mpim": self.kind == "mpim",
            "is_private": self.kind != "public_channel",
            "is_archived": self.archived,
            "is_general": self.default,
            "is_shared": False,
            "is_org_shared": False,
            "is_ext_shared": False,
            "is_pending_ext_shared": False,
            "context_team_id": TEAM_ID,
            "unlinked": 0,
            "previous_names": [],
            "topic": {"value": "", "creator": "", "last_set": 0},
            "purpose": {"value": "", "creator": "", "last_set": 0},
        }


@dataclass
class Message:
    """A message in a channel, as it looks now, with every earlier version kept."""

    channel: str
    ts: str
    user: str
    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    thread_ts: str | None = None
    bot_id: str | None = None
    files: list[StoredFile] = field(default_factory=list)
    reactions: list[str] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)

    def snapshot(self) -> Message:
        """The message as a person's screen shows it now; clicking it later is a stale click."""
        return replace(self, blocks=copy.deepcopy(self.blocks), history=[], files=list(self.files))

    def action_ids(self) -> list[str]:
        """The action ids of the interactive elements the message shows now."""
        return [
            element.get("action_id", "")
            for block in self.blocks
            if block.get("type") == "actions"
            for element in block.get("elements", [])
        ] + [
            block["accessory"].get("action_id", "")
            for block in self.blocks
            if isinstance(block.get("accessory"), dict)
        ]

    def element(self, action_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The (block, element) with `action_id`; KeyError if the message has none."""
        for block in self.blocks:
            elements = list(block.get("elements", [])) if block.get("type") == "actions" else []
            if isinstance(block.get("accessory"), dict):
                elements.append(block["accessory"])
            for element in elements:
                if element.get("action_id") == action_id:
                    return block, element
        raise KeyError(
            f"message {self.ts} has no element {action_id!r}; it has {self.action_ids()}"
        )

    def all_text(self) -> str:
        """The message text and every text in its blocks, for assertions."""
        parts = [self.text]
        _collect_text(self.blocks, parts)
        return "\n".join(parts)


def _collect_text(node: Any, parts: list[str]) -> None:
    if isinstance(node, dict):
        if node.get("type") in ("mrkdwn", "plain_text") and isinstance(node.get("text"), str):
            parts.append(node["text"])
        for value in node.values():
            _collect_text(value, parts)
    elif isinstance(node, list):
        for item in node:
            _collect_text(item, parts)


@dataclass
class Fault:
    """A scripted failure of the next call to a Web API method."""

    status: int
    retry_after: int | None
    error: str
