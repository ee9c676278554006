"""The state of a stand-in workspace: people, channels, messages, files, views and faults.

Everything is kept in memory behind one condition variable, so tests can wait (bounded) for
the app to do something and then read exactly what a person would see.

Channels have members. A channel a test never declared comes into being, the first time
someone posts or runs a command there, as a public *default* channel (like #general): every
person of the workspace and the bot are in it, and people added later join it. Declared
channels (`add_channel`) have exactly the members given, plus the bot unless told otherwise
(and a declared *default* channel takes in people added later too).
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from workspace.slack.models import (
    APP_ID,
    BOT_ID,
    BOT_SCOPES,
    BOT_USER,
    CONVERSATION_KINDS,
    TEAM_ID,
    TRIGGER_TTL_SECONDS,
    Channel,
    Fault,
    Message,
    StoredFile,
)

T = TypeVar("T")


class Workspace:
    """The people, channels, messages and files of one stand-in workspace."""

    def __init__(self, *, bot_token: str, signing_secret: str) -> None:
        self.bot_token = bot_token
        self.signing_secret = signing_secret
        self.condition = threading.Condition()
        self.users: dict[str, str] = {BOT_USER: "reconbot"}
        self.usergroups: dict[str, set[str]] = {}
        self.channels: dict[str, Channel] = {}
        self.scopes: set[str] = set(BOT_SCOPES)
        self.messages: list[Message] = []
        self.ephemerals: list[dict[str, Any]] = []
        self.files: dict[str, StoredFile] = {}
        self.views: dict[str, dict[str, Any]] = {}
        self.home_views: dict[str, dict[str, Any]] = {}
        self.responses: list[dict[str, Any]] = []
        self.uploads: dict[str, dict[str, Any]] = {}
        self.triggers: dict[str, tuple[str, float]] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.faults: dict[str, list[Fault]] = {}
        self._ids = itertools.count(1)
        self._clock = itertools.count(1)

    # -- ids ------------------------------------------------------------------------------

    def new_id(self, prefix: str) -> str:
        """A fresh Slack-style id: `F0000000007`."""
        return f"{prefix}{next(self._ids):010d}"

    def new_ts(self) -> str:
        """A fresh, strictly increasing message timestamp."""
        return f"{int(time.time())}.{next(self._clock):06d}"

    def new_trigger(self, user: str) -> str:
        """A trigger id for views.open, valid for three seconds as in Slack."""
        trigger = f"{next(self._ids)}.{secrets.token_hex(6)}"
        self.triggers[trigger] = (user, time.monotonic() + TRIGGER_TTL_SECONDS)
        return trigger

    # -- people ---------------------------------------------------------------------------

    def add_user(self, user_id: str, name: str) -> str:
        """Add a person; returns their id."""
        with self.condition:
            self.users[user_id] = name
            for channel in self.channels.values():
                if channel.default:
                    channel.members.add(user_id)
        return user_id

    def add_usergroup(self, group_id: str, members: list[str]) -> str:
        """Add a user group with its members; returns its id."""
        with self.condition:
            self.usergroups[group_id] = set(members)
        return group_id

    # -- channels -------------------------------------------------------------------------

    def add_channel(
        self,
        channel_id: str,
        name: str,
        *,
        members: list[str],
        kind: str = "public_channel",
        bot: bool = True,
        default: bool = False,
    ) -> Channel:
        """Declare a conversation with exactly `members` (and the bot, unless `bot=False`);
        `kind` is public_channel, private_channel, mpim or im; a `default` channel takes in
        everyone added later."""
        if kind not in CONVERSATION_KINDS:
            raise ValueError(f"kind must be one of {CONVERSATION_KINDS}, not {kind!r}")
        people = set(members) | ({BOT_USER} if bot else set())
        channel = Channel(id=channel_id, name=name, kind=kind, members=people, default=default)
        with self.condition:
            self.channels[channel_id] = channel
        return channel

    def channel(self, channel_id: str) -> Channel:
        """The conversation; one never declared becomes a public default channel that everyone
        is in (see the module's docstring)."""
        with self.condition:
            found = self.channels.get(channel_id)
            if found is None:
                found = Channel(
                    id=channel_id, name=channel_id.lower(), default=True, members=set(self.users)
                )
                self.channels[channel_id] = found
            return found

    def join(self, user: str, channel_id: str) -> None:
        """`user` joins (or is added to) the conversation."""
        with self.condition:
            self.channel(channel_id).members.add(user)

    def leave(self, user: str, channel_id: str) -> None:
        """`user` leaves (or is removed from) the conversation."""
        with self.condition:
            self.channel(channel_id).members.discard(user)

    def is_member(self, user: str, channel_id: str) -> bool:
        """Whether `user` is in the conversation now."""
        with self.condition:
            return user in self.channel(channel_id).members

    def revoke_scope(self, scope: str) -> None:
        """Take a scope from the bot token, as an app installed without it is
        (methods that need it answer `missing_scope`)."""
        with self.condition:
            self.scopes.discard(scope)

    # -- faults ---------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: int | None = 1,
        error: str = "ratelimited",
    ) -> None:
        """Make the next call to `method` fail (by default: rate limited, retry after 1 s)."""
        with self.condition:
            self.faults.setdefault(method, []).append(Fault(status, retry_after, error))

    def take_fault(self, method: str) -> Fault | None:
        """The scripted failure for this call, if any."""
        with self.condition:
            queue = self.faults.get(method)
            return queue.pop(0) if queue else None

    # -- reading --------------------------------------------------------------------------

    def record_call(self, method: str, args: dict[str, Any]) -> None:
        """Remember a Web API call (for assertions such as "no second run")."""
        with self.condition:
            self.calls.append((method, args))
            self.condition.notify_all()

    def changed(self) -> None:
        """Wake everyone waiting for the workspace to change."""
        with self.condition:
            self.condition.notify_all()

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        """The root message and its replies, oldest first."""
        with self.condition:
            return [
                m
                for m in self.messages
                if m.channel == channel and (m.ts == thread_ts or m.thread_ts == thread_ts)
            ]

    def message(self, channel: str, ts: str) -> Message:
        """One message; KeyError if there is none."""
        with self.condition:
            for m in self.messages:
                if m.channel == channel and m.ts == ts:
                    return m
        raise KeyError(f"no message {ts} in {channel}")

    def wait_for(
        self, probe: Callable[[], T | None], *, timeout: float = 30.0, what: str = ""
    ) -> T:
        """Wait (bounded) until `probe()` returns something truthy, and return it."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while True:
                found = probe()
                if found:
                    return found
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"gave up after {timeout:.0f} s waiting for {what or probe}")
                self.condition.wait(min(remaining, 0.2))

    def calls_to(self, method: str) -> list[dict[str, Any]]:
        """The arguments of every call to `method` so far."""
        with self.condition:
            return [args for name, args in self.calls if name == method]


__all__ = [
    "APP_ID",
    "BOT_ID",
    "BOT_USER",
    "CONVERSATION_KINDS",
    "TEAM_ID",
    "Channel",
    "Fault",
    "Message",
    "StoredFile",
    "Workspace",
]
