"""The bot over real HTTP against the Slack stand-in, with signature checking on.

`bot` runs the real Bolt app in this process on a threaded WSGI server on 127.0.0.1;
`BotProcess` runs `reconbot serve` as a separate process (for restarts). Both are configured
only through the environment variables of docs/design.md §9, as in production.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agent.data.demo import generate
from bot.composition import build_bot
from bot.config import Settings
from bot.slack.app import SlackBot
from bot.slack.server import EVENTS_PATH, HttpServer, wsgi_app
from tests.standins.slack import Message, SlackStandIn
from tests.support.databases import DATABASES, database_urls

CHANNEL = "C0FINANCE"
ALICE, BOB, CAROL = "U0ALICE", "U0BOB", "U0CAROL"
DEMO_ROWS = 400
ROOT = Path(__file__).resolve().parents[3]
RECONBOT = str(Path(sys.executable).with_name("reconbot"))


@dataclass
class DemoFiles:
    """A pair of demo exports and the counts they were generated with."""

    orders: bytes
    payments: bytes
    folder: Path


@pytest.fixture(scope="session")
def demo_files(tmp_path_factory: pytest.TempPathFactory) -> DemoFiles:
    folder = tmp_path_factory.mktemp("slack-demo")
    generate(DEMO_ROWS, folder, seed=5)
    return DemoFiles(
        (folder / "orders.csv").read_bytes(), (folder / "payments.csv").read_bytes(), folder
    )


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    with SlackStandIn() as running:
        running.workspace.add_user(ALICE, "alice")
        running.workspace.add_user(BOB, "bob")
        running.workspace.add_user(CAROL, "carol")
        yield running


@pytest.fixture(params=["sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from database_urls(request.param, tmp_path)


def bot_environment(
    standin: SlackStandIn, database_url: str, folder: Path, **overrides: str
) -> dict[str, str]:
    """The environment of a bot pointed at the stand-in, storage under `folder`."""
    return {
        "SLACK_BOT_TOKEN": standin.workspace.bot_token,
        "SLACK_SIGNING_SECRET": standin.workspace.signing_secret,
        "SLACK_API_URL": standin.api_url,
        "RECONBOT_DATABASE_URL": database_url,
        "RECONBOT_BLOB_URL": f"file://{folder / 'blobs'}",
        "RECONBOT_WORK_DIR": str(folder / "work"),
        "RECONBOT_EXPIRY_SWEEP": "1s",
        **overrides,
    }


@dataclass
class RunningBot:
    """A bot serving /slack/events in this process."""

    bot: SlackBot
    server: HttpServer
    events_url: str

    def stop(self) -> None:
        self.server.stop()
        self.bot.close()


@dataclass
class BotFactory:
    standin: SlackStandIn
    database_url: str
    folder: Path
    running: list[RunningBot] = field(default_factory=list)

    def __call__(self, **overrides: str) -> RunningBot:
        env = bot_environment(self.standin, self.database_url, self.folder, **overrides)
        settings = Settings(**env)  # type: ignore[arg-type]
        bot, _ = build_bot(settings)
        server = HttpServer(wsgi_app(bot.app), host="127.0.0.1", port=0).start()
        bot.start()
        running = RunningBot(bot, server, server.url + EVENTS_PATH)
        self.standin.app_url = running.events_url
        self.running.append(running)
        return running


@pytest.fixture
def make_bot(standin: SlackStandIn, database_url: str, tmp_path: Path) -> Iterator[BotFactory]:
    factory = BotFactory(standin, database_url, tmp_path)
    yield factory
    for running in factory.running:
        running.stop()


@pytest.fixture
def bot(make_bot: BotFactory) -> RunningBot:
    return make_bot()


@pytest.fixture(params=DATABASES)
def any_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from database_urls(request.param, tmp_path)


class BotProcess:
    """`reconbot serve` in its own process, as an operator runs it."""

    def __init__(self, env: dict[str, str], port: int) -> None:
        self.port = port
        self.process = subprocess.Popen(
            [RECONBOT, "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.events_url = f"http://127.0.0.1:{port}{EVENTS_PATH}"
        self._wait_healthy()

    def _wait_healthy(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.process.stdout.read().decode() if self.process.stdout else ""
                raise RuntimeError(f"reconbot serve exited:\n{output}")
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}/healthz", timeout=1
                ) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise TimeoutError("reconbot serve did not become healthy")

    def stop(self) -> int:
        """SIGTERM, as a process manager stops it; returns the exit code."""
        self.process.terminate()
        code = self.process.wait(timeout=30)
        if self.process.stdout:
            self.process.stdout.close()
        return code

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stdout:
            self.process.stdout.close()


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- reading the thread -------------------------------------------------------------------


def upload_pair(standin: SlackStandIn, demo: DemoFiles, user: str = ALICE) -> Message:
    """Alice drops both exports into the channel in one message."""
    return standin.post_files(
        user,
        CHANNEL,
        [("orders.csv", demo.orders), ("payments.csv", demo.payments)],
        text="month-end recon",
    )


def request_message(
    standin: SlackStandIn, thread_ts: str, *, after: int = 0, timeout: float = 60
) -> Message:
    """Wait for the approval request with buttons number `after + 1` in the thread."""

    def probe() -> Message | None:
        found = [m for m in standin.workspace.thread(CHANNEL, thread_ts) if is_request(m)]
        return found[after] if len(found) > after else None

    return standin.workspace.wait_for(probe, timeout=timeout, what="the approval request")


def is_request(message: Message) -> bool:
    """Whether a message is (or was) an approval request: it opens with a header."""
    versions = [message.blocks] + [h["blocks"] for h in message.history]
    return bool(message.bot_id) and any(v and v[0].get("type") == "header" for v in versions)


def message_with_action(standin: SlackStandIn, thread_ts: str, action_id: str) -> Message:
    """Wait for the message of the thread that offers `action_id` (a button or select)."""
    return standin.workspace.wait_for(
        lambda: next(
            (
                m
                for m in standin.workspace.thread(CHANNEL, thread_ts)
                if action_id in m.action_ids()
            ),
            None,
        ),
        what=f"a message offering {action_id}",
    )


def thread_text(standin: SlackStandIn, thread_ts: str) -> str:
    """Everything the thread shows now."""
    return "\n".join(m.all_text() for m in standin.workspace.thread(CHANNEL, thread_ts))


def wait_text(standin: SlackStandIn, thread_ts: str, needle: str, *, timeout: float = 60) -> str:
    """Wait until the thread shows `needle`; returns the thread's text."""
    return standin.workspace.wait_for(
        lambda: (text := thread_text(standin, thread_ts)) and needle in text and text,
        timeout=timeout,
        what=f"{needle!r} in the thread",
    )


def ephemerals_for(standin: SlackStandIn, user: str) -> list[dict[str, Any]]:
    """The ephemeral messages shown to `user`."""
    with standin.workspace.condition:
        return [e for e in standin.workspace.ephemerals if e["user"] == user]


def wait_ephemeral(standin: SlackStandIn, user: str, count: int = 1) -> list[dict[str, Any]]:
    """Wait until `user` has seen `count` ephemeral messages."""
    return standin.workspace.wait_for(
        lambda: (found := ephemerals_for(standin, user)) and len(found) >= count and found,
        timeout=30,
        what=f"{count} ephemeral message(s) for {user}",
    )


def exceptions_files(standin: SlackStandIn, thread_ts: str) -> list[Any]:
    """The files the bot shared in the thread."""
    return [f for m in standin.workspace.thread(CHANNEL, thread_ts) if m.bot_id for f in m.files]


Probe = Callable[[], Any]
