"""The policy file as a person uses it: `RECONBOT_POLICY` read by the installed console script.

Each command runs `reconbot` (the console script of the project's environment) as a separate
process with a clean environment, as `tests/support/cli.py` does for `python -m bot.terminal.cli`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.data.policy import Policy
from tests.support.cli import ROOT, reconbot

CONSOLE_SCRIPT = Path(sys.executable).with_name("reconbot")

TEAM_POLICY = """\
# Exact amounts, and captures up to 100 days after the order are on time.
amount_tolerance_minor = 0
window_days_after = 100
failed_payment_statuses = ["failed", "declined", "Requires Payment Method", "On Hold"]
"""


def console(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`reconbot ARGS` through the installed console script, with only `env` and the basics."""
    base = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "USER": "alice", "HOME": str(cwd)}
    base.update({k: v for k, v in os.environ.items() if k.startswith("LC_") or k == "LANG"})
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**base, **(env or {})},
        check=False,
    )


def _policy(folder: Path, text: str = TEAM_POLICY, name: str = "policy.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _shown_version(output: str) -> str:
    first = output.splitlines()[0]
    assert first.startswith("policy sha256:"), output
    return first.removeprefix("policy ")


def test_the_console_script_is_installed() -> None:
    assert CONSOLE_SCRIPT.is_file(), f"run `uv sync` first: no {CONSOLE_SCRIPT}"


def test_explain_prints_the_version_and_source_first_then_the_files_rules(tmp_path: Path) -> None:
    path = _policy(tmp_path)
    shown = console("explain", cwd=tmp_path, env={"RECONBOT_POLICY": str(path)})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[1] == f"from {path}"
    version = _shown_version(shown.stdout)
    assert version != Policy().version
    assert "  amount_tolerance_minor     0" in lines
    assert "  window_days_after          100" in lines
    assert "failed, declined, requires_payment_method, on_hold" in shown.stdout
    assert "by more than 0 minor unit(s)" in shown.stdout
    assert "more than 100 days after the order" in shown.stdout
    assert shown.stdout.index("policy sha256:") < shown.stdout.index("amount_mismatch")

    # The same rules written otherwise are the same version; one number more is another.
    rewritten = "\n\n".join(reversed(TEAM_POLICY.splitlines())).replace(" = ", "=")
    same = _policy(tmp_path, rewritten + "  # reordered\n", "same.toml")
    again = console("explain", "amount_mismatch", cwd=tmp_path, env={"RECONBOT_POLICY": str(same)})
    assert again.returncode == 0, again.stderr
    assert _shown_version(again.stdout) == version
    assert "by more than 0 minor unit(s)" in again.stdout
    other = _policy(tmp_path, TEAM_POLICY.replace("= 100", "= 99"), "other.toml")
    changed = console("explain", cwd=tmp_path, env={"RECONBOT_POLICY": str(other)})
    assert _shown_version(changed.stdout) != version


def test_explain_without_a_policy_file_shows_the_built_in_defaults(tmp_path: Path) -> None:
    shown = console("explain", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert _shown_version(shown.stdout) == Policy().version
    assert shown.stdout.splitlines()[1] == "from built-in defaults"
    assert "by more than 1 minor unit(s)" in shown.stdout


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("amount_tolerance_minor = -1\n", "amount_tolerance_minor: must be 0 or more (got -1)"),
        ("tolerance = 1\n", "tolerance: unknown key"),
        (
            'refunded_payment_statuses = ["refunded", "Failed"]\n',
            'refunded_payment_statuses: "failed" is also in failed_payment_statuses',
        ),
        ("amount_tolerance_minor = \n", "is not valid TOML"),
    ],
)
def test_a_bad_policy_file_exits_2_with_one_line_naming_the_file(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = _policy(tmp_path, text)
    for command in (("explain",), ("reconcile", "o.csv", "p.csv", "--mapping", "m.json")):
        result = console(*command, cwd=tmp_path, env={"RECONBOT_POLICY": str(path)})
        assert result.returncode == 2, result.stderr
        assert result.stdout == ""
        assert result.stderr.startswith(f"reconbot: policy file {path}: "), result.stderr
        assert problem in result.stderr
        assert result.stderr.count("\n") == 1
        assert "Traceback" not in result.stderr


def test_a_missing_policy_file_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "policies" / "finance.toml"
    result = console("explain", cwd=tmp_path, env={"RECONBOT_POLICY": str(missing)})
    assert result.returncode == 2
    assert result.stderr == f"reconbot: policy file {missing}: there is no such file\n"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Demo exports and a saved mapping for them, in a folder of their own."""
    folder = tmp_path_factory.mktemp("policy-demo")
    made = reconbot("demo-data", "--rows", "3000", "--out", "demo", cwd=folder)
    assert made.returncode == 0, made.stderr
    saved = reconbot(
        "inspect", "demo/orders.csv", "demo/payments.csv", "--save-mapping", "m.json", cwd=folder
    )
    assert saved.returncode == 0, saved.stderr
    return folder


def _reconcile(folder: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = console(
        "reconcile",
        "demo/orders.csv",
        "demo/payments.csv",
        "--mapping",
        "m.json",
        "--export",
        "out.csv",
        "--json",
        cwd=folder,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)["summary"]
    return summary


def test_reconcile_applies_the_files_tolerance_and_window(demo: Path) -> None:
    truth = json.loads((demo / "demo" / "truth.json").read_text())["findings"]
    default = _reconcile(demo)
    assert default["counts"] == truth
    assert default["policy_version"] == Policy().version

    path = _policy(demo)
    team = _reconcile(demo, {"RECONBOT_POLICY": str(path)})
    shown = console("explain", cwd=demo, env={"RECONBOT_POLICY": str(path)})
    assert team["policy_version"] == _shown_version(shown.stdout)
    # No tolerance: the demo's captures one cent off the order become amount mismatches.
    assert team["counts"]["amount_mismatch"] > truth["amount_mismatch"] > 0
    # A 100-day window: the demo's captures 40 to 90 days late are on time.
    assert truth["capture_outside_window"] > 0
    assert team["counts"]["capture_outside_window"] == 0


def test_investigate_binds_the_files_policy_version_into_the_request(demo: Path) -> None:
    path = _policy(demo)
    run = console(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--json",
        cwd=demo,
        env={"RECONBOT_POLICY": str(path)},
    )
    # No decision on stdin: the request is printed and the investigation stays paused.
    request = json.loads(run.stdout.splitlines()[0])
    assert request["type"] == "request", run.stdout
    shown = console("explain", cwd=demo, env={"RECONBOT_POLICY": str(path)})
    assert request["policy_version"] == _shown_version(shown.stdout) != Policy().version
