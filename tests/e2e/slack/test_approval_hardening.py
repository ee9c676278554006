"""Approvals an attacker or a careless colleague tried on the Slack stand-in: four-eyes across
everyone who produced a request, a button value replayed from another thread, and a question
that asks to reconcile. Each is refused and nothing runs."""

from __future__ import annotations

import json
import time

from tests.standins.slack import SlackStandIn

from .conftest import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    BotFactory,
    DemoFiles,
    RunningBot,
    is_request,
    request_message,
    upload_pair,
    wait_ephemeral,
    wait_text,
)


def _nothing_ran(standin: SlackStandIn) -> bool:
    return standin.workspace.calls_to("files.completeUploadExternal") == []


def _one_row_fewer(csv: bytes) -> bytes:
    """The same export without its last data row: another file, still a readable one."""
    lines = csv.rstrip(b"\r\n").split(b"\n")
    return b"\n".join(lines[:-1]) + b"\n"


def test_whoever_uploads_the_replacement_may_not_approve_what_it_produced(
    standin: SlackStandIn, make_bot: BotFactory, demo_files: DemoFiles
) -> None:
    make_bot(RECONBOT_SELF_APPROVAL="false")
    upload = upload_pair(standin, demo_files, user=ALICE)
    request_message(standin, upload.ts)
    standin.post_files(
        BOB,
        CHANNEL,
        [("payments.csv", _one_row_fewer(demo_files.payments))],
        thread_ts=upload.ts,
    )
    second = request_message(standin, upload.ts, after=1)
    assert BOB in json.dumps(second.blocks), "the request shows who made its revision"

    standin.click(BOB, second, "approve")
    standin.click(ALICE, second, "approve")
    refusals = wait_ephemeral(standin, BOB) + wait_ephemeral(standin, ALICE)
    assert all("NOT_AUTHORIZED" in r["text"] for r in refusals)
    time.sleep(0.5)
    assert _nothing_ran(standin)

    standin.click(CAROL, second, "approve")
    wait_text(standin, upload.ts, "Reconciled")


def test_a_button_value_replayed_in_another_thread_runs_nothing(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    first = upload_pair(standin, demo_files)
    target = request_message(standin, first.ts)
    second = upload_pair(standin, demo_files)
    decoy = request_message(standin, second.ts)
    _, button = target.element("approve")

    # The first case's approval, clicked on the second case's message.
    standin.click(BOB, decoy, "approve", value=button["value"])
    refusal = wait_ephemeral(standin, BOB)[0]
    assert "ORIGIN_MISMATCH" in refusal["text"]
    assert ALICE not in refusal["text"], "the refusal says nothing about the other request"
    time.sleep(0.5)
    assert _nothing_ran(standin)
    assert standin.workspace.message(CHANNEL, target.ts).action_ids() == [
        "approve",
        "edit_mapping",
        "reject",
    ]
    standin.click(BOB, target, "approve")
    wait_text(standin, first.ts, "Reconciled")


def test_a_question_asking_to_reconcile_makes_no_request(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    before = len(standin.workspace.thread(CHANNEL, upload.ts))
    standin.reply(CAROL, CHANNEL, upload.ts, "can you reconcile this now?")
    standin.workspace.wait_for(
        lambda: len(standin.workspace.thread(CHANNEL, upload.ts)) >= before + 2,
        what="the bot's answer",
    )
    time.sleep(1.0)
    requests = [m for m in standin.workspace.thread(CHANNEL, upload.ts) if is_request(m)]
    assert [m.ts for m in requests] == [request.ts]
    assert standin.workspace.message(CHANNEL, request.ts).action_ids() == [
        "approve",
        "edit_mapping",
        "reject",
    ]
    assert _nothing_ran(standin)
