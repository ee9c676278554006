"""One turn of the agent: run it over the saved conversation, then save what it concluded.

A turn reads the conversation, runs the Strands agent with the investigation's context (which
the tools fill: a pause signal, a reconciliation result), and appends its messages. When the
turn ends on a pause, `record_pause` writes the request a person will decide, superseding any
request still pending, in one unit of work. No unit of work is held open while the model works.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from typing import Any

from agent.data.mapping import Proposal
from agent.data.normalize import ValidationReport
from agent.data.schema import Role
from agent.dependencies import Dependencies, Progress
from agent.domain import (
    ApprovalRequest,
    DatasetRef,
    FieldReading,
    Investigation,
    InvestigationStatus,
    PauseKind,
    PauseStatus,
    Revision,
    ToolExecution,
)
from agent.errors import ReconbotError, WorkflowError
from agent.identity import authorization_identity, mapping_digest, new_id
from agent.pause import Transition
from agent.ports import UnitOfWork
from agent.runtime.context import (
    STATE_KEY,
    InvestigationContext,
    proposed_mapping,
)
from agent.runtime.factory import build_agent

logger = logging.getLogger(__name__)

PAUSED_NOTE = "Paused: waiting for a person's decision before going on."


class AgentTurns:
    """Runs the agent's turns for the use cases and records the pauses they end on."""

    def __init__(self, deps: Dependencies) -> None:
        self.deps = deps

    def prefetch(
        self,
        files: dict[Role, DatasetRef],
        progress: Progress | None = None,
        answers: dict[Role, dict[str, str]] | None = None,
    ) -> None:
        """Start reading the files while the agent inspects them (`CaseFiles.start_reading`):
        the validation that follows finds them read or being read."""
        rows = progress.rows_read if progress is not None else None
        self.deps.files.start_reading(files, rows, answers)

    def context(
        self,
        investigation_id: str,
        revision: Revision,
        phase: str,
        progress: Progress | None = None,
    ) -> InvestigationContext:
        """The context of one invocation on `revision`: its files, the policy, the trace."""
        workdir = self.deps.settings.workdir
        workdir.mkdir(parents=True, exist_ok=True)

        def executed(execution: ToolExecution) -> None:
            with self.deps.uow() as uow:
                uow.traces.add([execution])
            if progress is not None:
                progress.tool_done(execution.name)

        return InvestigationContext(
            investigation_id=investigation_id,
            files=dict(revision.files),
            blobs=self.deps.blobs,
            policy=self.deps.settings.policy,
            workdir=workdir,
            case_files=self.deps.files,
            on_rows=progress.rows_read if progress is not None else None,
            on_tool_executed=executed,
            on_tool_started=progress.tool_started if progress is not None else None,
            phase=phase,
            invocation_id=uuid.uuid4().hex,
        )

    def invoke(self, context: InvestigationContext, prompt: str) -> str:
        """Run one agent invocation over the saved conversation and append its turn.

        A failed invocation saves nothing: the conversation stays as it was before the turn,
        so trying again starts from the same place. Reconbot errors raised inside the agent
        (a busy model, a timeout) reach the caller as themselves.
        """
        with self.deps.uow() as uow:
            stored = uow.conversations.load(context.investigation_id)
        base = len(stored)  # the agent extends the list it is given, in place
        agent = build_agent(self.deps.model, alternating(list(stored)))
        try:
            result = agent(prompt, invocation_state={STATE_KEY: context})
        except Exception as error:
            cause = reconbot_cause(error)
            if cause is not None and cause is not error:
                raise cause from None
            raise
        # This turn's messages (a user task first, an assistant message last) are appended,
        # so a turn taken meanwhile by another process is kept, and turns still alternate.
        turn = alternating(list(agent.messages)[base:])  # type: ignore[arg-type]
        with self.deps.uow() as uow:
            uow.conversations.append(context.investigation_id, turn)
        return str(result).strip()

    def investigate(
        self,
        investigation: Investigation,
        revision: Revision,
        prompt: str,
        answers: dict[Role, dict[str, str]],
        phase: str = "investigate",
        progress: Progress | None = None,
        edits: tuple[tuple[str, str], ...] = (),
    ) -> ApprovalRequest:
        """A turn that inspects and validates `revision` and ends on a request (`edits`: the
        edits of the reading it validates, who made them and what they changed)."""
        self.prefetch(revision.files, progress, answers)
        context = self.context(investigation.id, revision, phase, progress)
        context.answers = answers
        self.invoke(context, prompt)
        return self.record_pause(investigation, revision, context, answers, edits)

    def record_pause(
        self,
        investigation: Investigation,
        revision: Revision,
        context: InvestigationContext,
        answers: dict[Role, dict[str, str]],
        edits: tuple[tuple[str, str], ...] = (),
    ) -> ApprovalRequest:
        """Save the request the turn ended on as the case's one pending request.

        In one unit of work: every other pending request of the case is superseded, the new
        one is saved, and the case awaits a decision. The request names everyone whose action
        produced it (each revision's uploader, each editor): four-eyes excludes them all.
        A request with no mapping to approve carries what the proposal did choose
        (`proposed`), so its question is shown with the reading it is about.
        """
        signal = context.pause
        if signal is None:
            raise WorkflowError(
                "The agent ended its turn without a request for a decision; nothing was changed."
            )
        settings = self.deps.settings
        proposal = signal.proposal
        kind = signal.kind
        mapping = (
            proposal.mapping if proposal is not None and kind is PauseKind.CONFIRMATION else None
        )
        assert revision.input_identity is not None
        now = self.deps.clock.now()
        pause_id = new_id("PAUSE")
        with self.deps.uow() as uow:
            fields = field_readings(proposal) if proposal is not None else []
            clarifications = list(proposal.clarifications) if proposal is not None else []
            if kind is PauseKind.BLOCKED_RECONCILE:
                # Shows the reading it would approve: the one still awaiting a decision.
                pending = _pending_request(uow, investigation.id, revision.number)
                mapping, answers = (
                    (None, {}) if pending is None else (pending.mapping, pending.answers)
                )
                if pending is not None:
                    fields, clarifications, edits = (
                        pending.fields,
                        pending.clarifications,
                        pending.edits,
                    )
            revisions = [
                r
                for r in uow.investigations.revisions(investigation.id)
                if r.number <= revision.number
            ]
            requesters, provenance = _makers(investigation, revisions, edits)
            digest = mapping_digest(mapping) if mapping is not None else None
            proposed = (
                proposed_mapping(proposal) if mapping is None and proposal is not None else None
            )
            request = ApprovalRequest(
                pause_id=pause_id,
                investigation_id=investigation.id,
                kind=kind,
                revision=revision.number,
                files=[revision.files[role] for role in Role],
                input_identity=revision.input_identity,
                mapping=mapping,
                mapping_digest=digest,
                fields=fields,
                clarifications=clarifications,
                problems=list(signal.problems),
                warnings=list(signal.report.warnings) if signal.report else [],
                notes=notes(signal.report, proposal),
                routine=list(signal.report.routine) if signal.report else [],
                rows=dict(signal.report.rows) if signal.report else {},
                policy_version=settings.policy.version,
                authorization_identity=authorization_identity(
                    pause_id=pause_id,
                    investigation_id=investigation.id,
                    revision=revision.number,
                    input_identity=revision.input_identity,
                    mapping_digest=digest,
                    policy_version=settings.policy.version,
                ),
                requested_by=investigation.requested_by,
                channel=investigation.channel,
                thread_ts=investigation.thread_ts,
                created_at=now,
                expires_at=now + settings.approval_ttl,
                approver_policy=settings.approver_policy,
                answers=answers,
                message=signal.message,
                team=investigation.team,
                requesters=requesters,
                edits=edits,
                provenance=provenance,
                proposed=proposed,
            )
            supersede_pending(
                uow,
                investigation.id,
                actor=investigation.requested_by,
                at=now,
                reason="a newer request",
            )
            uow.pauses.add(request)
            uow.investigations.set_status(
                investigation.id,
                InvestigationStatus.AWAITING_DECISION,
                actor=investigation.requested_by,
            )
        logger.info(
            "investigation=%s pause=%s kind=%s | pause recorded",
            investigation.id,
            pause_id,
            kind.value,
        )
        return request


def supersede_pending(
    uow: UnitOfWork, investigation_id: str, *, actor: str, at: datetime, reason: str
) -> list[str]:
    """Supersede every pending request of a case (a newer request or revision replaces it);
    returns the ids superseded."""
    pending = [
        state.request.pause_id
        for state in uow.pauses.of_investigation(investigation_id)
        if state.status is PauseStatus.PENDING
    ]
    return [
        pause_id
        for pause_id in pending
        if uow.pauses.apply(pause_id, Transition.SUPERSEDE, actor=actor, at=at, reason=reason)
    ]


def _pending_request(
    uow: UnitOfWork, investigation_id: str, revision: int
) -> ApprovalRequest | None:
    """For a blocked reconcile: the validated request of `revision` still awaiting a decision."""
    for state in reversed(uow.pauses.of_investigation(investigation_id)):
        request = state.request
        if (
            request.revision == revision
            and state.status is PauseStatus.PENDING
            and request.mapping is not None
        ):
            return request
    return None


def _makers(
    investigation: Investigation, revisions: list[Revision], edits: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Everyone whose action produced a request, and who did what, in words."""
    requesters: list[str] = []
    provenance: list[str] = []
    before: dict[Role, str] = {}
    for revision in revisions:
        who = revision.added_by or investigation.requested_by
        requesters.append(who)
        new = [ref.name for role, ref in revision.files.items() if before.get(role) != ref.digest]
        before = {role: ref.digest for role, ref in revision.files.items()}
        provenance.append(f"revision {revision.number}: {', '.join(new)} uploaded by {who}")
    for who, changes in edits:
        requesters.append(who)
        provenance.append(f"edited by {who}: {changes}")
    return tuple(dict.fromkeys(requesters)), tuple(provenance)


def alternating(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with user and assistant turns alternating, as Bedrock requires.

    A turn that ended on a pause ends with the user's tool results; the next task would be a
    second user turn in a row. A short assistant note closes the paused turn instead.
    """
    if messages and messages[-1].get("role") == "user":
        return [*messages, {"role": "assistant", "content": [{"text": PAUSED_NOTE}]}]
    return messages


def reconbot_cause(error: BaseException) -> ReconbotError | None:
    """The reconbot error behind an agent failure (Strands wraps what a model raises)."""
    seen: BaseException | None = error
    for _ in range(10):
        if seen is None:
            return None
        if isinstance(seen, ReconbotError):
            return seen
        seen = seen.__cause__ or getattr(seen, "original_exception", None)
    return None


def field_readings(proposal: Proposal) -> list[FieldReading]:
    """The proposal as rows a person reads: field, column, confidence, samples."""
    return [
        FieldReading(
            role=role,
            field=choice.field,
            required=choice.required,
            column=choice.column,
            confidence_percent=round(choice.confidence * 100),
            samples=choice.samples[:3],
            alternatives=[a.column for a in choice.alternatives],
        )
        for role in Role
        for choice in proposal.dataset(role).choices
    ]


def notes(report: ValidationReport | None, proposal: Proposal | None) -> list[str]:
    """What the reading assumed and decided, for the person deciding: the proposal's notes
    (what it inferred), then the meaning validation gave each value (statuses, kinds, signs)."""
    inferred = [n for role in Role for n in proposal.dataset(role).notes] if proposal else []
    return [*inferred, *(report.facts if report else [])]
