"""The bot on Amazon Bedrock (the Converse API stand-in): a busy model is said in the thread,
with a button that picks the investigation up again; nothing uploaded is lost."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.standins.bedrock import BedrockStandIn, Fault, text, tool_call
from tests.standins.slack import SlackStandIn

from .conftest import (
    BOB,
    BotFactory,
    DemoFiles,
    message_with_action,
    request_message,
    upload_pair,
    wait_text,
)


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch) -> Iterator[BedrockStandIn]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with BedrockStandIn() as standin:
        yield standin


def test_a_busy_model_is_said_in_the_thread_and_try_again_resumes(
    standin: SlackStandIn, make_bot: BotFactory, bedrock: BedrockStandIn, demo_files: DemoFiles
) -> None:
    bedrock.add(text("pong"))
    make_bot(
        RECONBOT_MODEL="bedrock",
        RECONBOT_BEDROCK_ENDPOINT_URL=bedrock.url,
        RECONBOT_BEDROCK_MAX_ATTEMPTS="2",
    )
    bedrock.add(tool_call("inspect_datasets"), Fault(), Fault())
    upload = upload_pair(standin, demo_files)
    wait_text(standin, upload.ts, "Amazon Bedrock is busy")
    busy = message_with_action(standin, upload.ts, "investigate_again")
    assert "try again" in busy.all_text().lower()

    bedrock.add(tool_call("inspect_datasets"), tool_call("validate_mapping"))
    standin.click(BOB, busy, "investigate_again")
    request = request_message(standin, upload.ts)

    bedrock.add(tool_call("reconcile"), text("Reconciled."))
    standin.click(BOB, request, "approve")
    wait_text(standin, upload.ts, "Reconciled")
    assert bedrock.exhausted == 0
