"""`reconbot socket`: the same bot over Socket Mode (a WebSocket the app opens), no public URL
and no signing secret; events, clicks and commands arrive as envelopes and are acknowledged."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.standins.slack import SlackStandIn

from .conftest import (
    ALICE,
    BOB,
    CHANNEL,
    RECONBOT,
    ROOT,
    DemoFiles,
    bot_environment,
    request_message,
    upload_pair,
    wait_text,
)


def test_the_bot_works_over_socket_mode(
    standin: SlackStandIn, tmp_path: Path, demo_files: DemoFiles
) -> None:
    env = bot_environment(standin, f"sqlite:///{tmp_path / 'bot.db'}", tmp_path)
    del env["SLACK_SIGNING_SECRET"]
    env["SLACK_APP_TOKEN"] = standin.app_token
    bot = subprocess.Popen(
        [RECONBOT, "socket"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        standin.workspace.wait_for(standin.socket_link, timeout=60, what="the Socket Mode link")
        upload = upload_pair(standin, demo_files)
        request = request_message(standin, upload.ts)
        click = standin.click(BOB, request, "approve")
        assert click.status == 200, "acknowledged over the socket"
        wait_text(standin, upload.ts, "Reconciled")

        answer = standin.command(ALICE, CHANNEL, "/recon", "list")
        assert answer.status == 200
        listed = standin.workspace.wait_for(lambda: standin.workspace.responses)
        assert "INV-" in str(listed[0])
        assert standin.workspace.calls_to("apps.connections.open")
    finally:
        bot.terminate()
        assert bot.wait(timeout=30) == 0, "SIGTERM stops it cleanly"
