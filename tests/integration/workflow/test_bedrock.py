"""The workflow on `RECONBOT_MODEL=bedrock`: Strands' BedrockModel -> boto3 -> HTTP -> the
Converse API stand-in. Tests assert on what Bedrock received as well as on the outcome."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.data.schema import Role
from agent.domain import Approver, PauseKind, PauseStatus
from agent.errors import ModelBusyError, ModelUnavailableError
from agent.models.bedrock import BedrockSettings, build_bedrock_model
from agent.runtime.prompts import SYSTEM_PROMPT
from tests.standins.bedrock import BedrockStandIn, Fault, Stall, text, tool_call

from .conftest import Demo, World, make_world, uploads

BOB = Approver(user="bob")
TOOLS = {
    "inspect_datasets",
    "validate_mapping",
    "reconcile",
    "get_evidence",
    "list_findings",
    "explain_policy",
}


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch) -> Iterator[BedrockStandIn]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with BedrockStandIn() as standin:
        yield standin


def bedrock_world(standin: BedrockStandIn, url: str, tmp_path: Path, **overrides: Any) -> World:
    settings = BedrockSettings(endpoint_url=standin.url, **overrides)
    return make_world(url, tmp_path, model=build_bedrock_model(settings))


@pytest.fixture(params=[True, False], ids=["converse-stream", "converse"])
def streaming(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def summary_from_last_result(body: dict[str, Any]) -> Any:
    """The model's summary, written from the reconcile tool's result it was sent."""
    last = [b["toolResult"] for m in body["messages"] for b in m["content"] if "toolResult" in b][
        -1
    ]
    counts = json.loads(last["content"][0]["text"])["counts"]
    return text(f"Reconciled: {sum(counts.values())} exceptions.")


def assert_alternating(standin: BedrockStandIn) -> None:
    for request in standin.received:
        roles = [m["role"] for m in request.messages]
        assert roles[0] == "user"
        assert all(a != b for a, b in itertools.pairwise(roles)), roles


def test_the_standard_case_pauses_and_resumes_with_the_offline_trace(
    bedrock: BedrockStandIn, world: World, demo: Demo, tmp_path: Path, streaming: bool
) -> None:
    live = bedrock_world(bedrock, world.url, tmp_path / "live", streaming=streaming)
    bedrock.add(tool_call("inspect_datasets"), tool_call("validate_mapping"))
    started = live.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None and request.kind is PauseKind.CONFIRMATION
    assert len(bedrock.received) == 2, "the turn ends on the pause, without another model call"

    first, second = bedrock.received
    assert first.operation == ("converse-stream" if streaming else "converse")
    assert first.model_id == "us.amazon.nova-2-lite-v1:0"
    assert first.authorization.startswith("AWS4-HMAC-SHA256")
    assert first.body["system"][0]["text"] == SYSTEM_PROMPT
    assert {t["toolSpec"]["name"] for t in first.body["toolConfig"]["tools"]} == TOOLS
    assert first.body["inferenceConfig"] == {"maxTokens": 4096, "temperature": 0.0}
    assert first.messages[0]["content"][0]["text"].startswith("Task: investigate")
    inspected = second.tool_results()[0]
    assert "status" not in inspected, "Nova gets tool results without a status"
    assert json.loads(inspected["content"][0]["text"])["ok"] is True

    resumed = bedrock_world(bedrock, world.url, tmp_path / "live", streaming=streaming)
    bedrock.add(tool_call("reconcile"), summary_from_last_result)
    outcome = resumed.service.decisions.confirm(
        request.pause_id, request.authorization_identity, BOB
    )
    assert outcome.counts == demo.truth["findings"]
    assert outcome.report == f"Reconciled: {sum(outcome.counts.values())} exceptions."
    assert bedrock.exhausted == 0
    assert_alternating(bedrock)
    trace = [(e.phase, e.name, e.status) for e in live.saved.trace(request.investigation_id)]
    assert trace == [
        ("investigate", "inspect_datasets", "success"),
        ("investigate", "validate_mapping", "success"),
        ("resume", "reconcile", "success"),
    ]


def test_a_proposal_naming_a_missing_column_becomes_a_clarification(
    bedrock: BedrockStandIn, world: World, demo: Demo, tmp_path: Path
) -> None:
    live = bedrock_world(bedrock, world.url, tmp_path / "live")
    bedrock.add(
        tool_call("inspect_datasets"),
        tool_call("validate_mapping", {"changes": {"payments.captured_amount": "Amount Charged"}}),
    )
    started = live.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    assert started.request is not None
    assert started.request.kind is PauseKind.CLARIFICATION
    assert "Amount Charged" in json.dumps(started.request.model_dump(mode="json"))


def test_reconcile_before_approval_is_a_blocked_reconcile_pause(
    bedrock: BedrockStandIn, world: World, demo: Demo, tmp_path: Path
) -> None:
    live = bedrock_world(bedrock, world.url, tmp_path / "live")
    bedrock.add(tool_call("inspect_datasets"), tool_call("reconcile"))
    started = live.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    assert started.request is not None
    assert started.request.kind is PauseKind.BLOCKED_RECONCILE
    assert len(bedrock.received) == 2, "the refusal ends the turn"
    saved = live.saved.conversation(started.investigation.id)
    results = [b["toolResult"] for m in saved for b in m["content"] if "toolResult" in b]
    refused = json.loads(results[-1]["content"][0]["text"])
    assert refused["ok"] is False and "approval" in refused["error"]
    assert live.saved.outcome(started.investigation.id) is None

    blocked = started.request
    bedrock.add(tool_call("validate_mapping"))
    revised = live.service.decisions.edit(
        blocked.pause_id,
        blocked.authorization_identity,
        BOB,
        {Role.ORDERS: {"customer": "Email"}},
    )
    assert revised.kind is PauseKind.CONFIRMATION, "the case goes on from the blocked pause"
    assert_alternating(bedrock)


@pytest.mark.parametrize(
    ("bad_call", "words"),
    [
        (tool_call("validate_mapping", {"changes": "use the obvious columns"}), "changes"),
        (tool_call("delete_everything", {}), "delete_everything"),
    ],
    ids=["malformed-input", "unknown-tool"],
)
def test_a_bad_tool_call_explains_itself_and_the_investigation_goes_on(
    bedrock: BedrockStandIn, world: World, demo: Demo, tmp_path: Path, bad_call: Any, words: str
) -> None:
    live = bedrock_world(bedrock, world.url, tmp_path / "live")
    bedrock.add(tool_call("inspect_datasets"), bad_call, tool_call("validate_mapping"))
    started = live.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    assert started.request is not None and started.request.kind is PauseKind.CONFIRMATION
    explained = bedrock.received[2].tool_results()[-1]
    assert "status" not in explained
    assert words in explained["content"][0]["text"]
    assert_alternating(bedrock)


def test_throttling_is_retried_with_backoff_then_busy_and_resumable(
    bedrock: BedrockStandIn, world: World, demo: Demo, tmp_path: Path
) -> None:
    live = bedrock_world(bedrock, world.url, tmp_path / "live", max_attempts=3)
    bedrock.add(Fault(), Fault(), tool_call("inspect_datasets"), Fault(), Fault(), Fault())
    with pytest.raises(ModelBusyError, match="busy"):
        live.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    assert len(bedrock.received) == 6, "3 attempts for each of two model turns"
    (investigation,) = live.saved.investigations()
    assert live.saved.conversation(investigation.id) == [], "a failed turn saves nothing"

    bedrock.add(tool_call("inspect_datasets"), tool_call("validate_mapping"))
    again = live.service.intake.investigate_again(investigation.id, actor="alice")
    assert again.kind is PauseKind.CONFIRMATION
    assert_alternating(bedrock)


def test_a_timeout_is_a_clear_error_and_the_approval_can_be_retried(
    bedrock: BedrockStandIn, world: World, demo: Demo, tmp_path: Path
) -> None:
    live = bedrock_world(
        bedrock, world.url, tmp_path / "live", read_timeout_seconds=0.5, max_attempts=2
    )
    bedrock.add(tool_call("inspect_datasets"), tool_call("validate_mapping"))
    started = live.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None
    bedrock.add(Stall(1.5), Stall(1.5))
    with pytest.raises(ModelUnavailableError, match=r"did not answer within 0\.5 s"):
        live.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    state = live.saved.pause(request.pause_id)
    assert state is not None and state.status is PauseStatus.FAILED

    bedrock.add(tool_call("reconcile"), summary_from_last_result)
    outcome = live.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert outcome.counts == demo.truth["findings"]
    assert_alternating(bedrock)
