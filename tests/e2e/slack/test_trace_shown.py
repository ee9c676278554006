"""The agent's trace in Slack, over HTTP: after an approval the results message says how they
were computed (from the recorded trace, with the approval that bound it), and `/recon status`
shows every tool execution and the counts per phase."""

from __future__ import annotations

import re

from tests.standins.slack import SlackStandIn

from .conftest import (
    ALICE,
    BOB,
    CHANNEL,
    DemoFiles,
    RunningBot,
    request_message,
    upload_pair,
    wait_text,
)


def test_results_and_recon_status_show_the_trace_and_the_approval_that_bound_it(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    assert standin.click(BOB, request.snapshot(), "approve").status == 200

    thread = wait_text(standin, upload.ts, "How was this computed?")
    [line] = [part for part in thread.splitlines() if "How was this computed?" in part]
    assert "inspect_datasets ×1, validate_mapping ×1 (investigate); reconcile ×1 (resume)" in line
    pause = re.search(r"approval by <@U0BOB> of request (PAUSE-[0-9A-F]+)", line)
    assert pause is not None, line
    assert "mapping `sha256:" in line and "inputs `sha256:" in line
    investigation = re.search(r"`/recon status (INV-[0-9A-F]+)`", line)
    assert investigation is not None, line

    before = len(standin.workspace.responses)
    command = f"status {investigation.group(1)}"
    assert standin.command(ALICE, CHANNEL, "/recon", command).status == 200
    standin.workspace.wait_for(
        lambda: len(standin.workspace.responses) > before, what="the /recon status answer"
    )
    status = str(standin.workspace.responses[-1])
    assert "How this was computed" in status
    executions = re.findall(r"\d+\. `(\w+)` `[0-9a-f]{8}` (\w+) · success · [\d,]+ ms", status)
    assert executions == [
        ("investigate", "inspect_datasets"),
        ("investigate", "validate_mapping"),
        ("resume", "reconcile"),
    ]
    assert re.search(
        r"\*investigate\* `[0-9a-f]{8}`: inspect_datasets 1, validate_mapping 1", status
    )
    assert re.search(r"\*resume\* `[0-9a-f]{8}`: reconcile 1", status)
    assert f"approval by <@{BOB}> of request {pause.group(1)}" in status
