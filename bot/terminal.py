"""The terminal as a party to an investigation: who acts there, and how progress shows."""

from __future__ import annotations

import os
import pwd
import sys
from typing import TextIO


def terminal_identity() -> str:
    """The process's operating-system account, `os:alice` (`os:uid-1001` without a passwd entry):
    never USER or LOGNAME, which anyone sets; `os:` keeps it apart from Slack ids (`U…`)."""
    uid = os.getuid()
    try:
        return f"os:{pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"os:uid-{uid}"


class TerminalProgress:
    """Prints how many rows of each file have been read, about once a second, on stderr
    (stdout stays for the requests and outcomes, one JSON document per line with --json)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr

    def tool_done(self, name: str) -> None:
        """A tool finished: nothing to print (the request or outcome follows)."""

    def rows_read(self, file_name: str, rows: int, share: float) -> None:
        """Print `file_name: 650,000 rows read (47%)`."""
        print(f"{file_name}: {rows:,} rows read ({share:.0%})", file=self.out, flush=True)
