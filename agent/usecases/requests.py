"""The request a person decides, made from what an agent turn concluded.

An agent turn (`AgentTurns.investigate`) inspects and validates a case's files and ends on a
pause signal; this module turns that signal into the `ApprovalRequest` (the fields, the
questions, the notes, who made it and what it binds) and records it as the case's one pending
request, superseding any other, in one unit of work. The runtime only adapts Strands.
"""

from __future__ import annotations

import logging
from datetime import datetime

from agent.casefiles import SealIdentity
from agent.data.mapping import Proposal
from agent.data.normalize import ValidationReport
from agent.data.schema import Role
from agent.data.wording import words_of
from agent.dependencies import SYSTEM_ACTOR, Dependencies, Progress
from agent.domain import (
    ApprovalRequest,
    FieldReading,
    Investigation,
    InvestigationStatus,
    PauseKind,
    PauseStatus,
    Revision,
)
from agent.errors import WorkflowError
from agent.identity import authorization_identity, mapping_digest, new_id
from agent.pause import OPEN_STATUSES, Transition
from agent.ports import UnitOfWork
from agent.runtime.context import InvestigationContext, proposed_mapping
from agent.runtime.tools import TOP_FINDINGS
from agent.runtime.turns import AgentTurns

logger = logging.getLogger(__name__)


def investigate(
    deps: Dependencies,
    turns: AgentTurns,
    investigation: Investigation,
    revision: Revision,
    prompt: str,
    answers: dict[Role, dict[str, str]],
    *,
    phase: str = "investigate",
    progress: Progress | None = None,
    edits: tuple[tuple[str, str], ...] = (),
) -> ApprovalRequest:
    """A turn that inspects and validates `revision`, and the request it ends on, recorded
    (`edits`: the edits of the reading it validates, who made them and what they changed).

    A change of the channel's policy approved while the turn ran supersedes the channel's open
    requests, but not one this turn had yet to record: such a request, made under rules no
    longer in force, is superseded here and the turn taken once more under the new rules, so
    no request waits that Approve would refuse (`POLICY_CHANGED`)."""
    for attempt in range(2):
        context = turns.investigate(investigation, revision, prompt, answers, phase, progress)
        request = record_request(deps, investigation, revision, context, answers, edits)
        if attempt or not _outdated(deps, investigation, request):
            return request
    raise AssertionError("unreachable")


def _outdated(deps: Dependencies, investigation: Investigation, request: ApprovalRequest) -> bool:
    """Whether `request` was made under rules no longer in force in its channel and is now
    superseded for that reason (False: it stands, or the change's approval superseded it and
    makes it again itself)."""
    in_force = deps.policy_for(investigation.channel)
    if request.policy_version == in_force.version:
        return False
    reason = (
        f"the policy of this channel changed to {in_force.version[:19]} while it was made; "
        "a new request follows under it"
    )
    with deps.uow() as uow:
        superseded = uow.pauses.apply(
            request.pause_id,
            Transition.SUPERSEDE,
            actor=SYSTEM_ACTOR,
            at=deps.clock.now(),
            reason=reason,
        )
    if superseded:
        deps.files.discard_sealed([request.pause_id])
        logger.info("pause=%s | made under rules no longer in force; made again", request.pause_id)
    return superseded


def record_request(
    deps: Dependencies,
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
    settings = deps.settings
    proposal = signal.proposal
    kind = signal.kind
    mapping = proposal.mapping if proposal is not None and kind is PauseKind.CONFIRMATION else None
    assert revision.input_identity is not None
    now = deps.clock.now()
    pause_id = new_id("PAUSE")
    with deps.uow() as uow:
        fields = field_readings(proposal) if proposal is not None else []
        clarifications = list(proposal.clarifications) if proposal is not None else []
        if kind is PauseKind.BLOCKED_RECONCILE:
            # Shows the reading it would approve: the one still awaiting a decision.
            pending = _pending_request(uow, investigation.id, revision.number)
            mapping, answers = (None, {}) if pending is None else (pending.mapping, pending.answers)
            if pending is not None:
                fields, clarifications, edits = (
                    pending.fields,
                    pending.clarifications,
                    pending.edits,
                )
        revisions = [
            r for r in uow.investigations.revisions(investigation.id) if r.number <= revision.number
        ]
        requesters, provenance = _makers(investigation, revisions, edits)
        digest = mapping_digest(mapping) if mapping is not None else None
        proposed = proposed_mapping(proposal) if mapping is None and proposal is not None else None
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
            warnings=words_of(signal.report.warnings) if signal.report else [],
            notes=notes(signal.report, proposal),
            routine=words_of(signal.report.routine) if signal.report else [],
            rows=dict(signal.report.rows) if signal.report else {},
            policy_version=context.policy.version,
            authorization_identity=authorization_identity(
                pause_id=pause_id,
                investigation_id=investigation.id,
                revision=revision.number,
                input_identity=revision.input_identity,
                mapping_digest=digest,
                policy_version=context.policy.version,
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
        superseded = supersede_open(
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
    deps.files.discard_sealed(superseded)
    if settings.seal_while_waiting and mapping is not None and digest is not None:
        identity = SealIdentity(pause_id, revision.input_identity, digest, request.policy_version)
        deps.files.seal(identity, dict(revision.files), mapping, TOP_FINDINGS, context.policy)
    return request


def supersede_open(
    uow: UnitOfWork, investigation_id: str, *, actor: str, at: datetime, reason: str
) -> list[str]:
    """Supersede every open request of a case, pending or failed (a newer request or revision
    replaces it: a failed one left open could still be retried beside its replacement, and a
    case reconciled twice); returns the ids superseded."""
    pending = [
        state.request.pause_id
        for state in uow.pauses.of_investigation(investigation_id)
        if state.status in OPEN_STATUSES
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
    return words_of([*inferred, *(report.facts if report else [])])
