"""The Web API methods of the stand-in, with Slack's argument checks and response shapes.

Each handler takes the workspace, the base URL and the call's arguments and returns the JSON
body Slack would. Bot messages are echoed back as `message` events, as Slack does for a bot
subscribed to channel messages; the server delivers them.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable
from typing import Any

from tests.standins.slack.workspace import (
    APP_ID,
    BOT_ID,
    BOT_USER,
    CONVERSATION_KINDS,
    TEAM_ID,
    Channel,
    Message,
    StoredFile,
    Workspace,
)

Handler = Callable[["Call"], dict[str, Any]]

MAX_BLOCKS_MESSAGE = 50
MAX_BLOCKS_VIEW = 100
MAX_SECTION_TEXT = 3000
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_ACTION_ELEMENTS = 25
MAX_OPTIONS = 100
MAX_TEXT = 40000
# The scope a conversation type needs in the Conversations API methods.
CONVERSATION_SCOPES = {
    "public_channel": "channels:read",
    "private_channel": "groups:read",
    "mpim": "mpim:read",
    "im": "im:read",
}
DEFAULT_PAGE = 100
MAX_PAGE = 999


class Call:
    """One Web API call: the workspace, where it is served, its arguments, and what to echo."""

    def __init__(self, workspace: Workspace, base_url: str, args: dict[str, Any]) -> None:
        self.workspace = workspace
        self.base_url = base_url
        self.args = args
        self.echo: list[Message] = []


class ApiError(Exception):
    """A Slack `{"ok": false, "error": ...}` answer."""

    def __init__(self, error: str, detail: str = "", **fields: str) -> None:
        super().__init__(error)
        self.error = error
        self.detail = detail
        self.fields = fields


def _json_arg(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as error:
            raise ApiError("invalid_arguments", f"not JSON: {error}") from None
    return value


def validate_blocks(blocks: Any, *, limit: int = MAX_BLOCKS_MESSAGE) -> list[dict[str, Any]]:
    """Check blocks against Block Kit's limits the way Slack does (`invalid_blocks`)."""
    blocks = _json_arg(blocks) or []
    if not isinstance(blocks, list):
        raise ApiError("invalid_blocks", "blocks must be a list")
    if len(blocks) > limit:
        raise ApiError("invalid_blocks", f"{len(blocks)} blocks, over the limit of {limit}")
    for number, block in enumerate(blocks):
        kind = block.get("type")
        where = f"block {number} ({kind})"
        text = block.get("text")
        if kind == "section":
            if text and len(text.get("text", "")) > MAX_SECTION_TEXT:
                raise ApiError("invalid_blocks", f"{where}: text over {MAX_SECTION_TEXT}")
            fields = block.get("fields") or []
            if len(fields) > MAX_FIELDS:
                raise ApiError("invalid_blocks", f"{where}: {len(fields)} fields")
            if any(len(f.get("text", "")) > MAX_FIELD_TEXT for f in fields):
                raise ApiError("invalid_blocks", f"{where}: a field over {MAX_FIELD_TEXT}")
            if not text and not fields:
                raise ApiError("invalid_blocks", f"{where}: needs text or fields")
        elif kind == "header":
            if len((text or {}).get("text", "")) > MAX_HEADER_TEXT:
                raise ApiError("invalid_blocks", f"{where}: header over {MAX_HEADER_TEXT}")
        elif kind == "actions":
            if len(block.get("elements", [])) > MAX_ACTION_ELEMENTS:
                raise ApiError("invalid_blocks", f"{where}: too many elements")
        elif kind not in ("context", "divider", "input", "image", "rich_text"):
            raise ApiError("invalid_blocks", f"{where}: unknown block type")
        for element in [*block.get("elements", []), block.get("accessory"), block.get("element")]:
            if isinstance(element, dict) and len(element.get("options", [])) > MAX_OPTIONS:
                raise ApiError("invalid_blocks", f"{where}: over {MAX_OPTIONS} options")
    return list(blocks)


def _channel_message(call: Call, *, thread_ts: str | None) -> Message:
    args = call.args
    text = args.get("text") or ""
    blocks = validate_blocks(args.get("blocks"))
    if not text and not blocks:
        raise ApiError("no_text")
    if len(text) > MAX_TEXT:
        raise ApiError("msg_too_long")
    return Message(
        channel=str(args.get("channel") or ""),
        ts=call.workspace.new_ts(),
        user=BOT_USER,
        bot_id=BOT_ID,
        text=text,
        blocks=blocks,
        thread_ts=thread_ts,
    )


def auth_test(call: Call) -> dict[str, Any]:
    """auth.test: who the token is."""
    return {
        "url": call.base_url,
        "team": "Stand-in",
        "user": "reconbot",
        "team_id": TEAM_ID,
        "user_id": BOT_USER,
        "bot_id": BOT_ID,
        "is_enterprise_install": False,
    }


def chat_post_message(call: Call) -> dict[str, Any]:
    """chat.postMessage: post in a channel or a thread."""
    if not call.args.get("channel"):
        raise ApiError("channel_not_found")
    message = _channel_message(call, thread_ts=call.args.get("thread_ts") or None)
    with call.workspace.condition:
        call.workspace.messages.append(message)
    call.echo.append(message)
    return {
        "channel": message.channel,
        "ts": message.ts,
        "message": {"text": message.text, "blocks": message.blocks, "ts": message.ts},
    }


def chat_update(call: Call) -> dict[str, Any]:
    """chat.update: replace a bot message's text and blocks (the old version is kept)."""
    workspace = call.workspace
    try:
        message = workspace.message(str(call.args.get("channel")), str(call.args.get("ts")))
    except KeyError:
        raise ApiError("message_not_found") from None
    if message.bot_id != BOT_ID:
        raise ApiError("cant_update_message")
    replacement = _channel_message(call, thread_ts=message.thread_ts)
    with workspace.condition:
        message.history.append({"text": message.text, "blocks": message.blocks})
        message.text = replacement.text
        message.blocks = replacement.blocks
    return {"channel": message.channel, "ts": message.ts, "text": message.text}


def chat_post_ephemeral(call: Call) -> dict[str, Any]:
    """chat.postEphemeral: a message only one person sees."""
    if not call.args.get("user"):
        raise ApiError("user_not_found")
    message = _channel_message(call, thread_ts=call.args.get("thread_ts") or None)
    with call.workspace.condition:
        call.workspace.ephemerals.append(
            {
                "channel": message.channel,
                "user": call.args["user"],
                "text": message.text,
                "blocks": message.blocks,
                "thread_ts": message.thread_ts,
            }
        )
    return {"message_ts": message.ts}


def reactions_add(call: Call) -> dict[str, Any]:
    """reactions.add: react to a message."""
    try:
        message = call.workspace.message(
            str(call.args.get("channel")), str(call.args.get("timestamp"))
        )
    except KeyError:
        raise ApiError("message_not_found") from None
    name = str(call.args.get("name"))
    with call.workspace.condition:
        if name in message.reactions:
            raise ApiError("already_reacted")
        message.reactions.append(name)
    return {}


def files_info(call: Call) -> dict[str, Any]:
    """files.info: a file's metadata, with its private download URL."""
    stored = call.workspace.files.get(str(call.args.get("file")))
    if stored is None:
        raise ApiError("file_not_found")
    return {"file": stored.info(call.base_url)}


def files_get_upload_url_external(call: Call) -> dict[str, Any]:
    """files.getUploadURLExternal: where to send an upload's bytes."""
    name = call.args.get("filename")
    length = int(call.args.get("length") or 0)
    if not name or length <= 0:
        raise ApiError("invalid_arguments")
    file_id = call.workspace.new_id("F")
    with call.workspace.condition:
        call.workspace.uploads[file_id] = {"filename": name, "length": length, "data": None}
    return {"upload_url": f"{call.base_url}upload/{file_id}", "file_id": file_id}


def files_complete_upload_external(call: Call) -> dict[str, Any]:
    """files.completeUploadExternal: share uploaded files in a channel or thread."""
    workspace = call.workspace
    entries = _json_arg(call.args.get("files")) or []
    shared = []
    for entry in entries:
        upload = workspace.uploads.get(entry.get("id"))
        if upload is None or upload["data"] is None:
            raise ApiError("file_not_found", "upload the bytes before completing")
        name = upload["filename"]
        shared.append(
            StoredFile(
                id=entry["id"],
                name=name,
                filetype=filetype_of(name),
                mimetype="text/csv" if name.endswith(".csv") else "application/octet-stream",
                content=upload["data"],
                user=BOT_USER,
                created=int(time.time()),
            )
        )
    channel = call.args.get("channel_id")
    if channel:
        message = Message(
            channel=str(channel),
            ts=workspace.new_ts(),
            user=BOT_USER,
            bot_id=BOT_ID,
            text=str(call.args.get("initial_comment") or ""),
            thread_ts=call.args.get("thread_ts") or None,
            files=shared,
        )
        with workspace.condition:
            workspace.messages.append(message)
    with workspace.condition:
        for stored in shared:
            workspace.files[stored.id] = stored
    return {"files": [{"id": f.id, "title": f.name, "name": f.name} for f in shared]}


def _view(call: Call, view: Any, *, view_id: str | None = None) -> dict[str, Any]:
    view = dict(_json_arg(view) or {})
    if view.get("type") not in ("modal", "home"):
        raise ApiError("invalid_arguments", "view type")
    view["blocks"] = validate_blocks(view.get("blocks"), limit=MAX_BLOCKS_VIEW)
    view["id"] = view_id or call.workspace.new_id("V")
    return view


def views_open(call: Call) -> dict[str, Any]:
    """views.open: open a modal; needs a trigger id issued in the last three seconds."""
    trigger = call.workspace.triggers.pop(str(call.args.get("trigger_id")), None)
    if trigger is None:
        raise ApiError("invalid_trigger_id")
    user, expires = trigger
    if time.monotonic() > expires:
        raise ApiError("expired_trigger_id")
    view = _view(call, call.args.get("view"))
    view["user"] = user
    with call.workspace.condition:
        call.workspace.views[view["id"]] = view
    return {"view": view}


def views_update(call: Call) -> dict[str, Any]:
    """views.update: replace an open modal."""
    view_id = str(call.args.get("view_id"))
    old = call.workspace.views.get(view_id)
    if old is None:
        raise ApiError("not_found")
    view = _view(call, call.args.get("view"), view_id=view_id)
    view["user"] = old["user"]
    with call.workspace.condition:
        call.workspace.views[view_id] = view
    return {"view": view}


def views_publish(call: Call) -> dict[str, Any]:
    """views.publish: set a person's App Home."""
    user = str(call.args.get("user_id"))
    view = _view(call, call.args.get("view"))
    with call.workspace.condition:
        call.workspace.home_views[user] = view
    return {"view": view}


def usergroups_users_list(call: Call) -> dict[str, Any]:
    """usergroups.users.list: the members of a user group."""
    members = call.workspace.usergroups.get(str(call.args.get("usergroup")))
    if members is None:
        raise ApiError("no_such_subteam")
    return {"users": sorted(members)}


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


def filetype_of(name: str) -> str:
    """Slack's filetype for a file name."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return {"csv": "csv", "tsv": "tsv", "png": "png", "pdf": "pdf", "xlsx": "xlsx"}.get(
        suffix, "text"
    )


METHODS: dict[str, Handler] = {
    "auth.test": auth_test,
    "chat.postMessage": chat_post_message,
    "chat.update": chat_update,
    "chat.postEphemeral": chat_post_ephemeral,
    "reactions.add": reactions_add,
    "files.info": files_info,
    "files.getUploadURLExternal": files_get_upload_url_external,
    "files.completeUploadExternal": files_complete_upload_external,
    "views.open": views_open,
    "views.update": views_update,
    "views.publish": views_publish,
    "usergroups.users.list": usergroups_users_list,
    "users.conversations": users_conversations,
}

__all__ = ["APP_ID", "METHODS", "ApiError", "Call", "validate_blocks"]
