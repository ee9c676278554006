"""Running the console script as a person does: a separate process, a clean environment."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

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
        [sys.executable, "-m", "bot.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env={**base, **(env or {})},
        check=False,
    )
