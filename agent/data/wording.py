"""The words of every note the engine makes: the one place a `Note` becomes text.

Each part of the engine keeps its own table of codes and how each is said (`WORDS`, a code ->
function of the note's parameters); this module joins them, so the edges (the model's tools,
the request a person approves, the terminal) render a note the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agent.data.mapping.wording import WORDS as PROPOSAL_WORDS
from agent.data.normalize.wording import WORDS as REPORT_WORDS
from agent.data.notes import Note

Wording = Callable[[Mapping[str, Any]], str]

_WORDS: dict[str, Wording] = {**PROPOSAL_WORDS, **REPORT_WORDS}


def words(note: Note) -> str:
    """`note` in words, as a person and the model read it."""
    return _WORDS[note.code](note.params)


def words_of(notes: Iterable[Note]) -> list[str]:
    """Each of `notes` in words, in order."""
    return [words(n) for n in notes]


def codes() -> frozenset[str]:
    """Every code the engine may say, for the test that each has words."""
    return frozenset(_WORDS)
