"""The agent's trace as people read it: `reconbot status` (text), `/recon status` and the
results message in Slack; every execution in order, the counts per phase run, the approval
that bound the reconciliation; Block Kit's limits and escaping whatever the trace holds."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from agent.domain import (
    BoundApproval,
    Investigation,
    InvestigationStatus,
    InvestigationStatusReport,
    Outcome,
    ToolExecution,
    phase_runs,
)
from bot.slack import blocks
from bot.terminal.status_text import render_status
from tests.standins.slack.web_api import validate_blocks

NOW = datetime(2026, 11, 30, 10, 42, tzinfo=UTC)
FIRST, SECOND = "aaaa1111" + "0" * 24, "bbbb2222" + "0" * 24
BOB = "U0BOB"
HOSTILE = "<!here> <@U0BOSS> *bold* `tick` &"


def execution(phase: str, invocation: str, name: str, ms: int = 12) -> ToolExecution:
    return ToolExecution(
        investigation_id="INV-1",
        invocation_id=invocation,
        phase=phase,
        tool_use_id=f"{invocation}-{name}",
        name=name,
        status="success",
        duration_ms=ms,
    )


TRACE = [
    execution("investigate", FIRST, "inspect_datasets", 44),
    execution("investigate", FIRST, "validate_mapping", 1408),
    execution("resume", SECOND, "reconcile", 195),
]


def outcome(findings: list[dict[str, Any]] | None = None) -> Outcome:
    return Outcome(
        investigation_id="INV-1",
        pause_id="PAUSE-1",
        revision=1,
        mapping_digest="sha256:" + "c" * 64,
        input_identity="sha256:" + "b" * 64,
        counts={"amount_mismatch": 1},
        summary={"orders": 12345, "payments": 12346},
        top_findings=findings or [],
        report="Reconciled.",
        export_digest=None,
        export_rows=1,
        created_at=NOW,
    )


def report(trace: list[ToolExecution], *, done: bool = True) -> InvestigationStatusReport:
    bound = BoundApproval(
        pause_id="PAUSE-1",
        approved_by=BOB,
        approved_at=NOW,
        input_identity="sha256:" + "b" * 64,
        mapping_digest="sha256:" + "c" * 64,
        policy_version="sha256:" + "d" * 64,
        authorization_identity="sha256:" + "e" * 64,
    )
    return InvestigationStatusReport(
        investigation=Investigation(
            id="INV-1",
            status=InvestigationStatus.COMPLETED if done else InvestigationStatus.AWAITING_DECISION,
            requested_by="U0ALICE",
            channel="C0FINANCE",
            thread_ts="1.0",
            revision=1,
            created_at=NOW,
        ),
        revisions=[],
        pauses=[],
        decisions=[],
        outcome=outcome() if done else None,
        trace=trace,
        trace_phases=phase_runs(trace),
        bound_approval=bound if done else None,
    )


def shown(rendered: blocks.Rendered) -> str:
    validate_blocks(rendered.blocks)
    return json.dumps(rendered.blocks, ensure_ascii=False)


# -- the summary ------------------------------------------------------------------------------


def test_phase_runs_count_each_tool_per_invocation_in_order_of_first_appearance() -> None:
    again = execution("investigate", "cccc3333", "inspect_datasets")
    runs = phase_runs([*TRACE[:2], TRACE[0], TRACE[2], again])
    assert [(r.phase, r.invocation_id[:8], r.executions) for r in runs] == [
        ("investigate", "aaaa1111", 3),
        ("resume", "bbbb2222", 1),
        ("investigate", "cccc3333", 1),
    ]
    assert [(t.name, t.count) for t in runs[0].tools] == [
        ("inspect_datasets", 2),
        ("validate_mapping", 1),
    ]


# -- the terminal -----------------------------------------------------------------------------


def test_status_text_shows_every_execution_the_counts_per_phase_and_the_approval() -> None:
    text = render_status(report(TRACE))
    lines = text.splitlines()
    start = lines.index("How this was computed (every tool the agent ran, in order):")
    assert [line.split() for line in lines[start + 1 : start + 4]] == [
        ["1.", "investigate", "aaaa1111", "inspect_datasets", "success", "44", "ms"],
        ["2.", "investigate", "aaaa1111", "validate_mapping", "success", "1,408", "ms"],
        ["3.", "resume", "bbbb2222", "reconcile", "success", "195", "ms"],
    ]
    assert lines[start + 4 : start + 7] == [
        "Executions per phase:",
        "  investigate (aaaa1111): inspect_datasets 1, validate_mapping 1",
        "  resume (bbbb2222): reconcile 1",
    ]
    assert lines[start + 7] == (
        f"Reconciled under request PAUSE-1, approved by {BOB} at 2026-11-30 10:42:00: "
        f"inputs sha256:{'b' * 12}, mapping sha256:{'c' * 12}, policy sha256:{'d' * 12}"
    )


def test_status_text_says_when_nothing_ran_and_names_no_approval_before_an_outcome() -> None:
    text = render_status(report([], done=False))
    assert "How this was computed" in text
    assert "no tool executions recorded yet" in text
    assert "Reconciled under" not in text


# -- Slack ------------------------------------------------------------------------------------


def test_recon_status_shows_the_trace_the_counts_and_the_approval_that_bound_it() -> None:
    text = shown(blocks.status_message(report(TRACE)))
    assert "How this was computed" in text
    assert "1. `investigate` `aaaa1111` inspect_datasets · success · 44 ms" in text
    assert "3. `resume` `bbbb2222` reconcile · success · 195 ms" in text
    assert "*investigate* `aaaa1111`: inspect_datasets 1, validate_mapping 1" in text
    assert "*resume* `bbbb2222`: reconcile 1" in text
    assert f"approval by <@{BOB}> of request PAUSE-1" in text
    assert f"mapping `sha256:{'c' * 12}`" in text


def test_a_long_trace_is_cut_with_and_n_more_within_block_kit_limits() -> None:
    long = [execution("answer", f"{n:032x}", f"get_evidence_{'x' * 50}", n) for n in range(400)]
    rendered = blocks.status_message(report([*TRACE, *long]))
    text = shown(rendered)
    assert len(rendered.blocks) <= 50
    assert all(len(b.get("text", {}).get("text", "")) <= 3000 for b in rendered.blocks)
    assert "…and " in text and " more" in text
    assert "1. `investigate`" in text, "the first executions are the ones kept"


def test_tool_names_the_model_made_up_are_escaped_in_the_trace() -> None:
    made_up = [*TRACE, execution("answer", "dddd4444" + "0" * 24, HOSTILE)]
    status = shown(blocks.status_message(report(made_up)))
    results = shown(blocks.results_message(outcome(), BOB, made_up))
    for text in (status, results):
        assert "<!here>" not in text and "<@U0BOSS>" not in text
        assert "&lt;!here&gt;" in text


def test_results_say_how_they_were_computed_from_the_recorded_trace() -> None:
    text = shown(blocks.results_message(outcome(), BOB, TRACE))
    assert (
        "*How was this computed?* inspect_datasets ×1, validate_mapping ×1 (investigate); "
        f"reconcile ×1 (resume); after the approval by <@{BOB}> of request PAUSE-1, "
        f"inputs `sha256:{'b' * 12}`, mapping `sha256:{'c' * 12}`. "
        "`/recon status INV-1` for the full trace."
    ) in text

    twice = [*TRACE, execution("resume", SECOND, "reconcile")]
    assert "reconcile ×2 (resume)" in shown(blocks.results_message(outcome(), BOB, twice))


def test_results_show_amounts_grouped_with_their_currency_and_nothing_for_none() -> None:
    finding = {
        "category": "capture_without_order",
        "order_ids": [],
        "payment_ids": ["ch_1"],
        "currency": "GBP",
        "expected": None,
        "actual": "12345.50",
        "evidence": [{"file": "payments.csv", "rows": [3], "ids": ["ch_1"]}],
    }
    text = shown(blocks.results_message(outcome([finding]), BOB, TRACE))
    assert "expected nothing, found 12,345.50 GBP" in text
    assert "None" not in text
    assert "12,345 orders against 12,346 payments" in text
