"""What the terminal prints of a case: each request, outcome, refusal and answer, for a person
or as one JSON document per line (`--json`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from agent.data.schema import Role
from agent.domain import ApprovalRequest, FieldReading, Outcome, PauseKind
from agent.errors import ApprovalRefusedError
from bot.readings import (
    ASKED,
    asked_of,
    describe_reading,
    reading_document,
    routine_line,
    shown_reading,
)
from bot.status_text import exceptions_line, render_outcome
from bot.terminal_text import cell, printable


class Printer:
    """Prints each step for a person, or as one JSON document per line."""

    def __init__(self, as_json: bool, out: TextIO = sys.stdout) -> None:
        self.as_json = as_json
        self.out = out
        self.locate: Callable[[Outcome], str | None] = lambda _: None

    def emit(self, document: dict[str, Any], text: str) -> None:
        """Print one step."""
        if self.as_json:
            print(json.dumps(document, ensure_ascii=False), file=self.out, flush=True)
        else:  # nothing from a file may drive the terminal (escape sequences, CR)
            print(printable(text), file=self.out, flush=True)

    def request(self, request: ApprovalRequest) -> None:
        """Print an approval request (or a clarification)."""
        self.emit(request_document(request), render_request(request))

    def outcome(self, outcome: Outcome) -> None:
        """Print an outcome, and where its exceptions CSV is."""
        where = self.locate(outcome)
        text = render_outcome(outcome)
        if where is not None:
            text += "\n" + exceptions_line(outcome, where)
        self.emit({**outcome_document(outcome), "exceptions_csv": where}, text)

    def refusal(self, error: ApprovalRefusedError) -> None:
        """Print a refused decision."""
        self.emit(
            {"type": "refusal", "reason": error.reason, "message": str(error)},
            f"Refused ({error.reason}): {error}",
        )


def request_document(request: ApprovalRequest) -> dict[str, Any]:
    """The JSON form of a request: ids, kind, mapping, inputs and the authorization identity,
    and every note the person is shown (what was read, facts, warnings: `notes`), in full.

    `mapping` is what an approval binds (null when nothing may be approved, with its digest);
    `proposed_mapping` is the reading the request shows, per role `columns`, `options` and
    `asked` (what the questions ask): a clarification's partial reading, a confirmation's
    mapping."""
    return {
        "type": "request",
        "investigation_id": request.investigation_id,
        "pause_id": request.pause_id,
        "kind": request.kind.value,
        "revision": request.revision,
        "files": [f.model_dump(mode="json") for f in request.files],
        "input_identity": request.input_identity,
        "mapping": request.mapping.model_dump(mode="json") if request.mapping else None,
        "mapping_digest": request.mapping_digest,
        "approvable": request.approvable,
        "proposed_mapping": reading_document(request),
        "policy_version": request.policy_version,
        "authorization_identity": request.authorization_identity,
        "expires_at": request.expires_at.isoformat(),
        "questions": [c.model_dump(mode="json") for c in request.clarifications],
        "problems": request.problems,
        "warnings": list(request.warnings),
        "notes": list(request.notes),
        "routine": list(request.routine),
        "provenance": list(request.provenance),
        "rows": dict(request.rows),
        "message": request.message,
    }


def outcome_document(outcome: Outcome) -> dict[str, Any]:
    """The JSON form of an outcome: counts per category id, and where the exceptions are."""
    return {
        "type": "outcome",
        "investigation_id": outcome.investigation_id,
        "pause_id": outcome.pause_id,
        "revision": outcome.revision,
        "counts": outcome.counts,
        "total_findings": sum(outcome.counts.values()),
        "export_digest": outcome.export_digest,
        "export_rows": outcome.export_rows,
        "ledger": outcome.summary.get("ledger", []),
        "report": outcome.report,
    }


def render_request(request: ApprovalRequest) -> str:
    """A request as a person reads it in a terminal."""
    title = {
        "confirmation": "Approval needed",
        "clarification": "A question before approval",
        "blocked_reconcile": "Reconciling is blocked until the mapping is approved",
    }[request.kind.value]
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
