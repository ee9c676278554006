"""What one agent invocation works on, passed to the tools through Strands' invocation state.

The context is filled from the database by the workflow, never by the model: the files of the
current revision, the confirmed mapping when one is bound, the saved outcome for questions.
Tools write what they conclude (a pause, a reconciliation) back into it for the workflow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.casefiles import CaseFiles, RowProgress
from agent.data.mapping import Proposal
from agent.data.mapping.readings import header_row_answer
from agent.data.normalize import ValidationReport
from agent.data.policy import Policy
from agent.data.schema import Mapping, Role
from agent.domain import (
    DatasetRef,
    Outcome,
    PauseKind,
    ProposedMapping,
    ProposedReading,
    ToolExecution,
)
from agent.ports import BlobStore

STATE_KEY = "reconbot"


@dataclass(frozen=True)
class BoundContext:
    """A confirmed approval: the only mapping the reconcile tool will use, for which inputs, and
    under which policy version (the request's; the tool refuses if `context.policy` differs)."""

    pause_id: str
    mapping: Mapping
    mapping_digest: str
    input_identity: str
    files: dict[Role, DatasetRef]
    policy_version: str


@dataclass
class PauseSignal:
    """A tool's conclusion that a person must decide before anything else happens."""

    kind: PauseKind
    proposal: Proposal | None
    report: ValidationReport | None
    problems: list[str]
    message: str


def proposed_mapping(proposal: Proposal) -> ProposedMapping:
    """What `proposal` chose so far, for a request that cannot be approved: per file the column
    of every field it settled, the reading options it inferred, and what its questions ask.

    A field a question asks about gets no column (the one inference leans to is among the
    question's choices, not chosen), and no reading of its values; a question about a reading
    option (`date_order`, `captured_amount_decimal`) leaves the columns as they are.
    """
    asked: dict[Role, list[str]] = {role: [] for role in Role}
    for question in proposal.clarifications:
        if question.role is not None and question.field is not None:
            asked[question.role].append(question.field)
    readings = {}
    for role in Role:
        dataset = proposal.dataset(role)
        open_ = tuple(dict.fromkeys(asked[role]))
        options = dataset.options.model_copy(
            update={
                "amounts": {k: v for k, v in dataset.options.amounts.items() if k not in open_},
                "timestamps": {
                    k: v for k, v in dataset.options.timestamps.items() if k not in open_
                },
            }
        )
        columns = {
            c.field: c.column
            for c in dataset.choices
            if c.column is not None and c.field not in open_
        }
        readings[role] = ProposedReading(columns=columns, options=options, asked=open_)
    return ProposedMapping(orders=readings[Role.ORDERS], payments=readings[Role.PAYMENTS])


@dataclass
class ReconcileResult:
    """What the reconcile tool produced: the figures and the stored exceptions file."""

    counts: dict[str, int]
    summary: dict[str, Any]
    top_findings: list[dict[str, Any]]
    export_digest: str
    export_rows: int


@dataclass
class InvestigationContext:
    """Everything the tools of one invocation may use, and what they leave for the workflow."""

    investigation_id: str
    files: dict[Role, DatasetRef]
    blobs: BlobStore
    policy: Policy
    workdir: Path
    case_files: CaseFiles
    answers: dict[Role, dict[str, str]] = field(default_factory=dict)
    bound: BoundContext | None = None
    outcome: Outcome | None = None
    pause: PauseSignal | None = None
    result: ReconcileResult | None = None
    details: dict[str, str] = field(default_factory=dict)
    """What a tool says about its own execution, by tool use id, for the trace."""
    on_tool_executed: Callable[[ToolExecution], None] | None = None
    on_tool_started: Callable[[str], None] | None = None
    on_rows: RowProgress | None = None
    phase: str = ""
    invocation_id: str = ""


def answered_header(context: InvestigationContext, role: Role) -> int | None:
    """The header line a person gave for `role`'s file (`orders.header_row=5`), or None: the
    sample is read from it even where the automatic detection cannot read the file."""
    value = context.answers.get(role, {}).get("header_row")
    return None if value is None else header_row_answer(value, context.files[role].name)
