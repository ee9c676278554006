"""One bot process per SQLite database, as an operator meets it: a second `reconbot serve` on
the same database refuses in a sentence naming the database and PostgreSQL, while the first
keeps serving; once the first is gone (stopped or killed), a new one starts. `reconbot worker`
refuses SQLite, saying it needs PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.slack.conftest import (
    ALICE,
    RECONBOT,
    ROOT,
    BotProcess,
    bot_environment,
    free_port,
)
from tests.standins.slack import SlackStandIn
from tests.support.cli import reconbot

REFUSAL_SECONDS = 60


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    with SlackStandIn() as running:
        running.workspace.add_user(ALICE, "alice")
        yield running


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return tmp_path / "db" / "reconbot.db"


@pytest.fixture
def env(standin: SlackStandIn, database: Path, tmp_path: Path) -> dict[str, str]:
    return bot_environment(standin, f"sqlite:///{database}", tmp_path)


@pytest.fixture
def bots() -> Iterator[list[BotProcess]]:
    started: list[BotProcess] = []
    yield started
    for bot in started:
        if bot.process.poll() is None:
            bot.kill()


def second_serve(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Another `reconbot serve` on the same settings, as a second deploy or a slip starts it."""
    return subprocess.run(
        [RECONBOT, "serve", "--host", "127.0.0.1", "--port", str(free_port())],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=REFUSAL_SECONDS,
        check=False,
    )


def healthy(bot: BotProcess) -> bool:
    with urllib.request.urlopen(f"http://127.0.0.1:{bot.port}/healthz", timeout=5) as answer:
        return bool(answer.status == 200)


def assert_one_sentence_refusal(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit code 2 and, after the start-up's INFO lines, one line saying why (no traceback)."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith("reconbot: ")]
    assert len(said) == 1 and lines[-1] == said[0], f"one line saying why: {done.stderr!r}"
    logged = [line for line in lines[:-1] if " ERROR " in line or " WARNING " in line]
    assert logged == [], "the refusal is not logged as a failure"
    for needle in needles:
        assert needle in said[0], (needle, said[0])


def test_a_second_bot_on_the_same_sqlite_database_refuses_and_the_first_keeps_serving(
    env: dict[str, str], database: Path, bots: list[BotProcess]
) -> None:
    first = BotProcess(env, free_port())
    bots.append(first)

    done = second_serve(env)

    assert_one_sentence_refusal(done, str(database), "PostgreSQL")
    assert "serving" not in done.stdout, "the refused process never served"
    assert first.process.poll() is None
    assert healthy(first), "the first bot keeps serving"

    assert first.stop() == 0
    after = BotProcess(env, free_port())
    bots.append(after)
    assert healthy(after), "once the first stopped, a new bot starts on the database"
    assert_one_sentence_refusal(second_serve(env), str(database), "PostgreSQL")


def test_a_bot_killed_outright_does_not_keep_the_database_from_a_new_one(
    env: dict[str, str], bots: list[BotProcess]
) -> None:
    first = BotProcess(env, free_port())
    bots.append(first)
    first.kill()

    after = BotProcess(env, free_port())
    bots.append(after)
    assert healthy(after)


def test_a_bot_on_another_sqlite_database_is_not_refused(
    standin: SlackStandIn, env: dict[str, str], tmp_path: Path, bots: list[BotProcess]
) -> None:
    bots.append(BotProcess(env, free_port()))
    other = bot_environment(standin, f"sqlite:///{tmp_path / 'other.db'}", tmp_path / "other")
    second = BotProcess(other, free_port())
    bots.append(second)
    assert healthy(second)


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({}, id="default-database"),
        pytest.param({"RECONBOT_DATABASE_URL": "sqlite:///var/bot.db"}, id="sqlite-url"),
        pytest.param(
            {"RECONBOT_DATABASE_URL": "sqlite:///var/bot.db", "RECONBOT_QUEUE": "postgres"},
            id="queue-forced-on-sqlite",
        ),
    ],
)
def test_a_worker_on_sqlite_says_it_needs_postgresql(
    settings: dict[str, str], tmp_path: Path
) -> None:
    env = {"SLACK_BOT_TOKEN": "xoxb-1", "RECONBOT_MODEL": "offline", **settings}
    done = reconbot("worker", cwd=tmp_path, env=env)
    assert_one_sentence_refusal(done, "PostgreSQL")
    assert "running jobs" not in done.stdout
    assert "xoxb-1" not in done.stdout + done.stderr
