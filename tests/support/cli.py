"""Running the console script as a person does: a separate process, a clean environment."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def os_identity() -> str:
    """The identity a terminal command runs as: this process's operating-system account
    (`os:NAME`, or `os:uid-N` for a uid with no passwd entry), whatever USER or LOGNAME say."""
    uid = os.getuid()
    try:
        return f"os:{pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"os:uid-{uid}"


def reconbot(
    *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`reconbot ARGS` in `cwd` with only the locale, a user and `env` in its environment.

    The environment's user (`USER=alice`) is deliberately not the operating-system account:
    terminal commands must act as the account (`os_identity()`), never as USER or LOGNAME.
    """
    base = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "USER": "alice", "HOME": str(cwd)}
    base.update({k: v for k, v in os.environ.items() if k.startswith("LC_") or k == "LANG"})
    return subprocess.run(
        [sys.executable, "-m", "bot.terminal.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env={**base, **(env or {})},
        check=False,
    )


def documents(output: str) -> list[dict[str, Any]]:
    """The JSON documents a `--json` command printed, one per line."""
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def demo_folder(path: Path, rows: int) -> Path:
    """`path` with `demo/orders.csv` and `demo/payments.csv` of `rows` demo orders in it,
    written by the console script as a person would."""
    made = reconbot("demo-data", "--rows", str(rows), "--out", "demo", cwd=path)
    assert made.returncode == 0, made.stderr
    return path
