"""What people do in a stand-in workspace: share files, reply, click, choose, submit modals,
run slash commands and open the App Home; each becomes the event or interaction Slack would
deliver to the app.
"""

from __future__ import annotations

import time
import urllib.parse
from typing import Any

from workspace.slack.delivery import Deliveries
from workspace.slack.models import filetype_of, mimetype_of
from workspace.slack.signing import Delivery
from workspace.slack.workspace import APP_ID, BOT_USER, TEAM_ID, Message, StoredFile


class People(Deliveries):
    """The people's side of the workspace: every method acts as one person would."""

    def post_files(
        self,
        user: str,
        channel: str,
        files: list[tuple[str, bytes]],
        *,
        text: str = "",
        thread_ts: str | None = None,
        serve_as: str = "file",
        deliveries: int = 1,
    ) -> Message:
        """Share files in a channel (or a thread), and deliver `message`/`file_share` and
        `file_shared`, as Slack does; `deliveries` > 1 redelivers the same event as Slack's
        retries do (0: none, as when the app was down). Returns the message."""
        workspace = self.workspace
        channel_type = self._speaking_in(user, channel)
        stored = [
            StoredFile(
                id=workspace.new_id("F"),
                name=name,
                filetype=filetype_of(name),
                mimetype=mimetype_of(name),
                content=content,
                user=user,
                created=int(time.time()),
                serve_as=serve_as,
            )
            for name, content in files
        ]
        message = Message(
            channel=channel,
            ts=workspace.new_ts(),
            user=user,
            text=text,
            thread_ts=thread_ts,
            files=stored,
        )
        with workspace.condition:
            for item in stored:
                workspace.files[item.id] = item
            workspace.messages.append(message)
        event: dict[str, Any] = {
            "type": "message",
            "subtype": "file_share",
            "channel": channel,
            "user": user,
            "text": text,
            "ts": message.ts,
            "event_ts": message.ts,
            "channel_type": channel_type,
            "files": [f.info(self.base_url) for f in stored],
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        envelope = self.envelope(event)
        for attempt in range(deliveries):
            self.deliver_envelope(envelope, retry=attempt)
        for item in stored if deliveries else []:
            self.deliver_event(
                {
                    "type": "file_shared",
                    "file_id": item.id,
                    "user_id": user,
                    "file": {"id": item.id},
                    "channel_id": channel,
                    "event_ts": message.ts,
                }
            )
        return message

    def reply(self, user: str, channel: str, thread_ts: str, text: str) -> Message:
        """Reply in a thread; a reply that mentions the bot is also an `app_mention`."""
        return self.say(user, channel, text, thread_ts=thread_ts)

    def say(self, user: str, channel: str, text: str, *, thread_ts: str | None = None) -> Message:
        """Post a message in a channel (or a thread); one that mentions the bot is also an
        `app_mention`."""
        channel_type = self._speaking_in(user, channel)
        message = Message(
            channel=channel, ts=self.workspace.new_ts(), user=user, text=text, thread_ts=thread_ts
        )
        with self.workspace.condition:
            self.workspace.messages.append(message)
        event = {
            "type": "message",
            "channel": channel,
            "user": user,
            "text": text,
            "ts": message.ts,
            "event_ts": message.ts,
            "channel_type": channel_type,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        self.deliver_event(event)
        if f"<@{BOT_USER}>" in text:
            self.deliver_event({**event, "type": "app_mention"})
        return message

    def _speaking_in(self, user: str, channel: str) -> str:
        """Check that `user` may post in `channel` (a default channel takes anyone in); returns
        the `channel_type` of its message events."""
        with self.workspace.condition:
            found = self.workspace.channel(channel)
            if found.default:
                found.members.add(user)
            elif user not in found.members:
                raise PermissionError(f"{user} is not in {channel}; only members post there")
            kind = found.kind
        return {"public_channel": "channel", "private_channel": "group"}.get(kind, kind)

    def click(
        self, user: str, message: Message, action_id: str, *, value: str | None = None
    ) -> Delivery:
        """Click a button of a message (optionally with a tampered value)."""
        return self.deliver_interaction(self.click_payload(user, message, action_id, value=value))

    def click_payload(
        self, user: str, message: Message, action_id: str, *, value: str | None = None
    ) -> dict[str, Any]:
        """The interaction payload Slack sends when `user` clicks a button of a message (for
        a caller that sends it itself, e.g. from another process: `form_body`, `sign`)."""
        block, element = message.element(action_id)
        action = {
            "type": element.get("type", "button"),
            "action_id": action_id,
            "block_id": block.get("block_id", ""),
            "value": element.get("value") if value is None else value,
            "action_ts": str(time.time()),
        }
        return self.block_actions(user, message, action)

    def select(self, user: str, message: Message, action_id: str, option_value: str) -> Delivery:
        """Choose an option of a select in a message."""
        block, element = message.element(action_id)
        options = {o["value"]: o for o in element.get("options", [])}
        if option_value not in options:
            raise KeyError(f"{action_id} offers no {option_value!r}; it offers {sorted(options)}")
        action = {
            "type": "static_select",
            "action_id": action_id,
            "block_id": block.get("block_id", ""),
            "selected_option": options[option_value],
            "action_ts": str(time.time()),
        }
        return self.deliver_interaction(self.block_actions(user, message, action))

    def block_actions(self, user: str, message: Message, action: dict[str, Any]) -> dict[str, Any]:
        """The `block_actions` payload of `user` acting on `message` as their screen shows it."""
        return {
            **self.interaction("block_actions", user),
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": False,
                "thread_ts": message.thread_ts,
            },
            "channel": {"id": message.channel, "name": message.channel},
            "message": {
                "type": "message",
                "ts": message.ts,
                "text": message.text,
                "blocks": message.blocks,
                "thread_ts": message.thread_ts,
                "bot_id": message.bot_id,
                "user": message.user,
            },
            "response_url": self.response_url(message.channel, user),
            "actions": [action],
        }

    def ephemeral_actions(
        self, user: str, ephemeral: dict[str, Any], action: dict[str, Any]
    ) -> dict[str, Any]:
        """The `block_actions` payload of `user` acting on an ephemeral message shown to them
        (Slack sends no `message` then, only its container)."""
        channel = str(ephemeral["channel"])
        return {
            **self.interaction("block_actions", user),
            "container": {
                "type": "message",
                "message_ts": ephemeral.get("ts"),
                "channel_id": channel,
                "is_ephemeral": True,
                "thread_ts": ephemeral.get("thread_ts"),
            },
            "channel": {"id": channel, "name": channel},
            "response_url": self.response_url(channel, user),
            "actions": [action],
        }

    def submit_view(self, user: str, view_id: str, values: dict[str, dict[str, Any]]) -> Delivery:
        """Submit an open modal with `values[block_id][action_id] = {...}` as Slack sends them."""
        view = self.workspace.views[view_id]
        payload = {
            **self.interaction("view_submission", user),
            "view": {**view, "state": {"values": values}},
        }
        return self.deliver_interaction(payload)

    def close_view(self, user: str, view_id: str) -> Delivery | None:
        """Cancel an open modal: `view_closed` is delivered if the view asked for it."""
        view = self.workspace.views[view_id]
        if not view.get("notify_on_close"):
            return None
        payload = {**self.interaction("view_closed", user), "view": view, "is_cleared": False}
        return self.deliver_interaction(payload)

    def command(self, user: str, channel: str, command: str, text: str) -> Delivery:
        """Run a slash command (in a channel the person may or may not be a member of)."""
        self.workspace.channel(channel)
        fields = {
            "token": "verification-token-unused",
            "team_id": TEAM_ID,
            "team_domain": "standin",
            "channel_id": channel,
            "channel_name": channel,
            "user_id": user,
            "user_name": self.workspace.users.get(user, user),
            "command": command,
            "text": text,
            "api_app_id": APP_ID,
            "response_url": self.response_url(channel, user),
            "trigger_id": self.workspace.new_trigger(user),
        }
        link = self.socket_link()
        if link is not None:
            return self._over_socket(link, "slash_commands", fields)
        return self.deliver(
            urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded"
        )

    def open_home(self, user: str) -> Delivery:
        """Open the app's Home tab."""
        return self.deliver_event(
            {
                "type": "app_home_opened",
                "user": user,
                "channel": "D0HOME",
                "tab": "home",
                "event_ts": self.workspace.new_ts(),
            }
        )
