"""`RECONBOT_MODEL=bedrock` from the console, against the Converse API stand-in: the pause in
one process, the approval in another, with the offline model's trace; and a start-up that
says what is missing instead of failing on the first investigation."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from agent.data.demo import generate
from tests.standins.bedrock import BedrockStandIn, Fault, text, tool_call
from tests.support.cli import reconbot

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def _env(standin: BedrockStandIn, **extra: str) -> dict[str, str]:
    return {
        "RECONBOT_MODEL": "bedrock",
        "RECONBOT_BEDROCK_ENDPOINT_URL": standin.url,
        "AWS_REGION": "us-east-1",
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_EC2_METADATA_DISABLED": "true",
        **extra,
    }


def _trace(folder: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(folder / ".local" / "share" / "reconbot" / "reconbot.db") as db:
        rows = db.execute("SELECT phase, name, status FROM tool_executions ORDER BY id").fetchall()
    return [tuple(row) for row in rows]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bedrock-demo")
    generate(1500, folder, seed=21)
    return folder


def _paused_and_approved(demo: Path, folder: Path, env: dict[str, str]) -> dict[str, object]:
    """Investigate in one process (no decision on stdin), approve in another."""
    paused = reconbot(
        "investigate",
        str(demo / "orders.csv"),
        str(demo / "payments.csv"),
        "--json",
        cwd=folder,
        env=env,
    )
    assert paused.returncode == 0, paused.stderr
    request = json.loads(paused.stdout.splitlines()[0])
    decided = reconbot(
        "decide",
        str(request["pause_id"]),
        "approve",
        "--authorization",
        str(request["authorization_identity"]),
        "--json",
        cwd=folder,
        env=env,
    )
    assert decided.returncode == 0, decided.stderr
    return dict(json.loads(decided.stdout.splitlines()[0]))


def test_pause_and_resume_in_two_processes_with_the_offline_trace(
    demo: Path, tmp_path: Path
) -> None:
    truth = json.loads((demo / "truth.json").read_text())["findings"]
    offline = tmp_path / "offline"
    offline.mkdir()
    offline_outcome = _paused_and_approved(demo, offline, {})

    live = tmp_path / "live"
    live.mkdir()
    with BedrockStandIn() as standin:
        standin.add(
            text("pong"),  # the start-up check of the first process
            tool_call("inspect_datasets"),
            tool_call("validate_mapping"),
            text("pong"),  # the start-up check of the second process
            tool_call("reconcile"),
            text("Reconciled; the counts per category are in the outcome."),
        )
        live_outcome = _paused_and_approved(demo, live, _env(standin, **CREDENTIALS))
        assert standin.exhausted == 0
        check = standin.received[0].body
        assert check["inferenceConfig"] == {"maxTokens": 1}
    assert live_outcome["counts"] == offline_outcome["counts"] == truth
    assert (
        _trace(live)
        == _trace(offline)
        == [
            ("investigate", "inspect_datasets", "success"),
            ("investigate", "validate_mapping", "success"),
            ("resume", "reconcile", "success"),
        ]
    )


def _two_files(folder: Path) -> None:
    """Two small files to investigate: the paths are checked before the model is."""
    for name in ("a.csv", "b.csv"):
        (folder / name).write_text("id,amount\n1,2.00\n", encoding="utf-8")


def test_missing_credentials_are_named_at_start_up(tmp_path: Path) -> None:
    _two_files(tmp_path)
    with BedrockStandIn() as standin:
        done = reconbot("investigate", "a.csv", "b.csv", cwd=tmp_path, env=_env(standin))
        assert standin.received == [], "nothing is sent without credentials"
    assert done.returncode == 2
    assert "needs AWS credentials" in done.stderr and "AWS_BEARER_TOKEN_BEDROCK" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_model_access_is_named_at_start_up(tmp_path: Path) -> None:
    _two_files(tmp_path)
    with BedrockStandIn() as standin:
        standin.add(Fault(403, "AccessDeniedException", "You don't have access to the model."))
        done = reconbot(
            "investigate", "a.csv", "b.csv", cwd=tmp_path, env=_env(standin, **CREDENTIALS)
        )
    assert done.returncode == 2
    assert "may not invoke us.amazon.nova-2-lite-v1:0" in done.stderr
    assert "Model access" in done.stderr and "bedrock:InvokeModel" in done.stderr


def test_a_bedrock_api_key_is_sent_as_a_bearer_token(tmp_path: Path) -> None:
    _two_files(tmp_path)
    with BedrockStandIn() as standin:
        standin.add(text("pong"))
        done = reconbot(
            "investigate",
            "a.csv",
            "b.csv",
            cwd=tmp_path,
            env=_env(standin, AWS_BEARER_TOKEN_BEDROCK="bedrock-api-key-123"),
        )
        assert standin.received[0].authorization == "Bearer bedrock-api-key-123"
    assert "bedrock-api-key-123" not in done.stderr + done.stdout
