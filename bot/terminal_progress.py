"""Progress of a long step on a terminal: one line on stderr per file being read."""

from __future__ import annotations

import sys
from typing import TextIO


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
