"""The README's terminal examples, run as shown on the demo data.

The block after `<!-- terminal examples: ... -->` in README.md is read line by line; each line
runs in bash, in one fresh folder whose HOME is that folder (so state goes where a newcomer's
would), with `reconbot` on the PATH. Placeholders a person copies from earlier output
(`PAUSE-…`, `sha256:…`, `INV-…`) are filled in from what the commands before printed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.cli import ROOT

MARKER = "<!-- terminal examples: run by tests/e2e/test_readme_examples.py -->"
PLACEHOLDERS = {
    "PAUSE-…": re.compile(r"request (PAUSE-[0-9A-F]+) stays pending"),
    "sha256:…": re.compile(r"--authorization (sha256:[0-9a-f]{64})"),
    "INV-…": re.compile(r"^Approval needed: (INV-[0-9A-F]+)", re.MULTILINE),
}


def readme_examples() -> list[str]:
    """The commands of the README's terminal examples block, comments removed."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split(MARKER, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        command = re.sub(r"\s+#\s.*$", "", line).strip()  # `# comment` after two spaces or more
        if command:
            commands.append(command)
    return commands


def test_the_readme_terminal_examples_run_as_shown_on_the_demo_data(tmp_path: Path) -> None:
    commands = readme_examples()
    assert len(commands) >= 8, commands
    env = {
        "HOME": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
    }
    seen: dict[str, str] = {}
    printed: list[str] = []
    for command in commands:
        for placeholder, value in seen.items():
            command = command.replace(placeholder, value)
        assert "…" not in command, f"nothing printed before fills in: {command}"
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command}"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr)
        printed.append(done.stdout)
        for placeholder, pattern in PLACEHOLDERS.items():
            found = pattern.search(done.stdout)
            if found:
                seen[placeholder] = found.group(1)
    session = "\n".join(printed)
    assert "#SH1010 is flagged as amount_mismatch" in session, "the README's question is answered"
    for name in ("mapping.json", "checked.csv", "approved.csv", "decided.csv"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert (tmp_path / "approved.csv").read_bytes() == (tmp_path / "decided.csv").read_bytes()
    assert "How this was computed" in printed[-2] and "reconcile 1" in printed[-2]
    assert str(tmp_path / ".local" / "share" / "reconbot") in session, "status says where"
