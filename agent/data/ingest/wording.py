"""The codes of the notes and warnings a file's layout carries, and their words.

A layout note says how the file was read (its encoding, the line its header is on); a layout
warning says what the whole read saw that a person should check. Every warning carries the
file's name (`file_name`) and is said after it (`orders.csv: …`), so it is shown as it is
wherever it goes (the validation report copies it unchanged). `agent.data.mapping.wording`
joins this table to the proposal's, since a layout's notes open its proposal's notes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any


class LayoutCode(StrEnum):
    """What a layout note or warning says."""

    UTF16 = "layout.utf16"
    """Read as UTF-16 (no params)."""
    CP1252 = "layout.cp1252"
    """Not UTF-8, read as Windows-1252 (no params)."""
    MIXED_CP1252 = "layout.mixed_cp1252"
    """UTF-8 but for some bytes, read as Windows-1252 (no params)."""
    HEADER_LINE = "layout.header_line"
    """The header is not on the first line: `line` (1-based), `answered` (a person said so)."""
    ROWS_SWALLOWED = "layout.rows_swallowed"
    """A warning: cells hold a row's worth of separators on a line of their own: `file_name`,
    `cells` (each `[row, column]`)."""


def _header_line(params: Mapping[str, Any]) -> str:
    line = int(params["line"])
    chosen = ", as a person answered" if params.get("answered") else ""
    return (
        f"the header is line {line}{chosen}; the {line - 1} line(s) above it "
        "(a title or notes) are not read"
    )


def _rows_swallowed(params: Mapping[str, Any]) -> str:
    cells = ", ".join(f'row {row} ("{column}")' for row, column in params["cells"])
    return (
        f"{params['file_name']}: a cell holds line breaks and a whole row's worth of separators, "
        f"e.g. {cells}: a quote may be missing there, and the rows inside that cell are read as "
        "its text, not as rows; check the file"
    )


WORDS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    LayoutCode.UTF16: lambda _: "read as UTF-16",
    LayoutCode.CP1252: lambda _: "not UTF-8: read as Windows-1252",
    LayoutCode.MIXED_CP1252: lambda _: (
        "not all UTF-8: the bytes that are not UTF-8 read as Windows-1252"
    ),
    LayoutCode.HEADER_LINE: _header_line,
    LayoutCode.ROWS_SWALLOWED: _rows_swallowed,
}
