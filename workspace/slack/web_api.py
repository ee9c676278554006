"""The Web API methods of the stand-in, with Slack's argument checks and response shapes.

Each handler takes the call (the workspace, the base URL and the arguments) and returns the
JSON body Slack would. Bot messages are echoed back as `message` events, as Slack does for a
bot subscribed to channel messages; the server delivers them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from workspace.slack.blockkit import MAX_BLOCKS_MESSAGE, MAX_BLOCKS_VIEW, validate_blocks
from workspace.slack.calls import ApiError, Call, json_arg
from workspace.slack.conversations import users_conversations
from workspace.slack.models import filetype_of, mimetype_of
from workspace.slack.workspace import APP_ID, BOT_ID, BOT_USER, TEAM_ID, Message, StoredFile

Handler = Callable[[Call], dict[str, Any]]

MAX_TEXT = 40000


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
                "ts": message.ts,
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
    entries = json_arg(call.args.get("files")) or []
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
                mimetype=mimetype_of(name),
                content=upload["data"],
                user=BOT_USER,
                created=int(time.time()),
                title=str(entry.get("title") or ""),
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
    found: dict[str, Any] = dict(json_arg(view) or {})
    if found.get("type") not in ("modal", "home"):
        raise ApiError("invalid_arguments", "view type")
    found["blocks"] = validate_blocks(found.get("blocks"), limit=MAX_BLOCKS_VIEW)
    found["id"] = view_id or call.workspace.new_id("V")
    return found


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

__all__ = [
    "APP_ID",
    "MAX_BLOCKS_MESSAGE",
    "METHODS",
    "TEAM_ID",
    "ApiError",
    "Call",
    "filetype_of",
    "validate_blocks",
]
