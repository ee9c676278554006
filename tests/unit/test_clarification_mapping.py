"""A question is shown with the mapping it is about, and a partial mapping is never approvable.

The files follow published export column lists: the orders are Shopify's *Export orders* CSV
(`tests/fixtures/formats/shopify_orders.csv`), the payments Stripe's Dashboard payments export
(`stripe_payments.csv`) with the Charge object's captured amount beside its amount, as the
Dashboard names them (`Amount`, `Amount Captured`). Stripe's API reference says
`amount_captured` "can be less than the amount attribute on the charge if a partial capture was
made": one charge here (#1008) captured 110.00 of 119.00, so the two columns differ and the
data cannot settle which one holds the captured amount. Inference asks; every other field is
chosen, and the request shows those columns and how both files are read, in the terminal, in
the `--json` document and in Slack, with the asked field marked.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent.data.schema import Role
from agent.dependencies import Dependencies, WorkflowSettings
from agent.domain import (
    ApprovalRequest,
    Approver,
    ApproverPolicy,
    PauseKind,
    PauseStatus,
    ProposedMapping,
    RefusalReason,
)
from agent.errors import ApprovalRefusedError
from agent.identity import canonical_json
from agent.models.offline import OfflineModel
from agent.usecases import UseCases, build_use_cases
from agent.usecases.common import Upload
from bot.presentation.readings import ASKED
from bot.presentation.request_text import render_request
from bot.slack import blocks
from bot.slack.payloads import ModalMetadata
from bot.terminal.printer import request_document
from storage.blobs import LocalBlobStore
from tests.standins.slack.web_api import validate_blocks
from tests.support.fake_uow import MemoryUnitOfWorkFactory

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
QUESTION = "Which column of stripe_unified_payments.csv holds the captured_amount"


class _Clock:
    def now(self) -> datetime:
        return START


def stripe_unified_payments() -> bytes:
    """Stripe's Dashboard payments export with `Amount Captured` after `Amount`; #1008's
    charge was for 119.00 and captured 110.00 (a partial capture)."""
    rows = list(csv.reader(io.StringIO((FORMATS / "stripe_payments.csv").read_text())))
    header = rows[0]
    at = header.index("Amount")
    reference = header.index("order_id (metadata)")
    out = [[*header[: at + 1], "Amount Captured", *header[at + 1 :]]]
    for row in rows[1:]:
        captured = row[at]
        amount = "119.00" if row[reference] == "#1008" else row[at]
        out.append([*row[:at], amount, captured, *row[at + 1 :]])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(out)
    return buffer.getvalue().encode()


def _uploads() -> list[Upload]:
    orders = (FORMATS / "shopify_orders.csv").read_bytes()
    return [
        Upload(io.BytesIO(orders), "shopify_orders.csv"),
        Upload(io.BytesIO(stripe_unified_payments()), "stripe_unified_payments.csv"),
    ]


@pytest.fixture
def service(tmp_path: Path) -> UseCases:
    settings = WorkflowSettings(
        approval_ttl=timedelta(hours=24),
        approver_policy=ApproverPolicy(),
        workdir=tmp_path / "work",
        claim_lease=timedelta(minutes=15),
    )
    deps = Dependencies(
        MemoryUnitOfWorkFactory(),
        LocalBlobStore(tmp_path / "blobs"),
        OfflineModel(),
        _Clock(),
        settings,
    )
    return build_use_cases(deps)


@pytest.fixture
def asked(service: UseCases) -> ApprovalRequest:
    started = service.intake.start(_uploads(), requested_by="U0ALICE")
    assert started.request is not None
    return started.request


def test_the_question_carries_every_column_chosen_and_the_reading_not_the_asked_one(
    asked: ApprovalRequest,
) -> None:
    assert asked.kind is PauseKind.CLARIFICATION
    assert asked.mapping is None and asked.mapping_digest is None and not asked.approvable
    [question] = asked.clarifications
    assert question.field == "captured_amount"
    assert set(question.choices) == {"Amount", "Amount Captured"}
    proposed = asked.proposed
    assert isinstance(proposed, ProposedMapping)
    assert proposed.orders.columns["order_id"] == "Name"
    assert proposed.orders.columns["order_amount"] == "Total"
    assert proposed.payments.columns["order_id"] == "order_id (metadata)"
    assert proposed.payments.columns["refunded_amount"] == "Amount Refunded"
    assert "captured_amount" not in proposed.payments.columns  # asked, not chosen
    assert proposed.payments.asked == ("captured_amount",)
    assert proposed.orders.asked == ()
    # The reading options inferred for the chosen columns come with them.
    assert "captured_at" in proposed.payments.options.timestamps
    assert "refunded_amount" in proposed.payments.options.amounts
    assert "captured_amount" not in proposed.payments.options.amounts
    # It is saved as the snapshot is (canonical JSON: no floats) and read back the same.
    document = asked.model_dump(mode="json")
    canonical_json(document)
    assert ApprovalRequest.model_validate(document) == asked


def test_the_terminal_shows_the_chosen_columns_the_reading_and_the_question(
    asked: ApprovalRequest,
) -> None:
    text = render_request(asked)
    assert "mapping proposed so far (not approvable):" in text
    assert "orders.order_id         <- 'Name'" in text
    assert "payments.order_id         <- 'order_id (metadata)'" in text
    assert f"payments.captured_amount  <- {ASKED}" in text
    assert "payments read as: utf-8; delimiter ','" in text
    assert "orders read as: utf-8" in text
    assert "mapping digest" not in text
    assert f"question: {QUESTION}" in text


def test_the_json_request_shows_the_partial_mapping_and_binds_none(
    asked: ApprovalRequest,
) -> None:
    document = json.loads(json.dumps(request_document(asked)))
    assert document["kind"] == "clarification"
    # What an approval would bind: nothing.
    assert document["mapping"] is None and document["mapping_digest"] is None
    assert document["approvable"] is False
    proposed = document["proposed_mapping"]
    assert proposed["orders"]["columns"]["order_id"] == "Name"
    assert proposed["payments"]["columns"]["order_id"] == "order_id (metadata)"
    assert "captured_amount" not in proposed["payments"]["columns"]
    assert proposed["payments"]["asked"] == ["captured_amount"]
    assert proposed["payments"]["options"]["timestamps"]["captured_at"]["timezone"] == "UTC"
    [question] = document["questions"]
    assert question["field"] == "captured_amount"
    assert question["question"].startswith(QUESTION)


def test_slack_shows_the_chosen_columns_the_reading_and_the_question_without_approve(
    asked: ApprovalRequest,
) -> None:
    rendered = blocks.approval_message(asked)
    validate_blocks(rendered.blocks)
    text = json.dumps(rendered.blocks, ensure_ascii=False)
    assert "*payments* (proposed so far)" in text
    assert "`order_id` ← `order_id (metadata)`" in text
    assert "`order_id` ← `Name`" in text
    assert f"`captured_amount` ← *{ASKED}*" in text
    assert "Reading:\\n```utf-8; delimiter" in text
    assert QUESTION in text
    actions = rendered.blocks[-1]
    assert [e["action_id"] for e in actions["elements"]] == ["edit_mapping", "reject"]
    select = next(
        b["accessory"]
        for b in rendered.blocks
        if b.get("accessory", {}).get("type") == "static_select"
    )
    assert {o["value"] for o in select["options"]} == {
        "payments.captured_amount=Amount",
        "payments.captured_amount=Amount Captured",
    }
    # Once decided or replaced, the same description stays.
    assert "`order_id` ← `order_id (metadata)`" in json.dumps(
        blocks.decided_message(asked, "done").blocks, ensure_ascii=False
    )


def test_the_edit_form_does_not_answer_the_question_for_the_person(
    asked: ApprovalRequest, service: UseCases
) -> None:
    metadata = ModalMetadata(asked.pause_id, asked.authorization_identity, "C0FIN", "1.2")
    view = blocks.edit_modal(asked, service.queries.columns(asked), metadata)
    inputs = {b["block_id"]: b["element"] for b in view["blocks"] if b["type"] == "input"}
    captured = next(e for k, e in inputs.items() if "captured_amount" in k)
    order_id = next(e for k, e in inputs.items() if k.startswith("payments") and "order_id" in k)
    assert "initial_option" not in captured
    assert order_id["initial_option"]["text"]["text"] == "order_id (metadata)"


def test_approving_the_question_is_refused_and_changes_nothing(
    asked: ApprovalRequest, service: UseCases
) -> None:
    with pytest.raises(ApprovalRefusedError) as refused:
        service.decisions.confirm(
            asked.pause_id, asked.authorization_identity, Approver(user="U0BOB")
        )
    assert refused.value.reason is RefusalReason.NOT_APPROVABLE
    state = service.queries.pause(asked.pause_id)
    assert state is not None and state.status is PauseStatus.PENDING


def test_the_answer_makes_a_confirmation_that_shows_its_mapping(
    asked: ApprovalRequest, service: UseCases
) -> None:
    answered = service.decisions.edit(
        asked.pause_id,
        asked.authorization_identity,
        Approver(user="U0BOB"),
        {Role.PAYMENTS: {"captured_amount": "Amount Captured"}},
    )
    assert answered.kind is PauseKind.CONFIRMATION and answered.approvable
    assert answered.proposed is None  # the mapping is what it shows and what it binds
    assert answered.mapping is not None
    document = request_document(answered)
    assert document["proposed_mapping"]["payments"]["columns"] == dict(
        answered.mapping.payments.columns
    )
    assert document["proposed_mapping"]["payments"]["asked"] == []
    text = render_request(answered)
    assert "\n  mapping:\n" in text and ASKED not in text
    assert "payments.captured_amount  <- 'Amount Captured'" in text


def test_an_answer_that_cannot_work_still_shows_the_columns_chosen(
    asked: ApprovalRequest, service: UseCases
) -> None:
    # The column answer stands; the option value that cannot be read is the problem.
    edited = service.decisions.edit(
        asked.pause_id,
        asked.authorization_identity,
        Approver(user="U0BOB"),
        {Role.PAYMENTS: {"captured_amount": "Amount Captured", "decimal": "x"}},
    )
    assert edited.kind is PauseKind.CLARIFICATION and not edited.approvable
    assert edited.mapping is None
    assert any('decimal is . or , (or dot, comma), not "x"' in p for p in edited.problems)
    assert edited.proposed is not None
    assert edited.proposed.payments.columns["captured_amount"] == "Amount Captured"
    assert edited.proposed.payments.columns["order_id"] == "order_id (metadata)"
    text = render_request(edited)
    assert "payments.captured_amount  <- 'Amount Captured'" in text
    assert "payments read as:" in text
    with pytest.raises(ApprovalRefusedError) as refused:
        service.decisions.confirm(
            edited.pause_id, edited.authorization_identity, Approver(user="U0CAROL")
        )
    assert refused.value.reason is RefusalReason.NOT_APPROVABLE


def test_a_request_saved_before_the_proposal_was_kept_reads_and_shows_as_it_did(
    asked: ApprovalRequest,
) -> None:
    document = asked.model_dump(mode="json")
    del document["proposed"]
    old = ApprovalRequest.model_validate(document)
    assert old.proposed is None
    assert request_document(old)["proposed_mapping"] is None
    text = render_request(old)
    assert "payments.order_id         <- 'order_id (metadata)'" in text
    assert "read as:" not in text
    validate_blocks(blocks.approval_message(old).blocks)


def test_a_question_with_nothing_proposed_says_so_rather_than_an_empty_mapping(
    asked: ApprovalRequest,
) -> None:
    bare = asked.model_copy(update={"fields": [], "proposed": None, "clarifications": []})
    assert "mapping: none proposed yet" in render_request(bare)
    said = json.dumps(blocks.approval_message(bare).blocks)
    assert "No reading could be proposed yet" in said
