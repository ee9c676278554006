"""What the page shows one person: the channel's messages and files, the ephemeral messages
and modals that are theirs alone, and who is in the workspace. The page renders it; nothing
here is HTML (the page escapes every text it shows)."""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from typing import TYPE_CHECKING, Any

from workspace.local.people import CHANNEL, CHANNEL_NAME
from workspace.slack import Message, StoredFile
from workspace.slack.models import BOT_USER

if TYPE_CHECKING:
    from workspace.local.app import LocalWorkspace


def file_url(stored: StoredFile) -> str:
    """Where the page downloads (or shows) a file of the channel."""
    return f"/local/files/{stored.id}/{urllib.parse.quote(stored.name)}"


def _file(stored: StoredFile) -> dict[str, Any]:
    return {
        "id": stored.id,
        "name": stored.name,
        "title": stored.title or stored.name,
        "mimetype": stored.mimetype,
        "size": len(stored.content),
        "url": file_url(stored),
        "image": stored.mimetype.startswith("image/"),
    }


def _message(message: Message) -> dict[str, Any]:
    return {
        "ts": message.ts,
        "thread_ts": message.thread_ts,
        "user": message.user,
        "bot": bool(message.bot_id),
        "text": message.text,
        "blocks": message.blocks,
        "files": [_file(f) for f in message.files],
        "reactions": list(message.reactions),
        "edited": bool(message.history),
    }


def snapshot(local: LocalWorkspace, user: str) -> dict[str, Any]:
    """Everything `user` sees now, with a version that changes whenever any of it does."""
    workspace = local.standin.workspace
    with workspace.condition:
        messages = [_message(m) for m in workspace.messages if m.channel == CHANNEL]
        ephemerals = [
            {
                "id": f"e:{number}",
                "ts": shown.get("ts") or "",
                "thread_ts": shown.get("thread_ts"),
                "text": shown.get("text") or "",
                "blocks": shown.get("blocks") or [],
            }
            for number, shown in enumerate(workspace.ephemerals)
            if shown.get("user") == user and shown.get("channel") == CHANNEL
        ]
        ephemerals += [
            {
                "id": f"r:{number}",
                "ts": answer.get("ts") or "",
                "thread_ts": None,
                "text": answer.get("text") or "",
                "blocks": answer.get("blocks") or [],
            }
            for number, answer in enumerate(workspace.responses)
            if answer.get("user") == user and answer.get("channel") == CHANNEL
        ]
        views = [
            {
                "id": view_id,
                "title": view.get("title"),
                "submit": view.get("submit"),
                "close": view.get("close"),
                "blocks": view.get("blocks") or [],
            }
            for view_id, view in workspace.views.items()
            if view.get("user") == user
            and view.get("type") == "modal"
            and view_id not in local.closed_views
        ]
        names = dict(workspace.users)
        groups = {group: sorted(members) for group, members in workspace.usergroups.items()}
    state: dict[str, Any] = {
        "me": user,
        "bot": BOT_USER,
        "people": [{"id": p.id, "name": p.name, "role": p.role} for p in local.people],
        "names": names,
        "usergroups": groups,
        "channel": {"id": CHANNEL, "name": CHANNEL_NAME},
        "demo": local.demo is not None,
        "messages": messages,
        "ephemerals": ephemerals,
        "views": views,
    }
    encoded = json.dumps(state, sort_keys=True, default=str).encode()
    state["version"] = hashlib.sha256(encoded).hexdigest()[:20]
    return state
