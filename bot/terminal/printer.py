"""What the terminal prints of a case: each request, outcome, refusal and answer, for a person
or as one JSON document per line (`--json`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from agent.domain import ApprovalRequest, Outcome
from agent.errors import ApprovalRefusedError
from bot.presentation.readings import reading_document
from bot.presentation.request_text import render_request
from bot.presentation.text import printable
from bot.terminal.status_text import exceptions_line, render_outcome


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
        "policy_change": (
            request.policy_change.model_dump(mode="json") if request.policy_change else None
        ),
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
