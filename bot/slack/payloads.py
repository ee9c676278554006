"""What the bot puts into buttons and modals, and reads back: opaque references only.

A button carries the pause id and the authorization identity it was issued for (DESIGN §3),
nothing the guard would trust beyond comparing them with the saved pause. A modal carries
the same, plus where to answer.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from agent.data.schema import READING_OPTIONS
from agent.errors import MalformedRequestError

NOT_ISSUED = "This button or form was not issued by reconbot for a saved request; nothing was done."


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
    """The private metadata of a decision modal: the pause, its identity, where to answer."""

    pause_id: str
    authorization: str
    channel: str
    message_ts: str

    def encode(self) -> str:
        """The compact JSON text put in the view's private_metadata."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def decode(cls, text: str | None) -> ModalMetadata:
        """Read modal metadata back; MalformedRequestError if it is not ours."""
        return cls(**_fields(text or "", ("pause_id", "authorization", "channel", "message_ts")))


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
