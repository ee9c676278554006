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


MAX_ISSUED = 3000
"""More characters than anything reconbot issues (a private_metadata, a block id, a value)."""


def _object(text: object) -> dict[str, Any]:
    """The JSON object `text` holds; MalformedRequestError for anything else (not a string,
    too long, not JSON, nested deeper than json reads, an integer longer than int() takes)."""
    if not isinstance(text, str) or len(text) > MAX_ISSUED:
        raise MalformedRequestError(NOT_ISSUED)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        raise MalformedRequestError(NOT_ISSUED) from None
    if not isinstance(data, dict):
        raise MalformedRequestError(NOT_ISSUED)
    return data


def _fields(data: dict[str, Any], names: tuple[str, ...]) -> dict[str, str]:
    if not all(isinstance(data.get(n), str) for n in names):
        raise MalformedRequestError(NOT_ISSUED)
    return {n: data[n] for n in names}


def _dict(value: object) -> dict[str, Any]:
    """`value` if Slack sent an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    """`value` if Slack sent a non-empty string there, else None."""
    return value if isinstance(value, str) and value else None


def _first_action(body: dict[str, Any]) -> dict[str, Any]:
    actions = body.get("actions")
    return _dict(actions[0]) if isinstance(actions, list) and actions else {}


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
        return cls(**_fields(_object(text), ("pause_id", "authorization")))


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
        data = _object(text)
        fields = _fields(data, ("pause_id", "authorization", "channel", "message_ts"))
        where = {k: v for k in ("thread_ts", "team") if isinstance(v := data.get(k), str)}
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
        if not isinstance(text, str):
            raise MalformedRequestError(NOT_ISSUED)
        prefix, _, rest = text.partition(":")
        number, _, value = rest.partition(":")
        if prefix != ANSWER or not (number.isascii() and number.isdigit() and len(number) <= 9):
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
        body = _dict(body)
        container, message = _dict(body.get("container")), _dict(body.get("message"))
        user = _dict(body.get("user"))
        who = _text(user.get("id"))
        channel = _text(_dict(body.get("channel")).get("id")) or _text(container.get("channel_id"))
        if who is None or channel is None:
            raise MalformedRequestError(NOT_ISSUED)
        value = _first_action(body).get("value")
        return cls(
            channel=channel,
            user=who,
            thread_ts=_text(message.get("thread_ts")) or _text(container.get("thread_ts")),
            message_ts=_text(container.get("message_ts")) or _text(message.get("ts")),
            value=value if isinstance(value, str) else None,
            trigger_id=_text(body.get("trigger_id")),
            team=_text(_dict(body.get("team")).get("id")) or _text(user.get("team_id")),
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
        action = _first_action(_dict(body))
        block = AnswerBlockId.decode(action.get("block_id"))
        chosen = _dict(action.get("selected_option")).get("value")
        if not isinstance(chosen, str):
            raise MalformedRequestError(NOT_ISSUED)
        key, _, column = chosen.partition("=")
        role_name, _, name = key.partition(".")
        try:
            role = Role(role_name)
        except ValueError:
            raise MalformedRequestError(NOT_ISSUED) from None
        return cls(block.button, role, name, column)


def option_lines(text: str, role: str = "") -> dict[str, str]:
    """Reading options written one `name=value` per line (blank lines skipped), as a request
    suggests them too: `ROLE.name=value` in the box of that `role`, the value in quotes
    (`payments.id_pattern='#\\s*(\\d+)'`) taken without them."""
    found = {}
    for line in text.splitlines():
        if line.strip():
            name, _, value = line.partition("=")
            name, value = name.strip(), value.strip()
            if role and name.startswith(f"{role}."):
                name = name.removeprefix(f"{role}.")
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            found[name] = value
    return found


def option_lines_problem(text: str, role: str = "") -> str:
    """What is wrong with written reading options, in words, or "" when nothing is."""
    for line in text.splitlines():
        if line.strip() and "=" not in line:
            return f'"{line.strip()}" is not name=value'
    unknown = sorted(set(option_lines(text, role)) - set(READING_OPTIONS))
    if unknown:
        return (
            f"No reading option {', '.join(unknown)}; the options are {', '.join(READING_OPTIONS)}."
        )
    return ""
