"""What the bot puts into buttons, selects and modals, and reads back: opaque references only.

A button carries the pause id and the authorization identity it was issued for
(docs/design.md §3), nothing the guard would trust beyond comparing them with the saved pause.
A clarification's answer select carries the same in its block id. A modal carries the same,
plus where to answer. The parsers here turn Slack's payloads into typed values for the
handlers; anything not issued by reconbot raises MalformedRequestError.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from agent.approval import Origin
from agent.data.schema import READING_OPTIONS, Role
from agent.errors import MalformedRequestError
from bot.slack.ids import ANSWER

NOT_ISSUED = "This button or form was not issued by reconbot for a saved request; nothing was done."
"""The words of a `RefusalReason.NOT_ISSUED` refusal: a button or form reconbot did not issue."""


def _fields(text: str, names: tuple[str, ...]) -> dict[str, str]:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        raise MalformedRequestError(NOT_ISSUED) from None
    if not isinstance(data, dict) or not all(isinstance(data.get(n), str) for n in names):
        raise MalformedRequestError(NOT_ISSUED)
    return {n: data[n] for n in names}


@dataclass(frozen=True)
class ButtonValue:
    """The value of a decision button: which pause, and the identity it was issued for."""

    pause_id: str
    authorization: str

    def encode(self) -> str:
        """The compact JSON text put in the button."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def decode(cls, text: str | None) -> ButtonValue:
        """Read a button value back; MalformedRequestError if it is not one we issued."""
        return cls(**_fields(text or "", ("pause_id", "authorization")))


@dataclass(frozen=True)
class ModalMetadata:
    """The private metadata of a decision modal: the pause, its identity, and where the button
    that opened it was (workspace, channel, thread, message): the decision's origin."""

    pause_id: str
    authorization: str
    channel: str
    message_ts: str
    thread_ts: str = ""
    team: str = ""

    def encode(self) -> str:
        """The compact JSON text put in the view's private_metadata."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def decode(cls, text: str | None) -> ModalMetadata:
        """Read modal metadata back; MalformedRequestError if it is not ours."""
        fields = _fields(text or "", ("pause_id", "authorization", "channel", "message_ts"))
        extra = json.loads(text or "{}")
        where = {k: v for k in ("thread_ts", "team") if isinstance(v := extra.get(k), str)}
        return cls(**fields, **where)

    @property
    def origin(self) -> Origin:
        """Where the modal's button was clicked."""
        return Origin(
            team=self.team or None, channel=self.channel, thread_ts=self.thread_ts or None
        )


@dataclass(frozen=True)
class AnswerBlockId:
    """The block id of a clarification's answer select, `answer:<n>:<button value>`: which
    question, and the request it was issued for (the select's options stay `role.field=column`,
    within Slack's 150 characters an option value; a block id may have 255)."""

    number: int
    button: ButtonValue

    def encode(self) -> str:
        """The block id put on the question's section."""
        return f"{ANSWER}:{self.number}:{self.button.encode()}"

    @classmethod
    def decode(cls, text: str | None) -> AnswerBlockId:
        """Read a block id back; MalformedRequestError if it is not one we issued."""
        prefix, _, rest = (text or "").partition(":")
        number, _, value = rest.partition(":")
        if prefix != ANSWER or not number.isdigit():
            raise MalformedRequestError(NOT_ISSUED)
        return cls(int(number), ButtonValue.decode(value))


@dataclass(frozen=True)
class Click:
    """A click on a button or a select of one of the bot's messages: who, where, and the
    element's value (None for a select)."""

    channel: str
    user: str
    thread_ts: str | None
    message_ts: str | None
    value: str | None
    trigger_id: str | None = None
    team: str | None = None

    @property
    def origin(self) -> Origin:
        """Where the click happened: the guard honours it only in the request's own thread."""
        return Origin(team=self.team, channel=self.channel, thread_ts=self.thread_ts)

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> Click:
        """The click of a `block_actions` payload (its first action)."""
        container = body.get("container") or {}
        message = body.get("message") or {}
        action = (body.get("actions") or [{}])[0]
        message_ts = container.get("message_ts") or message.get("ts")
        return cls(
            channel=str((body.get("channel") or {}).get("id") or container.get("channel_id")),
            user=str(body["user"]["id"]),
            thread_ts=message.get("thread_ts") or container.get("thread_ts"),
            message_ts=str(message_ts) if message_ts else None,
            value=action.get("value"),
            trigger_id=body.get("trigger_id"),
            team=(body.get("team") or {}).get("id") or body["user"].get("team_id"),
        )


@dataclass(frozen=True)
class ClarificationAnswer:
    """A clarification answered with its select: the request it answers and the column chosen
    for one field (`role.field=column`)."""

    button: ButtonValue
    role: Role
    field: str
    column: str

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> ClarificationAnswer:
        """The answer of a `block_actions` payload; MalformedRequestError if it is not ours."""
        action = (body.get("actions") or [{}])[0]
        block = AnswerBlockId.decode(action.get("block_id"))
        selected = action.get("selected_option") or {}
        key, _, column = str(selected.get("value", "")).partition("=")
        role_name, _, name = key.partition(".")
        try:
            role = Role(role_name)
        except ValueError:
            raise MalformedRequestError(NOT_ISSUED) from None
        return cls(block.button, role, name, column)


def option_lines(text: str) -> dict[str, str]:
    """Reading options written one `name=value` per line (blank lines skipped)."""
    found = {}
    for line in text.splitlines():
        if line.strip():
            name, _, value = line.partition("=")
            found[name.strip()] = value.strip()
    return found


def option_lines_problem(text: str) -> str:
    """What is wrong with written reading options, in words, or "" when nothing is."""
    for line in text.splitlines():
        if line.strip() and "=" not in line:
            return f'"{line.strip()}" is not name=value'
    unknown = sorted(set(option_lines(text)) - set(READING_OPTIONS))
    if unknown:
        return (
            f"No reading option {', '.join(unknown)}; the options are {', '.join(READING_OPTIONS)}."
        )
    return ""
