"""What `reconbot status` and the terminal print about a case: its pauses, decisions and outcome."""

from __future__ import annotations

from agent.data.ledger import ledger_lines
from agent.domain import InvestigationStatusReport, Outcome, PauseStatus


def render_status(report: InvestigationStatusReport) -> str:
    """Everything saved about an investigation, as a person reads it in a terminal."""
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
    elif any(s.status is PauseStatus.PENDING for s in report.pauses):
        lines.append("  awaiting a decision")
    return "\n".join(lines)


def render_outcome(outcome: Outcome) -> str:
    """An outcome as a person reads it in a terminal, with where every row of each file went."""
    lines = [f"Outcome of {outcome.investigation_id} (request {outcome.pause_id}):", outcome.report]
    ledger = ledger_lines(outcome.summary)
    if ledger:
        lines.append("Every row accounted for:")
        lines.extend(f"  {line}" for line in ledger)
    return "\n".join(lines)
