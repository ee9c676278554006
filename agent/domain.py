"""The value types of an investigation: what is stored, shown, approved and refused.

An investigation holds revisions of its inputs; each revision holds one file per role. A pause is
an `ApprovalRequest`: a snapshot written once, when the pause is recorded, that says exactly
what a person is asked to decide. Decisions are recorded against it, and an `Outcome` is saved
when the resumed phase finishes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.data.mapping import Clarification
from agent.data.schema import Mapping, ReadingOptions, Role
from agent.policy_change import PolicyChange


class PauseKind(StrEnum):
    """Why an investigation waits for a person."""

    CLARIFICATION = "clarification"
    CONFIRMATION = "confirmation"
    BLOCKED_RECONCILE = "blocked_reconcile"
    POLICY_CHANGE = "policy_change"
    """A proposed change to a channel's policy (no files: `ApprovalRequest.policy_change`)."""


class PauseStatus(StrEnum):
    """Where a pause is in its lifecycle (docs/design.md §4)."""

    PENDING = "pending"
    CLAIMED = "claimed"
    CONSUMED = "consumed"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    FAILED = "failed"


class InvestigationStatus(StrEnum):
    """Where an investigation stands, as people see it."""

    AWAITING_FILE = "awaiting_file"
    AWAITING_DECISION = "awaiting_decision"
    RECONCILING = "reconciling"
    COMPLETED = "completed"
    REJECTED = "rejected"
    FAILED = "failed"


class RefusalReason(StrEnum):
    """Stable codes of the guard's refusals; shown to people in words, kept in the audit log.

    `NOT_APPROVABLE`: a clarification has no complete mapping, so it can be answered (an edit)
    but not approved. `POLICY_CHANGED`: the request was made under another policy version than
    the one now in force; a new request is needed. `NOT_ISSUED`: a button or form that reconbot
    did not issue for a saved request (malformed or forged), refused before any lookup.
    `ORIGIN_MISMATCH`: a click from another workspace, channel or thread than the request's.
    """

    UNKNOWN_PAUSE = "UNKNOWN_PAUSE"
    ALREADY_CONSUMED = "ALREADY_CONSUMED"
    ALREADY_CLAIMED = "ALREADY_CLAIMED"
    REJECTED = "REJECTED"
    SUPERSEDED = "SUPERSEDED"
    EXPIRED = "EXPIRED"
    IDENTITY_MISMATCH = "IDENTITY_MISMATCH"
    NOT_AUTHORIZED = "NOT_AUTHORIZED"
    STALE_INPUT = "STALE_INPUT"
    MAPPING_MISMATCH = "MAPPING_MISMATCH"
    NOT_APPROVABLE = "NOT_APPROVABLE"
    POLICY_CHANGED = "POLICY_CHANGED"
    NOT_ISSUED = "NOT_ISSUED"
    ORIGIN_MISMATCH = "ORIGIN_MISMATCH"


class DatasetRef(BaseModel):
    """One uploaded file as the case holds it: its role, name, size and content digest."""

    model_config = ConfigDict(frozen=True)

    role: Role
    name: str
    size: int
    digest: str
    slack_file_id: str | None = None


class Revision(BaseModel):
    """The inputs of an investigation at one point: one file per role, and their identity."""

    model_config = ConfigDict(frozen=True)

    investigation_id: str
    number: int
    files: dict[Role, DatasetRef]
    input_identity: str | None
    created_at: datetime
    added_by: str | None = None
    """Who uploaded the file that made this revision (None: saved before this was kept)."""

    @property
    def complete(self) -> bool:
        """Whether both roles have a file."""
        return all(role in self.files for role in Role)


class Investigation(BaseModel):
    """A case: who asked, where, and which revision is current."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: InvestigationStatus
    requested_by: str
    channel: str | None
    thread_ts: str | None
    revision: int
    created_at: datetime
    team: str | None = None
    """The Slack workspace of the channel (None: a terminal investigation)."""


class ApproverPolicy(BaseModel):
    """Who may approve: listed users or groups (empty: anyone), and whether the requester may."""

    model_config = ConfigDict(frozen=True)

    approvers: tuple[str, ...] = ()
    self_approval: bool = True


class Approver(BaseModel):
    """The person deciding, with the groups they belong to (for group-based approver lists)."""

    model_config = ConfigDict(frozen=True)

    user: str
    groups: tuple[str, ...] = ()


class FieldReading(BaseModel):
    """One row of the proposal a person reads: field, column, confidence, sample values."""

    model_config = ConfigDict(frozen=True)

    role: Role
    field: str
    required: bool
    column: str | None
    confidence_percent: int
    samples: list[str]
    alternatives: list[str]


class ProposedReading(BaseModel):
    """One file's reading as proposed so far: the column chosen for each field, how its values
    are read, and what a question still asks (`asked`: a field whose column, or a reading
    option whose value, is open; an asked field has no column here)."""

    model_config = ConfigDict(frozen=True)

    columns: dict[str, str]
    options: ReadingOptions
    asked: tuple[str, ...] = ()


class ProposedMapping(BaseModel):
    """The reading of both files a request shows while it cannot be approved (a question is
    open, or the reading does not read the files): what inference did choose, so a person
    answers knowing it. Deliberately not a `Mapping`: nothing that digests, binds or reconciles
    takes one, and the guard binds `ApprovalRequest.mapping` alone, so it is never approved."""

    model_config = ConfigDict(frozen=True)

    orders: ProposedReading
    payments: ProposedReading

    def for_role(self, role: Role) -> ProposedReading:
        """The proposed reading of the file playing `role`."""
        return self.orders if role is Role.ORDERS else self.payments


class ApprovalRequest(BaseModel):
    """The pause snapshot: exactly what a person is asked to decide. Written once, never rewritten.

    It withholds reconciliation figures: it describes inputs and an interpretation, not results.
    """

    model_config = ConfigDict(frozen=True)

    pause_id: str
    investigation_id: str
    kind: PauseKind
    revision: int
    files: list[DatasetRef]
    input_identity: str
    mapping: Mapping | None
    mapping_digest: str | None
    fields: list[FieldReading]
    clarifications: list[Clarification]
    problems: list[str]
    warnings: list[str]
    """What may make the result wrong unless the person acts: shown first."""
    rows: dict[str, int]
    policy_version: str
    authorization_identity: str
    requested_by: str
    channel: str | None
    thread_ts: str | None
    created_at: datetime
    expires_at: datetime
    approver_policy: ApproverPolicy
    answers: dict[Role, dict[str, str]]
    message: str
    team: str | None = None
    requesters: tuple[str, ...] = ()
    """Everyone whose action produced this request: each revision's uploader and each editor
    of the reading it shows. With self-approval off, none of them may approve it."""
    edits: tuple[tuple[str, str], ...] = ()
    """The edits of the reading this request shows, in order: (who, what they changed)."""
    provenance: tuple[str, ...] = ()
    """Who made each revision and edit, in words, shown with the request."""
    notes: list[str] = []
    """What the reading assumed and the meaning it gives each value (statuses, kinds, signs),
    shown after the warnings: every one is bound to the approval through the mapping."""
    routine: list[str] = []
    """Counts that need no decision (rows read, ids, references that meet): one line."""
    proposed: ProposedMapping | None = None
    """The reading chosen so far, shown beside the question when there is no `mapping` to
    approve (None: a confirmation, or nothing could be proposed). Never approved: it is in
    no digest or identity, and `approvable` looks at `mapping` only."""
    policy_change: PolicyChange | None = None
    """What a policy-change request asks to put in force (its kind only)."""

    @property
    def approvable(self) -> bool:
        """Whether Approve applies: a complete, valid mapping (or, for a policy change, its
        proposed rules) is on the table."""
        if self.kind is PauseKind.POLICY_CHANGE:
            return self.policy_change is not None
        return self.kind is not PauseKind.CLARIFICATION and self.mapping is not None


class PauseState(BaseModel):
    """A saved pause and where it stands now."""

    model_config = ConfigDict(frozen=True)

    request: ApprovalRequest
    status: PauseStatus
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None
    message_ts: str | None = None


class Decision(BaseModel):
    """A person's decision on a pause, accepted or refused."""

    model_config = ConfigDict(frozen=True)

    pause_id: str
    investigation_id: str
    action: str
    actor: str
    reason: str | None
    accepted: bool
    refusal: RefusalReason | None
    at: datetime


class Outcome(BaseModel):
    """The result of a resumed phase: counts per category, the summary, the agent's report."""

    model_config = ConfigDict(frozen=True)

    investigation_id: str
    pause_id: str
    revision: int
    mapping_digest: str
    input_identity: str
    counts: dict[str, int]
    summary: dict[str, Any]
    top_findings: list[dict[str, Any]]
    report: str
    export_digest: str | None
    export_rows: int
    created_at: datetime

    @property
    def exceptions_file_name(self) -> str:
        """The name people see on the exceptions file, wherever it is shown or kept (the
        thread's upload, the terminal's copy, the agent's answers)."""
        return f"exceptions-{self.investigation_id}-r{self.revision}.csv"


class ToolExecution(BaseModel):
    """One tool execution of one agent invocation (the trace)."""

    model_config = ConfigDict(frozen=True)

    investigation_id: str
    invocation_id: str
    phase: str
    tool_use_id: str
    name: str
    status: str
    duration_ms: int
    detail: str | None = None
    """What the execution said about itself, when it has more to say than its status (a
    reconcile that published a result sealed while its request waited: when it was sealed)."""


class ToolCount(BaseModel):
    """How many times one tool ran in one invocation of the agent."""

    model_config = ConfigDict(frozen=True)

    name: str
    count: int


class PhaseRun(BaseModel):
    """One invocation of the agent as the trace recorded it: its phase (`investigate`, `revise`
    after an edit, `resume` after an approval, `answer` to a question), and each tool it ran
    with how many times, in order of first appearance. A phase run again (a new revision, a
    retried approval, another question) is another `PhaseRun`, never added to an earlier one."""

    model_config = ConfigDict(frozen=True)

    phase: str
    invocation_id: str
    tools: list[ToolCount]
    executions: int


class BoundApproval(BaseModel):
    """The approval the outcome's reconciliation ran under: which request, who approved it and
    when, and what it covered (inputs, mapping, policy, authorization identity)."""

    model_config = ConfigDict(frozen=True)

    pause_id: str
    approved_by: str | None
    approved_at: datetime | None
    input_identity: str
    mapping_digest: str
    policy_version: str
    authorization_identity: str


def phase_runs(trace: Sequence[ToolExecution]) -> list[PhaseRun]:
    """The trace summed up per invocation, in order: what each phase ran and how often.

    Grouped by invocation id, not by phase name: a phase run twice is two runs, so a count
    above one means the tool ran that often in that one invocation (replayed tool results
    from the saved conversation are never executions, `agent.runtime.hooks`)."""
    runs: dict[str, tuple[str, dict[str, int]]] = {}
    for execution in trace:
        _, tools = runs.setdefault(execution.invocation_id, (execution.phase, {}))
        tools[execution.name] = tools.get(execution.name, 0) + 1
    return [
        PhaseRun(
            phase=phase,
            invocation_id=invocation_id,
            tools=[ToolCount(name=name, count=count) for name, count in tools.items()],
            executions=sum(tools.values()),
        )
        for invocation_id, (phase, tools) in runs.items()
    ]


class InvestigationStatusReport(BaseModel):
    """Everything saved about an investigation, as `status` shows it.

    `trace`: every tool execution of the agent, in order; `trace_phases`: the same summed up
    per invocation (`phase_runs`); `bound_approval`: the approval the outcome ran under."""

    model_config = ConfigDict(frozen=True)

    investigation: Investigation
    revisions: list[Revision]
    pauses: list[PauseState]
    decisions: list[Decision]
    outcome: Outcome | None
    trace: list[ToolExecution] = Field(default_factory=list)
    trace_phases: list[PhaseRun] = Field(default_factory=list)
    bound_approval: BoundApproval | None = None
