"""Text from uploaded files made safe to print on a terminal.

A cell can hold escape sequences (clear a line, move the cursor, write the clipboard with
OSC 52), carriage returns or newlines that would forge lines of an approval request. Every
value taken from a file is printed through `cell`; whole texts through `printable`, which keeps
their own line breaks and makes every other control character visible.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_OR_NEWLINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}.get(char, f"\\x{ord(char):02x}")


def cell(value: object) -> str:
    """A value from a file on one line: control characters, CR and LF shown as escapes."""
    return _CONTROL_OR_NEWLINE.sub(_visible, str(value))


def printable(text: str) -> str:
    """A text with its line breaks and tabs kept and every other control character shown as an
    escape, so nothing in it can drive the terminal."""
    return _CONTROL.sub(_visible, text)
