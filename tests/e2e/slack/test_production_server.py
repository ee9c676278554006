"""The production line of docs/operations.md: gunicorn serving the WSGI app against the stand-in;
and a bot token Slack does not accept is a clear message at start-up."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.standins.slack import SlackStandIn
from tests.support.cli import reconbot

from .conftest import ROOT, DemoFiles, bot_environment, free_port, request_message, upload_pair

GUNICORN = str(Path(sys.executable).with_name("gunicorn"))


def test_gunicorn_serves_the_bot(
    standin: SlackStandIn, tmp_path: Path, demo_files: DemoFiles
) -> None:
    port = free_port()
    env = bot_environment(standin, f"sqlite:///{tmp_path / 'bot.db'}", tmp_path)
    server = subprocess.Popen(
        [
            GUNICORN,
            "--workers",
            "1",
            "--threads",
            "8",
            "--bind",
            f"127.0.0.1:{port}",
            "bot.composition:wsgi_application()",
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as ok:
                    assert ok.status == 200
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        standin.app_url = f"http://127.0.0.1:{port}/slack/events"
        forged = standin.deliver(b"{}", "application/json", signature="v0=forged")
        assert forged.status == 401
        upload = upload_pair(standin, demo_files)
        assert request_message(standin, upload.ts).action_ids()[0] == "approve"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_token_slack_refuses_is_a_clear_message(standin: SlackStandIn, tmp_path: Path) -> None:
    env = bot_environment(standin, f"sqlite:///{tmp_path / 'bot.db'}", tmp_path)
    env["SLACK_BOT_TOKEN"] = "xoxb-revoked"
    done = reconbot("serve", "--port", str(free_port()), cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "did not accept SLACK_BOT_TOKEN" in done.stderr and "invalid_auth" in done.stderr
    assert "xoxb-revoked" not in done.stderr
