"""Running the console script as a person does: a separate process, a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def reconbot(
    *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`reconbot ARGS` in `cwd` with only the locale, a user and `env` in its environment."""
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
