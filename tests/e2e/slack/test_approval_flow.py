"""The standard case over HTTP: upload, request with buttons, approve, results in the thread."""

from __future__ import annotations

import csv
import io

from tests.standins.slack import SlackStandIn

from .conftest import (
    ALICE,
    BOB,
    CHANNEL,
    DemoFiles,
    RunningBot,
    exceptions_files,
    request_message,
    upload_pair,
    wait_ephemeral,
    wait_text,
)


def test_two_csvs_approve_results_and_a_second_click_refused(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)

    assert request.thread_ts == upload.ts
    assert request.action_ids() == ["approve", "edit_mapping", "reject"]
    _, approve = request.element("approve")
    assert approve["style"] == "primary" and "confirm" in approve
    text = request.all_text()
    assert "orders.csv" in text and "payments.csv" in text and "sha256:" in text
    assert "order_id" in text and "captured_amount" in text
    assert "mag" in standin.workspace.message(CHANNEL, upload.ts).reactions

    seen = request.snapshot()
    click = standin.click(BOB, seen, "approve")
    assert click.status == 200

    thread = wait_text(standin, upload.ts, "Reconciled")
    assert "exceptions" in thread
    files = standin.workspace.wait_for(lambda: exceptions_files(standin, upload.ts), what="file")
    assert files[0].name.startswith("exceptions-INV-")
    rows = list(csv.reader(io.StringIO(files[0].content.decode("utf-8-sig"))))
    assert len(rows) > 1
    updated = standin.workspace.message(CHANNEL, request.ts)
    assert updated.action_ids() == []
    assert "Approved by <@U0BOB>" in updated.all_text()

    again = standin.click(BOB, seen, "approve")
    assert again.status == 200
    refusal = wait_ephemeral(standin, BOB)[0]
    assert "ALREADY_CONSUMED" in refusal["text"]
    assert refusal["channel"] == CHANNEL
    reconciles = [c for c in standin.workspace.calls_to("files.completeUploadExternal")]
    assert len(reconciles) == 1
    assert ALICE != BOB
