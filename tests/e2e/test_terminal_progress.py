"""Progress on long steps: drawn on stderr when it is a terminal, plain lines elsewhere, and
never a byte of it on stdout (which scripts parse, one JSON document per line with --json).

The terminal runs put the console script's stderr on a pseudo-terminal (`pty`), as a person's
shell does, with stdout and stdin still pipes; each run is bounded by a timeout.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from rich.console import Console

from bot.terminal.console import TerminalProgress
from tests.support.cli import ROOT, demo_folder, documents, reconbot

TIMEOUT = 240


def on_terminal(*args: str, cwd: Path, stdin: str = "") -> tuple[int, str, str]:
    """`reconbot ARGS` with its stderr on a pseudo-terminal (120 columns): exit code, stdout,
    and everything written to the terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd), "TERM": "xterm"}
    env.update({k: v for k, v in os.environ.items() if k.startswith("LC_") or k == "LANG"})
    process = subprocess.Popen(
        [sys.executable, "-m", "bot.terminal.cli", *args],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    drawn: list[bytes] = []

    def drain() -> None:  # the terminal must be read, or the process blocks writing to it
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # every writer closed the terminal
                return
            if not chunk:
                return
            drawn.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        out, _ = process.communicate(stdin.encode(), timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(10)
        os.close(master)
    return process.returncode, out.decode(), b"".join(drawn).decode(errors="replace")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_folder(tmp_path_factory.mktemp("progress"), 3000)


def test_investigate_on_a_terminal_names_each_step_on_stderr_only(folder: Path) -> None:
    code, out, drawn = on_terminal(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--json",
        cwd=folder,
        stdin="approve\n",
    )
    assert code == 0, drawn
    assert "reading the files…" in drawn
    assert "validating the mapping on every row…" in drawn
    assert "reconciling…" in drawn
    assert "0:00:0" in drawn, "the elapsed time is shown"
    assert "\x1b[" in drawn, "drawn on the terminal, not printed line by line"
    assert "\x1b" not in out
    request, outcome = documents(out)
    assert (request["type"], outcome["type"]) == ("request", "outcome")


def test_investigate_off_a_terminal_prints_no_drawing(folder: Path) -> None:
    done = reconbot(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--json",
        cwd=folder,
        stdin="approve\n",
    )
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr
    assert "validating the mapping" not in done.stderr
    assert [d["type"] for d in documents(done.stdout)] == ["request", "outcome"]


def test_demo_data_on_a_terminal_shows_a_spinner_and_prints_the_same_stdout(
    folder: Path,
) -> None:
    plain = reconbot("demo-data", "--rows", "20000", "--out", "big", "--seed", "3", cwd=folder)
    assert plain.returncode == 0, plain.stderr
    assert plain.stderr == ""
    code, out, drawn = on_terminal(
        "demo-data", "--rows", "20000", "--out", "big", "--seed", "3", cwd=folder
    )
    assert code == 0, drawn
    assert "writing 20,000 demo orders and their payments…" in drawn
    assert out == plain.stdout


def test_reconcile_on_a_terminal_shows_its_step(folder: Path) -> None:
    saved = reconbot(
        "inspect", "demo/orders.csv", "demo/payments.csv", "--save-mapping", "m.json", cwd=folder
    )
    assert saved.returncode == 0, saved.stderr
    code, out, drawn = on_terminal(
        "reconcile",
        "demo/orders.csv",
        "demo/payments.csv",
        "--mapping",
        "m.json",
        "--json",
        cwd=folder,
    )
    assert code == 0, drawn
    assert "reading both files and reconciling…" in drawn
    assert documents(out)[0]["type"] == "outcome"


def drawing() -> tuple[TerminalProgress, io.StringIO]:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, color_system=None)
    return TerminalProgress(console=console), screen


def test_a_step_names_the_tool_that_runs_and_the_rows_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    progress, screen = drawing()
    with progress.step("reading the files…"):
        progress.rows_read("orders.csv", 650_000, 0.47)
        progress.tool_started("validate_mapping")
        running = screen.getvalue()
        progress.tool_done("validate_mapping")
        after = screen.getvalue()[len(running) :]
    assert "reading the files…" in running
    assert "orders.csv: 650,000 rows read" in running
    assert "47%" in running
    assert "validating the mapping on every row…" in running
    assert "the agent is taking its next step…" in after
    assert capsys.readouterr().out == ""


def test_a_file_name_cannot_drive_the_terminal() -> None:
    progress, screen = drawing()
    with progress.step("reading the files…"):
        progress.rows_read("evil\x1b[2J.csv", 10, 0.5)
    assert "\x1b[2J" not in screen.getvalue()
    assert "evil\\e[2J.csv: 10 rows read" in screen.getvalue()


def test_rows_read_after_the_step_draw_nothing() -> None:
    progress, screen = drawing()
    with progress.step("validating the mapping on every row…"):
        pass
    before = screen.getvalue()
    progress.rows_read("orders.csv", 5, 1.0)
    assert screen.getvalue() == before


def test_a_told_start_names_the_running_tool() -> None:
    progress, screen = drawing()
    with progress.step("reading the files…"):
        progress.tool_started("reconcile")
        assert "reconciling…" in screen.getvalue()
        progress.tool_done("reconcile")


def test_off_a_terminal_the_rows_read_are_plain_lines_and_steps_silent() -> None:
    out = io.StringIO()
    progress = TerminalProgress(out)
    assert not progress.drawing
    with progress.step("reconciling…"):
        progress.tool_done("validate_mapping")
        progress.rows_read("orders.csv", 650_000, 0.47)
    assert out.getvalue() == "orders.csv: 650,000 rows read (47%)\n"
