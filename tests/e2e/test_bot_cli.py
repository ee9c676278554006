"""Starting the bot from the console: what is missing is said exactly, and `make run`'s
command falls back to the terminal workflow on demo data without Slack credentials."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import reconbot


def test_start_without_slack_names_exactly_what_is_missing(tmp_path: Path) -> None:
    done = reconbot("start", cwd=tmp_path)
    assert done.returncode == 2
    assert "SLACK_BOT_TOKEN" in done.stderr and "SLACK_SIGNING_SECRET" in done.stderr
    assert "SLACK_APP_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_with_a_token_but_no_signing_secret_names_the_secret(tmp_path: Path) -> None:
    done = reconbot("serve", cwd=tmp_path, env={"SLACK_BOT_TOKEN": "xoxb-1"})
    assert done.returncode == 2
    assert "SLACK_SIGNING_SECRET" in done.stderr
    assert "SLACK_BOT_TOKEN (" not in done.stderr
    assert "xoxb-1" not in done.stderr + done.stdout, "tokens are never printed"


def test_socket_mode_without_an_app_token_says_so(tmp_path: Path) -> None:
    done = reconbot("socket", cwd=tmp_path, env={"SLACK_BOT_TOKEN": "xoxb-1"})
    assert done.returncode == 2
    assert "SLACK_APP_TOKEN" in done.stderr and "connections:write" in done.stderr


def test_start_falls_back_to_the_terminal_demo(tmp_path: Path) -> None:
    done = reconbot("start", "--demo-without-slack", "var/demo", cwd=tmp_path, stdin="approve\n")
    assert done.returncode == 0, done.stderr
    assert "SLACK_BOT_TOKEN" in done.stderr
    assert "Approval needed" in done.stdout
    assert "Reconciled 10,000 orders" in done.stdout
    assert (tmp_path / "var" / "demo" / "orders.csv").exists()
