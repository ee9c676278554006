"""Reject and Edit through modals, questions in the thread, `/recon`, and the App Home tab."""

from __future__ import annotations

import time
from typing import Any

from tests.standins.slack import Message, SlackStandIn

from .conftest import (
    ALICE,
    BOB,
    CHANNEL,
    DemoFiles,
    RunningBot,
    exceptions_files,
    request_message,
    upload_pair,
    wait_text,
)


def _open_view(standin: SlackStandIn, callback_id: str, *, ready: str = "") -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        for view in standin.workspace.views.values():
            if view.get("callback_id") == callback_id and ready in str(view):
                return view
        return None

    return standin.workspace.wait_for(probe, what=f"the {callback_id} modal")


def test_reject_needs_a_reason_and_then_closes_the_request(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    seen = request.snapshot()
    assert standin.click(BOB, request, "reject").status == 200
    view = _open_view(standin, "reject_view")

    empty = standin.submit_view(BOB, view["id"], {"reason": {"reason_input": {"value": "  "}}})
    assert empty.json()["response_action"] == "errors"
    assert "reason" in empty.json()["errors"]

    done = standin.submit_view(
        BOB, view["id"], {"reason": {"reason_input": {"value": "wrong month exported"}}}
    )
    assert done.status == 200 and not done.body
    text = wait_text(standin, upload.ts, "Rejected by <@U0BOB>")
    assert "wrong month exported" in text
    assert standin.workspace.message(CHANNEL, request.ts).action_ids() == []

    standin.click(ALICE, seen, "approve")
    refusal = standin.workspace.wait_for(lambda: standin.workspace.ephemerals)[0]
    assert "REJECTED" in refusal["text"] and "wrong month exported" in refusal["text"]


def test_edit_becomes_a_new_proposal_with_its_own_approval(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    first_value = request.element("approve")[1]["value"]
    standin.click(BOB, request, "edit_mapping")
    view = _open_view(standin, "edit_mapping_view", ready="orders.customer")
    selects = {b["block_id"]: b["element"] for b in view["blocks"] if b.get("type") == "input"}
    customer = selects["orders.customer"]
    current = (customer.get("initial_option") or {}).get("value")
    other = next(o for o in customer["options"] if o["text"]["text"] == "Lineitem name")
    assert other["value"] != current

    unchanged = standin.submit_view(BOB, view["id"], {})
    assert unchanged.json()["response_action"] == "errors"

    standin.submit_view(
        BOB,
        view["id"],
        {"orders.customer": {"column": {"selected_option": other}}},
    )
    new = request_message(standin, upload.ts, after=1)
    old = standin.workspace.message(CHANNEL, request.ts)
    assert "Edited by <@U0BOB>" in old.all_text() and old.action_ids() == []
    assert other["text"]["text"] in new.all_text()
    assert new.element("approve")[1]["value"] != first_value

    standin.click(ALICE, new, "approve")
    wait_text(standin, upload.ts, "Reconciled")


def test_a_question_in_the_thread_gets_an_answer_with_evidence(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    standin.click(BOB, request, "approve")
    wait_text(standin, upload.ts, "Reconciled")
    standin.workspace.wait_for(lambda: exceptions_files(standin, upload.ts), what="file")
    question = standin.reply(ALICE, CHANNEL, upload.ts, "<@U0BOT> why is ch_3Q0000000011C flagged?")

    def answers() -> list[Message]:
        return [
            m
            for m in standin.workspace.thread(CHANNEL, upload.ts)
            if m.bot_id and float(m.ts) > float(question.ts)
        ]

    answer = standin.workspace.wait_for(answers, what="an answer")[0]
    text = answer.all_text()
    assert "ch_3Q0000000011C" in text
    assert "payments.csv" in text and "row" in text
    time.sleep(1.0)
    assert len(answers()) == 1, "the mention is answered once, not again as a thread reply"

    plain = standin.reply(BOB, CHANNEL, upload.ts, "explain over_capture")
    reply = standin.workspace.wait_for(
        lambda: [
            m
            for m in standin.workspace.thread(CHANNEL, upload.ts)
            if m.bot_id and float(m.ts) > float(plain.ts)
        ],
        what="an answer to a plain reply",
    )[0]
    assert "over_capture" in reply.all_text()


def test_recon_status_list_help_and_the_home_tab(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    investigation = request.all_text().split("· ")[1].split()[0]
    assert investigation.startswith("INV-")

    assert standin.command(ALICE, CHANNEL, "/recon", f"status {investigation}").status == 200
    assert standin.command(ALICE, CHANNEL, "/recon", "list").status == 200
    assert standin.command(ALICE, CHANNEL, "/recon", "help").status == 200
    assert standin.command(ALICE, CHANNEL, "/recon", "status INV-NOPE").status == 200
    responses = standin.workspace.wait_for(
        lambda: len(standin.workspace.responses) >= 4 and standin.workspace.responses
    )
    by_text = " | ".join(str(r) for r in responses)
    assert (
        "awaiting decision" in by_text and request.all_text().split("request ")[1][:16] in by_text
    )
    assert f"*{investigation}*" in by_text
    assert "/recon status" in by_text
    assert "There is no investigation INV-NOPE" in by_text
    assert all(r["response_type"] == "ephemeral" for r in responses)

    standin.open_home(ALICE)
    home = standin.workspace.wait_for(lambda: standin.workspace.home_views.get(ALICE))
    assert investigation in str(home)


def _ambiguous_exports(n: int = 60) -> tuple[bytes, bytes]:
    orders = ["Name,Total,Currency,Created at"] + [
        f"#{1001 + i},{100 + i}.00,USD,2025-10-01 10:00:00 +0000" for i in range(n)
    ]
    payments = ["id,Amount,Amount Refunded,Amount Captured,Currency,order_id"] + [
        f"py_{i:06d},{100 + i}.00,0.00,{100 + i - (i % 3)}.00,USD,#{1001 + i}" for i in range(n)
    ]
    return ("\n".join(orders) + "\n").encode(), ("\n".join(payments) + "\n").encode()


def test_a_clarification_is_answered_with_its_select_then_approved(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    orders, payments = _ambiguous_exports()
    upload = standin.post_files(
        ALICE, CHANNEL, [("orders.csv", orders), ("stripe-payments.csv", payments)]
    )
    question = request_message(standin, upload.ts)
    assert question.action_ids() == ["edit_mapping", "reject", "answer:0"]
    assert "captured_amount" in question.all_text()

    standin.select(BOB, question, "answer:0", "payments.captured_amount=Amount Captured")
    answered = request_message(standin, upload.ts, after=1)
    assert answered.action_ids()[0] == "approve"
    assert "Amount Captured" in answered.all_text()
    assert "Edited by <@U0BOB>" in standin.workspace.message(CHANNEL, question.ts).all_text()

    standin.click(ALICE, answered, "approve")
    text = wait_text(standin, upload.ts, "Reconciled")
    assert "amount_mismatch: *40*" in text


def test_reading_options_in_the_edit_modal_become_a_new_request_showing_them(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    standin.click(BOB, request, "edit_mapping")
    view = _open_view(standin, "edit_mapping_view", ready="options.payments")

    wrong = standin.submit_view(
        BOB, view["id"], {"options.payments": {"options": {"value": "colour=red"}}}
    )
    assert wrong.json()["response_action"] == "errors"
    assert "No reading option colour" in wrong.json()["errors"]["options.payments"]

    standin.submit_view(
        BOB, view["id"], {"options.payments": {"options": {"value": "id_strip_zeros = yes"}}}
    )
    new = request_message(standin, upload.ts, after=1)
    assert "ids: leading zeros removed" in new.all_text()
    assert "Edited by <@U0BOB>" in standin.workspace.message(CHANNEL, request.ts).all_text()
    standin.click(ALICE, new, "approve")
    wait_text(standin, upload.ts, "Every row accounted for")


def test_recon_policy_shows_the_channel_s_policy_in_force_to_the_caller_alone(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    from agent.data.policy import Policy

    assert standin.command(ALICE, CHANNEL, "/recon", "policy show").status == 200

    [response] = standin.workspace.wait_for(
        lambda: len(standin.workspace.responses) >= 1 and standin.workspace.responses
    )
    shown = str(response)
    assert response["response_type"] == "ephemeral"
    assert f"Policy in force in <#{CHANNEL}>" in shown
    assert Policy().version.removeprefix("sha256:")[:12] in shown
    assert "no change was approved in this channel" in shown
    assert "window_days_after: `30`" in shown
