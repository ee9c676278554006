"""A request as plain text: what a person reads of it in a terminal (`reconbot investigate`,
`decide`, `status`) and in the whole-request file the bot posts in the request's Slack thread.
Every value taken from a file goes through `cell`, so none can drive a terminal or forge a line.
"""

from __future__ import annotations

from agent.data.schema import Role
from agent.domain import ApprovalRequest, FieldReading, PauseKind
from bot.presentation.readings import ASKED, asked_of, describe_reading, routine_line, shown_reading
from bot.presentation.text import cell

TITLES = {
    PauseKind.CONFIRMATION: "Approval needed",
    PauseKind.CLARIFICATION: "A question before approval",
    PauseKind.BLOCKED_RECONCILE: "Reconciling is blocked until the mapping is approved",
    PauseKind.POLICY_CHANGE: "A change to the channel's policy",
}
"""Each kind of request's title, in Slack and in plain text alike."""


def render_request(request: ApprovalRequest) -> str:
    """A request as a person reads it in plain text (a terminal, the whole-request file)."""
    title = TITLES[request.kind]
    lines = [
        f"{title}: {request.investigation_id}, revision {request.revision}",
        f"  request {request.pause_id}, expires {request.expires_at:%Y-%m-%d %H:%M} UTC",
    ]
    for ref in request.files:
        rows = request.rows.get(ref.role.value)
        shown = f", {rows:,} rows" if rows is not None else ""
        lines.append(
            f"  {ref.role.value}: {cell(ref.name)} ({ref.size:,} bytes{shown}) {ref.digest[:19]}…"
        )
    lines.extend(_mapping_lines(request))
    lines.extend(policy_change_lines(request))
    lines.extend(f"  made: {cell(line)}" for line in request.provenance)
    if request.mapping_digest:
        lines.append(f"  mapping digest {request.mapping_digest}")
    lines.append(f"  policy {request.policy_version}")
    lines.append(f"  authorization {request.authorization_identity}")
    lines.extend(f"  problem: {cell(p)}" for p in request.problems)
    for question in request.clarifications:
        lines.append(f"  question: {cell(question.question)}")
        if question.choices:
            lines.append(f"    choices: {', '.join(cell(c) for c in question.choices)}")
    lines.extend(f"  warning: {cell(w)}" for w in request.warnings)
    lines.extend(f"  note: {cell(n)}" for n in request.notes)
    if request.routine:
        lines.append(f"  {cell(routine_line(request))}")
    lines.append(f"  {request.message}")
    return "\n".join(lines)


def policy_change_lines(request: ApprovalRequest) -> list[str]:
    """What a policy change would put in force: each rule it changes in words, the versions,
    and what it would have changed on the channel's last approved reconciliation."""
    change = request.policy_change
    if change is None:
        return []
    lines = [f"  in {cell(change.channel)}, proposed by {cell(request.requested_by)}:"]
    lines.extend(f"    - {cell(c.words)}" for c in change.changes)
    lines.append(f"  version in force {change.before_version}")
    lines.append(f"  version proposed {change.after_version}")
    effect = change.effect
    if effect is None and change.effect_missing is not None:
        lines.append(f"  its effect is not shown: {cell(change.effect_missing)}")
    elif effect is None:
        lines.append("  no reconciliation approved in this channel yet: nothing to compare")
    else:
        moved = [
            f"{name} {effect.before.get(name, 0)} -> {effect.after.get(name, 0)}"
            for name in sorted(set(effect.before) | set(effect.after))
            if effect.before.get(name, 0) != effect.after.get(name, 0)
        ]
        said = ", ".join(moved) or "no count changes"
        lines.append(
            f"  on {effect.investigation_id}'s approved reconciliation (not new data, so shown "
            f"to everyone): {said}"
        )
    return lines


def _mapping_lines(request: ApprovalRequest) -> list[str]:
    """The mapping a request shows: each field's column (what a question asks marked so) and
    how each file is read; a request with no mapping to approve says it is proposed so far."""
    shown = {role: shown_reading(request, role) for role in Role}
    if not request.fields and all(reading is None for reading in shown.values()):
        if request.kind is PauseKind.CLARIFICATION:
            return ["  mapping: none proposed yet; the problem below must be answered first"]
        return []
    header = "  mapping:" if request.approvable else "  mapping proposed so far (not approvable):"
    lines = [header]
    for reading in request.fields:
        if reading.field in asked_of(shown[reading.role]):
            lines.append(f"    {reading.role.value}.{reading.field:<16} <- {ASKED}")
        elif reading.column is not None:
            lines.append(_field_line(reading))
        elif reading.required:
            role = reading.role.value
            lines.append(f"    {role}.{reading.field:<16} <- no column found (required)")
    for role, described in shown.items():
        if described is not None:
            lines.append(f"    {role.value} read as: {cell(describe_reading(described))}")
    return lines


def _field_line(reading: FieldReading) -> str:
    samples = ", ".join(cell(sample) for sample in reading.samples[:3])
    column = cell(repr(reading.column))
    return (
        f"    {reading.role.value}.{reading.field:<16} <- {column:<28} "
        f"{reading.confidence_percent:>3}%  e.g. {samples}"
    )
