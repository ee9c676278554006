"""`make run` without Slack credentials: `reconbot start --local-workspace` says where the local
workspace is, serves its page on that loopback address (to the page alone), and stops on
SIGTERM. No browser needed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.cli import ROOT


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _post(url: str, body: dict[str, str], headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_start_without_slack_serves_the_local_workspace_until_sigterm(tmp_path: Path) -> None:
    port = _free_port()
    log = (tmp_path / "stderr.txt").open("w")
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        **{k: v for k, v in os.environ.items() if k.startswith("LC_") or k == "LANG"},
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot.terminal.cli",
            "start",
            "--local-workspace",
            "--port",
            str(port),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = f"http://127.0.0.1:{port}/"
        assert line.strip() == (
            f"reconbot: no Slack credentials; a local workspace is at {url} "
            "(open it in a browser; Ctrl-C stops)"
        ), line + (tmp_path / "stderr.txt").read_text()

        status, page = _get(url)
        assert status == 200 and b"Use demo files" in page
        status, state = _get(url + "local/state")
        people = json.loads(state)["people"]
        assert [p["name"] for p in people] == ["Alice", "Bob", "Dana", "Carol"]

        act = {"user": "U0ALICE"}
        assert _post(url + "local/demo", act, {"Content-Type": "application/json"}) == 403
        elsewhere = {"Host": "attacker.example:80", "X-Reconbot-Local": "1"}
        assert _post(url + "local/demo", act, elsewhere) == 403
        assert _get(url + "local/state?user=U0ALICE", {"Host": "attacker.example"})[0] == 403
        assert _get(url + "local/state?user=U0MALLORY")[0] == 403
        assert (tmp_path / ".local" / "share" / "reconbot" / "reconbot.db").exists()
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()
        log.close()
    assert code == 0, (tmp_path / "stderr.txt").read_text()
