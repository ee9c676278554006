"""What the engine tells a person, as values: a code and its parameters.

The engine decides by codes (`note.code is DayMonthGuessed`), never by the words a note is
shown in; the words are made at the edge (`agent.data.wording.words`), where a note reaches the
model, a request or the terminal. Parameters are plain JSON values (text, numbers, lists of
them), so a note survives the on-disk caches unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Note:
    """One thing the engine says about a reading: `code` names what it is, `params` fill it."""

    code: str
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> dict[str, Any]:
        """The note as a JSON object, for the on-disk caches."""
        return {"code": self.code, "params": dict(self.params)}

    @classmethod
    def from_json(cls, saved: Mapping[str, Any]) -> Note:
        """The note `to_json` wrote."""
        return cls(code=str(saved["code"]), params=dict(saved.get("params", {})))


def note(code: str, **params: Any) -> Note:
    """A note of `code` with `params` (keyword arguments read better at the call site)."""
    return Note(code=code, params=params)


def with_code(notes: list[Note] | tuple[Note, ...], *codes: str) -> list[Note]:
    """The notes of `notes` whose code is one of `codes`."""
    return [n for n in notes if n.code in codes]


def without_code(notes: list[Note] | tuple[Note, ...], *codes: str) -> list[Note]:
    """The notes of `notes` whose code is none of `codes`."""
    return [n for n in notes if n.code not in codes]
