"""The terminal as a party to an investigation: who acts there, and how progress shows.

Progress goes to stderr, so stdout keeps only the requests and outcomes (one JSON document per
line with --json). On a terminal it is drawn with rich (a spinner naming the step with its
elapsed time, a bar per file being read) and erased when the step ends; anywhere else (a file, a
pipe, a dumb terminal) only the rows read are printed, one plain line each.
"""

from __future__ import annotations

import os
import pwd
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from bot.presentation.text import cell

STEP_WORDS = {
    "inspect_datasets": "inspecting the files…",
    "validate_mapping": "validating the mapping on every row…",
    "reconcile": "reconciling…",
    "get_evidence": "looking up the evidence…",
    "explain_policy": "reading the policy…",
    "list_findings": "listing the findings…",
}
"""What a terminal says while the agent's tool runs."""

NEXT_STEP = "the agent is taking its next step…"
"""What a terminal says between tools (the model is thinking, or the request is written)."""


def terminal_identity() -> str:
    """The process's operating-system account, `os:alice` (`os:uid-1001` without a passwd entry):
    never USER or LOGNAME, which anyone sets; `os:` keeps it apart from Slack ids (`U…`)."""
    uid = os.getuid()
    try:
        return f"os:{pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"os:uid-{uid}"


def live_console(out: TextIO) -> Console | None:
    """A console drawing on `out` when `out` is an interactive terminal that can be redrawn;
    None for a file, a pipe or `TERM=dumb` (so FORCE_COLOR in a CI log draws nothing)."""
    try:
        interactive = out.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        interactive = False
    if not interactive or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return None
    return Console(file=out, force_terminal=True)


class _FileBar(ProgressColumn):
    """A bar for a file being read; nothing for a step, whose length is not known."""

    def __init__(self) -> None:
        super().__init__()
        self.bar = BarColumn(bar_width=30)

    def render(self, task: Task) -> RenderableType:
        """The bar, or an empty cell for a step (no total)."""
        return Text("") if task.total is None else self.bar.render(task)


class TerminalProgress:
    """What a long step is doing, on stderr: on a terminal a spinner naming the step and its
    elapsed time, and a bar with the rows read per file; elsewhere the plain line
    `orders.csv: 650,000 rows read (47%)` about once a second per file, and nothing else.

    It is the core's `Progress` (tool_done, rows_read; tool_started once the core tells it),
    and `step(label)` brackets a call the core makes no report of (reading a demo file,
    reconciling under a saved mapping)."""

    def __init__(self, out: TextIO | None = None, *, console: Console | None = None) -> None:
        self.out = out or sys.stderr
        self.console = console if console is not None else live_console(self.out)
        self._lock = threading.RLock()
        self._display: Progress | None = None
        self._step: TaskID | None = None
        self._files: dict[str, TaskID] = {}
        self._label: str | None = None

    @property
    def drawing(self) -> bool:
        """Whether progress is drawn (a terminal), rather than printed as plain lines."""
        return self.console is not None

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        """Show `label` with a spinner and the elapsed time while the block runs, erased at its
        end; a step inside another only renames it until it ends. Draws nothing off a terminal."""
        if self.console is None:
            yield
            return
        with self._lock:
            outer = self._display
            if outer is None:
                self._display = self._new_display(self.console)
                self._step = self._display.add_task(label, total=None)
                self._display.start()
            previous = self._describe(label)
        try:
            yield
        finally:
            with self._lock:
                if outer is None and self._display is not None:
                    self._display.stop()
                    self._display, self._step, self._label = None, None, None
                    self._files.clear()
                elif previous is not None:
                    self._describe(previous)

    def tool_started(self, name: str) -> None:
        """The agent started the tool `name`: name the step after it."""
        self._describe(STEP_WORDS.get(name, cell(name.replace("_", " ")) + "…"))

    def tool_done(self, name: str) -> None:
        """The agent finished the tool `name`: say it goes on (the request or the outcome is
        printed on stdout once the step ends)."""
        self._describe(NEXT_STEP)

    def rows_read(self, file_name: str, rows: int, share: float) -> None:
        """`file_name: 650,000 rows read (47%)`: a bar while a step is drawn, else a line."""
        if self.console is None:
            line = f"{cell(file_name)}: {rows:,} rows read ({share:.0%})"
            print(line, file=self.out, flush=True)
            return
        with self._lock:
            display = self._display
            if display is None:  # read in the background after its step: nothing to draw on
                return
            text = f"  {cell(file_name)}: {rows:,} rows read"
            done = min(max(share, 0.0), 1.0)
            task = self._files.get(file_name)
            if task is None:
                task = self._files[file_name] = display.add_task(text, total=1.0)
            display.update(task, description=text, completed=done)

    def _describe(self, label: str) -> str | None:
        """Rename the drawn step (redrawn at once); returns the label it had, None if none."""
        with self._lock:
            if self._display is None or self._step is None:
                return None
            previous, self._label = self._label, label
            self._display.update(self._step, description=label, refresh=True)
            return previous

    @staticmethod
    def _new_display(console: Console) -> Progress:
        """One display for a step and its files, erased when it stops. It never takes stdout
        over: what is printed there stays exactly as without a terminal."""
        return Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            _FileBar(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
