"""In a Slack thread, "which orders were never paid?" is answered with the unpaid orders of the
exceptions file the bot shared in that thread, with their rows and how many there are. (A list
longer than the limit, with its "20 of N listed" sentence: tests/e2e/test_finding_answers_cli.py
and tests/integration/workflow/test_finding_answers.py.)"""

from __future__ import annotations

import csv
import io
import re

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

LINE = re.compile(r"^- orders (\S+) \(orders\.csv row (\d+)\); expected ")


def test_which_orders_were_never_paid_in_the_thread(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    standin.click(BOB, request, "approve")
    wait_text(standin, upload.ts, "Reconciled")
    shared = standin.workspace.wait_for(lambda: exceptions_files(standin, upload.ts), what="file")
    rows = list(csv.DictReader(io.StringIO(shared[0].content.decode("utf-8-sig"))))
    unpaid = {
        r["order_ids"]: r["orders_rows"] for r in rows if r["category"] == "order_without_capture"
    }
    assert unpaid, "the demo has unpaid orders"

    question = standin.reply(ALICE, CHANNEL, upload.ts, "<@U0BOT> which orders were never paid?")

    def answers() -> list[Message]:
        return [
            m
            for m in standin.workspace.thread(CHANNEL, upload.ts)
            if m.bot_id and float(m.ts) > float(question.ts)
        ]

    answer = standin.workspace.wait_for(answers, what="an answer")[0]
    # What the thread shows: the answer's section (its notification text says the same).
    text = "\n".join(b["text"]["text"] for b in answer.blocks if b.get("type") == "section")
    lines = text.splitlines()
    assert 1 < len(unpaid) <= 20, "the Slack demo's unpaid orders fit one list"
    assert lines[0] == f"{len(unpaid)} order_without_capture findings, largest difference first:"
    listed = {m.group(1): m.group(2) for m in map(LINE.match, lines[1:]) if m}
    assert listed == unpaid, "every unpaid order, each with its row in orders.csv"
    assert len(lines) == 1 + len(unpaid)
