"""In Slack, a question is posted with the mapping it is about, and a forged Approve on it is
refused (the bot over HTTP against the stand-in, as in production).

The pair is Shopify's orders export and Stripe's Dashboard payments export with both `Amount`
and `Amount Captured` (one partial capture), as in `tests/unit/test_clarification_mapping.py`.
"""

from __future__ import annotations

import time

from tests.standins.slack import SlackStandIn
from tests.unit.test_clarification_mapping import FORMATS, stripe_unified_payments

from .conftest import ALICE, BOB, CHANNEL, RunningBot, request_message, wait_ephemeral


def test_the_question_shows_the_columns_chosen_and_approving_it_is_refused(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    upload = standin.post_files(
        ALICE,
        CHANNEL,
        [
            ("shopify_orders.csv", (FORMATS / "shopify_orders.csv").read_bytes()),
            ("stripe_unified_payments.csv", stripe_unified_payments()),
        ],
    )
    question = request_message(standin, upload.ts)
    assert question.action_ids() == ["edit_mapping", "reject", "answer:0"]
    text = question.all_text()
    assert "*payments* (proposed so far)" in text
    assert "`order_id` ← `order_id (metadata)`" in text
    assert "`order_id` ← `Name`" in text
    assert "`captured_amount` ← *? (asked)*" in text
    assert "Reading:\n```utf-8; delimiter" in text
    assert "Which column of stripe_unified_payments.csv holds the captured_amount" in text

    # An Approve the message never offered, carrying the request's own button value.
    block, button = question.element("edit_mapping")
    action = {
        "type": "button",
        "action_id": "approve",
        "block_id": block.get("block_id", ""),
        "value": button["value"],
        "action_ts": str(time.time()),
    }
    standin.deliver_interaction(standin.block_actions(BOB, question, action))
    [refusal] = wait_ephemeral(standin, BOB)
    assert "NOT_APPROVABLE" in refusal["text"]
    time.sleep(0.5)
    assert standin.workspace.calls_to("files.completeUploadExternal") == []
    assert standin.workspace.message(CHANNEL, question.ts).action_ids() == [
        "edit_mapping",
        "reject",
        "answer:0",
    ]
