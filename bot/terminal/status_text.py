"""What `reconbot status` and the terminal print about a case: its pauses, decisions, outcome and
how the outcome was computed (the agent's trace and the approval it ran under)."""

from __future__ import annotations

from agent.data.ledger import ledger_lines
from agent.domain import InvestigationStatusReport, Outcome, PauseStatus

SHORT_ID = 8
"""Characters of an invocation id shown (enough to tell the invocations of one case apart)."""
SHORT_DIGEST = 19
"""`sha256:` and the first 12 hex digits of a digest."""


def render_status(report: InvestigationStatusReport, exceptions_csv: str | None = None) -> str:
    """Everything saved about an investigation, as a person reads it in a terminal; with
    `exceptions_csv`, where its outcome's exceptions CSV is (as `investigate` printed it)."""
    inv = report.investigation
    lines = [
        f"{inv.id}: {inv.status.value}, revision {inv.revision}, requested by {inv.requested_by}"
    ]
    for state in report.pauses:
        request = state.request
        who = f" by {state.decided_by}" if state.decided_by else ""
        reason = f" ({state.reason})" if state.reason else ""
        lines.append(
            f"  {request.pause_id} {request.kind.value}, revision {request.revision}: "
            f"{state.status.value}{who}{reason}"
        )
        if state.status is PauseStatus.PENDING:
            lines.append(f"    authorization {request.authorization_identity}")
    for decision in report.decisions:
        verdict = "accepted" if decision.accepted else f"refused {decision.refusal}"
        lines.append(
            f"  {decision.at:%Y-%m-%d %H:%M:%S} {decision.actor} {decision.action}: {verdict}"
        )
    if report.outcome is not None:
        lines.append(render_outcome(report.outcome))
        if exceptions_csv is not None:
            lines.append(exceptions_line(report.outcome, exceptions_csv))
    elif any(s.status is PauseStatus.PENDING for s in report.pauses):
        lines.append("  awaiting a decision")
    lines.extend(render_trace(report))
    return "\n".join(lines)


def render_trace(report: InvestigationStatusReport) -> list[str]:
    """How this was computed: every tool execution of the agent in order (phase, invocation,
    tool, status, duration), the count of each tool per phase run, and the approval the
    reconciliation ran under; so a reader sees each tool ran once per phase, never replayed."""
    lines = ["How this was computed (every tool the agent ran, in order):"]
    if not report.trace:
        lines.append("  no tool executions recorded yet")
    phase_width = max((len(e.phase) for e in report.trace), default=0)
    name_width = max((len(e.name) for e in report.trace), default=0)
    for number, execution in enumerate(report.trace, start=1):
        lines.append(
            f"  {number:>3}. {execution.phase:<{phase_width}}  "
            f"{execution.invocation_id[:SHORT_ID]}  {execution.name:<{name_width}}  "
            f"{execution.status}  {execution.duration_ms:,} ms"
            + (f"  ({execution.detail})" if execution.detail else "")
        )
    if report.trace_phases:
        lines.append("Executions per phase:")
    for run in report.trace_phases:
        tools = ", ".join(f"{tool.name} {tool.count}" for tool in run.tools)
        lines.append(f"  {run.phase} ({run.invocation_id[:SHORT_ID]}): {tools}")
    bound = report.bound_approval
    if bound is not None:
        who = f" by {bound.approved_by}" if bound.approved_by else ""
        at = f" at {bound.approved_at:%Y-%m-%d %H:%M:%S}" if bound.approved_at else ""
        lines.append(
            f"Reconciled under request {bound.pause_id}, approved{who}{at}: "
            f"inputs {bound.input_identity[:SHORT_DIGEST]}, "
            f"mapping {bound.mapping_digest[:SHORT_DIGEST]}"
            + (f", policy {bound.policy_version[:SHORT_DIGEST]}" if bound.policy_version else "")
        )
    return lines


def exceptions_line(outcome: Outcome, where: str) -> str:
    """Where the outcome's exceptions CSV is, in the words the terminal prints after reconciling."""
    return f"Exceptions CSV ({outcome.export_rows:,} rows): {where}"


def render_outcome(outcome: Outcome) -> str:
    """An outcome as a person reads it in a terminal, with where every row of each file went."""
    lines = [f"Outcome of {outcome.investigation_id} (request {outcome.pause_id}):", outcome.report]
    ledger = ledger_lines(outcome.summary)
    if ledger:
        lines.append("Every row accounted for:")
        lines.extend(f"  {line}" for line in ledger)
    return "\n".join(lines)
