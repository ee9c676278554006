"""The use cases of an investigation: start, add a file, confirm, reject, edit, expire, status, ask.

This is the service layer between the outside (the CLI, the Slack bot) and the core. It holds
no state of its own: everything lives behind the repository and the blob store, so any process
can pick up any investigation. Whether a decision resumes an investigation is decided by the
guard (`approval.check_confirmation`) and one conditional claim; nothing else.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from strands.models import Model

from agent.approval import (
    check_confirmation,
    check_policy,
    may_approve,
    refusal_for_status,
    who_may_approve,
)
from agent.data.ingest import inspect_csv
from agent.data.mapping import Proposal, assign_roles, role_of
from agent.data.normalize import ValidationReport
from agent.data.policy import Policy
from agent.data.schema import READING_OPTIONS, SCHEMA, Mapping, Role
from agent.domain import (
    ApprovalRequest,
    Approver,
    ApproverPolicy,
    DatasetRef,
    Decision,
    FieldReading,
    Investigation,
    InvestigationStatus,
    InvestigationStatusReport,
    Outcome,
    PauseKind,
    PauseState,
    PauseStatus,
    RefusalReason,
    Revision,
    ToolExecution,
)
from agent.errors import (
    ApprovalRefusedError,
    FileTooLargeError,
    ReconbotError,
    UnknownInvestigationError,
    WorkflowError,
)
from agent.identity import authorization_identity, input_identity, mapping_digest
from agent.ports import BlobStore, Claim, Clock, Repository, StoredBlob
from agent.runtime.context import STATE_KEY, BoundContext, InvestigationContext
from agent.runtime.factory import build_agent
from agent.runtime.prompts import (
    investigate_prompt,
    question_prompt,
    resume_prompt,
    revise_prompt,
)

logger = logging.getLogger(__name__)

SYSTEM_ACTOR = "reconbot"
MAX_RECOVERY_ATTEMPTS = 2
STALL_SCAN = 200

Progress = Callable[[str], None]
"""Told the name of each tool as the agent finishes it, so a caller can show progress."""


@dataclass(frozen=True)
class WorkflowSettings:
    """The settings the use cases need (read once by the caller, passed in)."""

    approval_ttl: timedelta = timedelta(hours=24)
    approver_policy: ApproverPolicy = field(default_factory=ApproverPolicy)
    max_upload_bytes: int = 200 << 20
    workdir: Path = Path("var/work")
    claim_lease: timedelta = timedelta(minutes=15)
    policy: Policy = field(default_factory=Policy)


@dataclass
class Upload:
    """A file handed to the investigation: its bytes, its name, and where it came from."""

    stream: BinaryIO
    name: str
    slack_file_id: str | None = None


@dataclass(frozen=True)
class Started:
    """A new investigation and, once it has both files, its first request."""

    investigation: Investigation
    request: ApprovalRequest | None
    missing: Role | None


@dataclass(frozen=True)
class FileAdded:
    """The result of adding a file: unchanged (byte-identical), or a new revision and request."""

    investigation: Investigation
    unchanged: bool
    role: Role
    revision: int
    superseded: list[str]
    request: ApprovalRequest | None


@dataclass(frozen=True)
class Answer:
    """The agent's answer to a question, and a request if answering needed one."""

    text: str
    request: ApprovalRequest | None


def new_id(prefix: str) -> str:
    """A short random id people can type: `INV-3F9A2C1B7E`."""
    return f"{prefix}-{secrets.token_hex(5).upper()}"


class InvestigationService:
    """The investigation use cases over a repository, a blob store, a clock and a model."""

    def __init__(
        self,
        repository: Repository,
        blobs: BlobStore,
        model: Model,
        clock: Clock,
        settings: WorkflowSettings,
    ) -> None:
        self.repo = repository
        self.blobs = blobs
        self.model = model
        self.clock = clock
        self.settings = settings
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    # -- starting and adding files ------------------------------------------------------------

    def _put(self, upload: Upload) -> StoredBlob:
        limit = self.settings.max_upload_bytes
        try:
            return self.blobs.put(upload.stream, max_bytes=limit)
        except FileTooLargeError:
            raise FileTooLargeError(
                f"the file is over the upload limit of {limit / (1 << 20):g} MB",
                file_name=upload.name,
            ) from None

    def _refs(self, uploads: list[Upload]) -> dict[Role, DatasetRef]:
        stored = [(u, self._put(u)) for u in uploads]
        samples = []
        for upload, blob in stored:
            with self.blobs.local_copy(blob.digest) as path:
                samples.append(
                    inspect_csv(path, upload.name, max_bytes=self.settings.max_upload_bytes)
                )
        roles: tuple[Role, ...]
        if len(stored) == 1:
            roles = (role_of(samples[0]),)
        elif len(stored) == 2:
            roles = assign_roles(samples[0], samples[1])
        else:
            raise WorkflowError("An investigation takes one orders file and one payments file.")
        return {
            role: DatasetRef(
                role=role,
                name=upload.name,
                size=blob.size,
                digest=blob.digest,
                slack_file_id=upload.slack_file_id,
            )
            for role, (upload, blob) in zip(roles, stored, strict=True)
        }

    def start(
        self,
        uploads: list[Upload],
        *,
        requested_by: str,
        channel: str | None = None,
        thread_ts: str | None = None,
        progress: Progress | None = None,
    ) -> Started:
        """Open an investigation on one or two files; with both, investigate and pause.

        Raises the typed input errors for a file that is not a readable CSV export.
        """
        files = self._refs(uploads)
        now = self.clock.now()
        investigation = Investigation(
            id=new_id("INV"),
            status=InvestigationStatus.AWAITING_FILE,
            requested_by=requested_by,
            channel=channel,
            thread_ts=thread_ts,
            revision=1,
            created_at=now,
        )
        revision = self._revision(investigation.id, 1, files)
        self.repo.create_investigation(investigation, revision)
        if not revision.complete:
            missing = next(role for role in Role if role not in files)
            return Started(investigation, None, missing)
        request = self._investigate(
            investigation, revision, investigate_prompt(1, files), {}, progress=progress
        )
        return Started(self._investigation(investigation.id), request, None)

    def _revision(
        self, investigation_id: str, number: int, files: dict[Role, DatasetRef]
    ) -> Revision:
        identity = None
        if all(role in files for role in Role):
            identity = input_identity({role: files[role].digest for role in Role})
        return Revision(
            investigation_id=investigation_id,
            number=number,
            files=files,
            input_identity=identity,
            created_at=self.clock.now(),
        )

    def add_file(
        self,
        investigation_id: str,
        upload: Upload,
        *,
        actor: str,
        progress: Progress | None = None,
    ) -> FileAdded:
        """Add or replace one file; a changed input makes a new revision and a new request.

        A byte-identical re-upload changes nothing and the pending request stands.
        """
        investigation = self._investigation(investigation_id)
        current = self.repo.revisions(investigation_id)[-1]
        ((role, ref),) = self._refs([upload]).items()
        if role in current.files and current.files[role].digest == ref.digest:
            return FileAdded(investigation, True, role, current.number, [], None)
        files = {**current.files, role: ref}
        revision = self._revision(investigation_id, current.number + 1, files)
        superseded = self.repo.add_revision(
            revision, actor=actor, reason=f"superseded by revision {revision.number}"
        )
        request = None
        if revision.complete:
            request = self._investigate(
                investigation,
                revision,
                investigate_prompt(revision.number, files),
                {},
                progress=progress,
            )
        return FileAdded(
            self._investigation(investigation_id),
            False,
            role,
            revision.number,
            superseded,
            request,
        )

    def find_stalled(self) -> list[Investigation]:
        """Investigations whose inspection stopped without a request: the process died in
        the middle of the agent's turn. The files are stored; each such case is marked failed
        (so it is reported once) and returned, for someone to investigate it again."""
        cutoff = self.clock.now() - self.settings.claim_lease
        waiting = (InvestigationStatus.AWAITING_FILE, InvestigationStatus.AWAITING_DECISION)
        stalled = []
        for investigation in self.repo.list_investigations(limit=STALL_SCAN):
            if investigation.status not in waiting:
                continue
            revision = self.repo.revisions(investigation.id)[-1]
            if not revision.complete or revision.created_at > cutoff:
                continue
            if any(
                p.request.revision == revision.number for p in self.repo.pauses(investigation.id)
            ):
                continue
            if not self.repo.set_investigation_status(
                investigation.id, InvestigationStatus.FAILED, actor=SYSTEM_ACTOR, only_from=waiting
            ):
                continue  # another process reported it first
            logger.warning(
                "investigation=%s revision=%s | inspection never finished; marked failed",
                investigation.id,
                revision.number,
            )
            stalled.append(investigation)
        return stalled

    def investigate_again(
        self, investigation_id: str, *, actor: str, progress: Progress | None = None
    ) -> ApprovalRequest:
        """Run the inspection of the current revision again, after a failed attempt (the
        model was busy or timed out), or for a new request after the policy changed. Refused
        when a request for it made under the policy now in force is already pending."""
        investigation = self._investigation(investigation_id)
        revision = self.repo.revisions(investigation_id)[-1]
        if not revision.complete:
            raise WorkflowError("This investigation still needs its other file.")
        pending = self.pending_request(investigation_id)
        if (
            pending is not None
            and pending.revision == revision.number
            and pending.policy_version == self.settings.policy.version
        ):
            raise WorkflowError(
                f"Revision {revision.number} already has a request waiting for a decision "
                f"({pending.pause_id})."
            )
        logger.info("investigation=%s actor=%s | investigating again", investigation_id, actor)
        return self._investigate(
            investigation,
            revision,
            investigate_prompt(revision.number, revision.files),
            {},
            progress=progress,
        )

    # -- agent phases ----------------------------------------------------------------------

    def _context(
        self,
        investigation_id: str,
        revision: Revision,
        phase: str,
        progress: Progress | None = None,
    ) -> InvestigationContext:
        workdir = self.settings.workdir
        workdir.mkdir(parents=True, exist_ok=True)

        def executed(execution: ToolExecution) -> None:
            self.repo.record_tool_executions([execution])
            if progress is not None:
                progress(execution.name)

        return InvestigationContext(
            investigation_id=investigation_id,
            files=dict(revision.files),
            blobs=self.blobs,
            policy=self.settings.policy,
            max_upload_bytes=self.settings.max_upload_bytes,
            workdir=workdir,
            on_tool_executed=executed,
            phase=phase,
            invocation_id=uuid.uuid4().hex,
        )

    def _invoke(self, context: InvestigationContext, prompt: str) -> str:
        """Run one agent invocation over the saved conversation and append its turn.

        A failed invocation saves nothing: the conversation stays as it was before the turn,
        so trying again starts from the same place. Reconbot errors raised inside the agent
        (a busy model, a timeout) reach the caller as themselves.
        """
        stored = self.repo.load_conversation(context.investigation_id)
        base = len(stored)  # the agent extends the list it is given, in place
        agent = build_agent(self.model, alternating(list(stored)))
        try:
            result = agent(prompt, invocation_state={STATE_KEY: context})
        except Exception as error:
            cause = _reconbot_cause(error)
            if cause is not None and cause is not error:
                raise cause from None
            raise
        # This turn's messages (a user task first, an assistant message last) are appended,
        # so a turn taken meanwhile by another process is kept, and turns still alternate.
        turn = alternating(list(agent.messages)[base:])  # type: ignore[arg-type]
        self.repo.append_conversation(context.investigation_id, turn)
        return str(result).strip()

    def _investigate(
        self,
        investigation: Investigation,
        revision: Revision,
        prompt: str,
        answers: dict[Role, dict[str, str]],
        phase: str = "investigate",
        progress: Progress | None = None,
    ) -> ApprovalRequest:
        context = self._context(investigation.id, revision, phase, progress)
        context.answers = answers
        self._invoke(context, prompt)
        return self._record_pause(investigation, revision, context, answers)

    def _record_pause(
        self,
        investigation: Investigation,
        revision: Revision,
        context: InvestigationContext,
        answers: dict[Role, dict[str, str]],
    ) -> ApprovalRequest:
        signal = context.pause
        if signal is None:
            raise WorkflowError(
                "The agent ended its turn without a request for a decision; nothing was changed."
            )
        proposal = signal.proposal
        kind = signal.kind
        mapping = (
            proposal.mapping if proposal is not None and kind is PauseKind.CONFIRMATION else None
        )
        if kind is PauseKind.BLOCKED_RECONCILE:
            mapping, answers = self._pending_mapping(investigation.id, revision.number)
        assert revision.input_identity is not None
        now = self.clock.now()
        pause_id = new_id("PAUSE")
        digest = mapping_digest(mapping) if mapping is not None else None
        request = ApprovalRequest(
            pause_id=pause_id,
            investigation_id=investigation.id,
            kind=kind,
            revision=revision.number,
            files=[revision.files[role] for role in Role],
            input_identity=revision.input_identity,
            mapping=mapping,
            mapping_digest=digest,
            fields=_field_readings(proposal) if proposal is not None else [],
            clarifications=list(proposal.clarifications) if proposal is not None else [],
            problems=list(signal.problems),
            warnings=_warnings(signal.report, proposal),
            rows=dict(signal.report.rows) if signal.report else {},
            policy_version=self.settings.policy.version,
            authorization_identity=authorization_identity(
                pause_id=pause_id,
                investigation_id=investigation.id,
                revision=revision.number,
                input_identity=revision.input_identity,
                mapping_digest=digest,
                policy_version=self.settings.policy.version,
            ),
            requested_by=investigation.requested_by,
            channel=investigation.channel,
            thread_ts=investigation.thread_ts,
            created_at=now,
            expires_at=now + self.settings.approval_ttl,
            approver_policy=self.settings.approver_policy,
            answers=answers,
            message=signal.message,
        )
        self.repo.record_pause(request)
        logger.info(
            "investigation=%s pause=%s kind=%s | pause recorded",
            investigation.id,
            pause_id,
            kind.value,
        )
        return request

    def _pending_mapping(
        self, investigation_id: str, revision: int
    ) -> tuple[Mapping | None, dict[Role, dict[str, str]]]:
        """For a blocked reconcile: the validated mapping still awaiting a decision, if any."""
        for state in reversed(self.repo.pauses(investigation_id)):
            request = state.request
            if (
                request.revision == revision
                and state.status is PauseStatus.PENDING
                and request.mapping is not None
            ):
                return request.mapping, request.answers
        return None, {}

    # -- decisions -----------------------------------------------------------------------------

    def _refuse(
        self,
        state: PauseState | None,
        pause_id: str,
        action: str,
        actor: str,
        error: ApprovalRefusedError,
    ) -> ApprovalRefusedError:
        self.repo.record_decision(
            Decision(
                pause_id=pause_id,
                investigation_id=state.request.investigation_id if state else "",
                action=action,
                actor=actor,
                reason=None,
                accepted=False,
                refusal=RefusalReason(error.reason),
                at=self.clock.now(),
            )
        )
        logger.info(
            "pause=%s action=%s reason=%s | decision refused", pause_id, action, error.reason
        )
        return error

    def _lost_race(
        self, state: PauseState, action: str, actor: str, words: str
    ) -> ApprovalRefusedError:
        """The refusal for a caller whose conditional update found the pause already moved."""
        pause_id = state.request.pause_id
        latest = self.repo.get_pause(pause_id)
        lost = (refusal_for_status(latest) if latest else None) or ApprovalRefusedError(
            RefusalReason.ALREADY_CLAIMED, words
        )
        return self._refuse(state, pause_id, action, actor, lost)

    def _accept(
        self, request: ApprovalRequest, action: str, actor: str, reason: str | None
    ) -> None:
        """Record an accepted decision on `request`."""
        self.repo.record_decision(
            Decision(
                pause_id=request.pause_id,
                investigation_id=request.investigation_id,
                action=action,
                actor=actor,
                reason=reason,
                accepted=True,
                refusal=None,
                at=self.clock.now(),
            )
        )

    def _load(self, pause_id: str, action: str, actor: str) -> PauseState:
        state = self.repo.get_pause(pause_id)
        if state is None:
            raise self._refuse(
                None,
                pause_id,
                action,
                actor,
                _unknown(pause_id),
            )
        return state

    def decidable(self, pause_id: str) -> PauseState:
        """The pause, if a person may still decide it (before showing a decision form).

        Raises ApprovalRefusedError otherwise. Records nothing: the decision itself goes
        through the guard again when it is submitted.
        """
        state = self.repo.get_pause(pause_id)
        if state is None:
            raise _unknown(pause_id)
        _still_pending(state)
        return state

    def confirm(
        self,
        pause_id: str,
        authorization: str,
        approver: Approver,
        *,
        on_claimed: Callable[[PauseState], None] | None = None,
    ) -> Outcome:
        """Approve a pause: guard, claim, bind, resume, save the outcome and consume the pause.

        Raises ApprovalRefusedError (with its reason code) when the approval does not apply;
        exactly one of any number of concurrent callers gets past the claim. `on_claimed` is
        told the claimed pause before the (long) resumed phase starts, so the winner can be
        shown at once.
        """
        state = self._load(pause_id, "approve", approver.user)
        request = state.request
        current = self._investigation(request.investigation_id)
        revision = self.repo.revisions(request.investigation_id)[-1]
        try:
            check_confirmation(
                state,
                submitted_identity=authorization,
                approver=approver,
                current_input_identity=revision.input_identity,
                current_policy_version=self.settings.policy.version,
                now=self.clock.now(),
            )
        except ApprovalRefusedError as error:
            if error.reason == RefusalReason.EXPIRED:
                self.repo.transition_pause(
                    pause_id,
                    from_statuses=(PauseStatus.PENDING,),
                    to=PauseStatus.EXPIRED,
                    actor=SYSTEM_ACTOR,
                )
            raise self._refuse(state, pause_id, "approve", approver.user, error) from None
        claim = Claim(self.owner, self.clock.now() + self.settings.claim_lease)
        if not self.repo.transition_pause(
            pause_id,
            from_statuses=(PauseStatus.PENDING, PauseStatus.FAILED),
            to=PauseStatus.CLAIMED,
            actor=approver.user,
            claim=claim,
        ):
            raise self._lost_race(
                state, "approve", approver.user, "Another approval of this request is running."
            )
        self._accept(request, "approve", approver.user, None)
        if on_claimed is not None:
            claimed = self.repo.get_pause(pause_id)
            on_claimed(claimed or state)
        return self._resume(current, revision, state, approver.user)

    def _resume(
        self, investigation: Investigation, revision: Revision, state: PauseState, actor: str
    ) -> Outcome:
        request = state.request
        assert request.mapping is not None
        assert request.mapping_digest is not None
        self.repo.set_investigation_status(
            investigation.id, InvestigationStatus.RECONCILING, actor=actor
        )
        context = self._context(investigation.id, revision, "resume")
        context.bound = BoundContext(
            pause_id=request.pause_id,
            mapping=request.mapping,
            mapping_digest=request.mapping_digest,
            input_identity=request.input_identity,
            files={ref.role: ref for ref in request.files},
            policy_version=request.policy_version,
        )
        try:
            report = self._invoke(
                context, resume_prompt(actor, request.mapping_digest, request.revision)
            )
            result = context.result
            if result is None:
                raise WorkflowError("The reconciliation did not run: " + (report or "no report."))
        except Exception:
            logger.exception(
                "investigation=%s pause=%s | resumed phase failed",
                investigation.id,
                request.pause_id,
            )
            self._fail(investigation.id, request.pause_id)
            raise
        outcome = Outcome(
            investigation_id=investigation.id,
            pause_id=request.pause_id,
            revision=request.revision,
            mapping_digest=request.mapping_digest,
            input_identity=request.input_identity,
            counts=result.counts,
            summary=result.summary,
            top_findings=result.top_findings,
            report=report,
            export_digest=result.export_digest,
            export_rows=result.export_rows,
            created_at=self.clock.now(),
        )
        if not self.repo.complete(outcome, owner=self.owner):
            raise ApprovalRefusedError(
                RefusalReason.ALREADY_CONSUMED,
                "Another process completed this request first; its outcome stands.",
            )
        return outcome

    def _fail(
        self,
        investigation_id: str,
        pause_id: str,
        reason: str = "the resumed phase failed; approve again to retry",
    ) -> None:
        if self.repo.transition_pause(
            pause_id,
            from_statuses=(PauseStatus.CLAIMED,),
            to=PauseStatus.FAILED,
            actor=SYSTEM_ACTOR,
            reason=reason,
        ):
            self.repo.set_investigation_status(
                investigation_id, InvestigationStatus.FAILED, actor=SYSTEM_ACTOR
            )

    def _guard_decider(
        self, pause_id: str, authorization: str, actor: Approver, action: str
    ) -> PauseState:
        state = self._load(pause_id, action, actor.user)
        try:
            _still_pending(state)
            if authorization != state.request.authorization_identity:
                raise ApprovalRefusedError(
                    RefusalReason.IDENTITY_MISMATCH,
                    "This decision was issued for something else than the saved request.",
                )
            policy = state.request.approver_policy
            if not may_approve(policy, actor, state.request.requested_by):
                raise ApprovalRefusedError(
                    RefusalReason.NOT_AUTHORIZED,
                    f"{actor.user} may not decide this request. Who may: "
                    f"{who_may_approve(policy, state.request.requested_by)}.",
                )
        except ApprovalRefusedError as error:
            raise self._refuse(state, pause_id, action, actor.user, error) from None
        return state

    def reject(self, pause_id: str, authorization: str, actor: Approver, reason: str) -> PauseState:
        """Reject a pending request with a reason; later approvals of it are refused."""
        if not reason.strip():
            raise WorkflowError("A rejection needs a reason.")
        state = self._guard_decider(pause_id, authorization, actor, "reject")
        if not self.repo.transition_pause(
            pause_id,
            from_statuses=(PauseStatus.PENDING,),
            to=PauseStatus.REJECTED,
            actor=actor.user,
            reason=reason.strip(),
        ):
            raise self._lost_race(state, "reject", actor.user, "This request is no longer pending.")
        self._accept(state.request, "reject", actor.user, reason.strip())
        self.repo.set_investigation_status(
            state.request.investigation_id, InvestigationStatus.REJECTED, actor=actor.user
        )
        latest = self.repo.get_pause(pause_id)
        assert latest is not None
        return latest

    def edit(
        self,
        pause_id: str,
        authorization: str,
        actor: Approver,
        answers: dict[Role, dict[str, str]],
        progress: Progress | None = None,
    ) -> ApprovalRequest:
        """Change which column feeds some fields: a new proposal, validated, with its own pause."""
        state = self._guard_decider(pause_id, authorization, actor, "edit")
        request = state.request
        for role, fields in answers.items():
            known = {spec.name for spec in SCHEMA[role]} | set(READING_OPTIONS)
            unknown = sorted(set(fields) - known)
            if unknown:
                raise WorkflowError(
                    f"{role.value} has no field {', '.join(unknown)}; "
                    f"its fields are {', '.join(sorted(known))}."
                )
        merged = {role: dict(fields) for role, fields in request.answers.items()}
        for role, fields in answers.items():
            merged.setdefault(role, {}).update(fields)
        changes = "; ".join(
            f"{role.value}.{name}={column}"
            for role, fields in answers.items()
            for name, column in fields.items()
        )
        self._accept(request, "edit", actor.user, changes)
        investigation = self._investigation(request.investigation_id)
        revision = self.repo.revisions(request.investigation_id)[-1]
        return self._investigate(
            investigation,
            revision,
            revise_prompt(revision.number, answers, actor.user),
            merged,
            phase="revise",
            progress=progress,
        )

    # -- time, status, questions, recovery ------------------------------------------------

    def expire_due(self) -> list[str]:
        """Expire every pending request whose time is up; returns the expired pause ids."""
        expired = []
        for pause_id in self.repo.due_pauses(self.clock.now()):
            if self.repo.transition_pause(
                pause_id,
                from_statuses=(PauseStatus.PENDING,),
                to=PauseStatus.EXPIRED,
                actor=SYSTEM_ACTOR,
                reason="no decision before the request expired",
            ):
                expired.append(pause_id)
        return expired

    def status(self, investigation_id: str) -> InvestigationStatusReport:
        """Everything saved about an investigation: snapshots as written, decisions, outcome."""
        return InvestigationStatusReport(
            investigation=self._investigation(investigation_id),
            revisions=self.repo.revisions(investigation_id),
            pauses=self.repo.pauses(investigation_id),
            decisions=self.repo.decisions(investigation_id),
            outcome=self.repo.get_outcome(investigation_id),
        )

    def pending_request(self, investigation_id: str) -> ApprovalRequest | None:
        """The request awaiting a decision, if any."""
        for state in reversed(self.repo.pauses(investigation_id)):
            if state.status is PauseStatus.PENDING:
                return state.request
        return None

    def ask(self, investigation_id: str, question: str, *, actor: str) -> Answer:
        """Answer a question about an investigation with the evidence and policy tools."""
        investigation = self._investigation(investigation_id)
        revisions = self.repo.revisions(investigation_id)
        revision = revisions[-1]
        context = self._context(investigation_id, revision, "answer")
        context.outcome = self.repo.get_outcome(investigation_id)
        if context.outcome is not None:
            done = next(r for r in revisions if r.number == context.outcome.revision)
            context.files = dict(done.files)
        text = self._invoke(context, question_prompt(actor, question))
        request = None
        if context.pause is not None and revision.complete:
            request = self._record_pause(investigation, revision, context, {})
        return Answer(text, request)

    def pause(self, pause_id: str) -> PauseState | None:
        """A saved pause and where it stands, or None."""
        return self.repo.get_pause(pause_id)

    def remember_message(self, pause_id: str, message_ts: str) -> None:
        """Remember which chat message shows a pause, so later states can edit it."""
        self.repo.set_message_ts(pause_id, message_ts)

    def find_by_thread(self, channel: str, thread_ts: str) -> Investigation | None:
        """The investigation a chat thread belongs to, if any."""
        return self.repo.find_investigation(channel, thread_ts)

    def recent(self, *, channel: str | None = None, limit: int = 10) -> list[Investigation]:
        """The newest investigations, optionally of one channel."""
        return self.repo.list_investigations(channel=channel, limit=limit)

    def first_delivery(self, delivery_id: str, work: dict[str, Any] | None = None) -> bool:
        """Record a delivery (a chat event id); False if it was seen before (a retry).

        With `work` (the event of an upload), the delivery is resumable: if this process dies
        before `delivery_done`, `deliveries_to_resume` hands it out again after the lease.
        """
        hold = self.clock.now() + self.settings.claim_lease if work is not None else None
        return self.repo.mark_event_processed(delivery_id, work, hold)

    def delivery_done(self, delivery_id: str) -> None:
        """The work of a resumable delivery is done (or its problem was reported)."""
        self.repo.finish_event(delivery_id)

    def deliveries_to_resume(self) -> list[tuple[str, dict[str, Any]]]:
        """Resumable deliveries whose process died before finishing them, each taken once."""
        now = self.clock.now()
        return self.repo.take_unfinished_events(now, now + self.settings.claim_lease)

    @contextmanager
    def exceptions_file(self, outcome: Outcome) -> Iterator[Path | None]:
        """A local path to the outcome's exceptions CSV while the block runs (None if none)."""
        if outcome.export_digest is None:
            yield None
            return
        with self.blobs.local_copy(outcome.export_digest) as path:
            yield path

    def columns(self, request: ApprovalRequest) -> dict[Role, list[str]]:
        """The header of each file of a request, for a person choosing a column."""
        found: dict[Role, list[str]] = {}
        for ref in request.files:
            with self.blobs.local_copy(ref.digest) as path:
                sample = inspect_csv(path, ref.name, max_bytes=self.settings.max_upload_bytes)
            found[ref.role] = list(sample.layout.columns)
        return found

    def recover(self) -> list[str]:
        """At start-up: finish or fail every claim whose process died (DESIGN §4).

        A claim is taken over when its lease ran out, or when its owner was a process of this
        host that no longer runs. The recorded approval is re-run once under the same pause; a
        claim that was already retried is marked failed, with a retry offered. A claim whose
        request was made under another policy version than the one now in force is not re-run:
        it is marked failed with `POLICY_CHANGED` (recorded as a refused decision), and a new
        request is needed.
        """
        recovered = []
        now = self.clock.now()
        for pause_id, claim, attempts in self.repo.stale_claims(now):
            if not (claim.lease_until <= now or _dead_local_owner(claim.owner)):
                continue
            new_claim = Claim(self.owner, now + self.settings.claim_lease)
            if not self.repo.take_over_claim(pause_id, old_owner=claim.owner, claim=new_claim):
                continue
            state = self.repo.get_pause(pause_id)
            assert state is not None
            investigation_id = state.request.investigation_id
            try:
                check_policy(state.request, self.settings.policy.version)
            except ApprovalRefusedError as error:
                logger.warning("pause=%s | not re-run: %s", pause_id, error)
                self._refuse(state, pause_id, "resume", SYSTEM_ACTOR, error)
                self._fail(investigation_id, pause_id, reason=str(error))
                recovered.append(pause_id)
                continue
            if attempts >= MAX_RECOVERY_ATTEMPTS:
                self._fail(investigation_id, pause_id)
                recovered.append(pause_id)
                continue
            logger.info(
                "pause=%s attempts=%s | re-running an interrupted approval", pause_id, attempts
            )
            revision = self.repo.revisions(investigation_id)[-1]
            try:
                self._resume(
                    self._investigation(investigation_id),
                    revision,
                    state,
                    state.decided_by or SYSTEM_ACTOR,
                )
            except Exception:
                logger.exception("pause=%s | recovery failed; marked failed", pause_id)
            recovered.append(pause_id)
        return recovered

    def _investigation(self, investigation_id: str) -> Investigation:
        investigation = self.repo.get_investigation(investigation_id)
        if investigation is None:
            raise UnknownInvestigationError(f"There is no investigation {investigation_id}.")
        return investigation


def _unknown(pause_id: str) -> ApprovalRefusedError:
    return ApprovalRefusedError(RefusalReason.UNKNOWN_PAUSE, f"There is no request {pause_id}.")


def _still_pending(state: PauseState) -> None:
    """Raise the refusal a pause's status calls for, unless it is pending."""
    refusal = refusal_for_status(state)
    if refusal is not None:
        raise refusal
    if state.status is not PauseStatus.PENDING:
        raise ApprovalRefusedError(
            RefusalReason.ALREADY_CLAIMED, "This request is no longer pending."
        )


PAUSED_NOTE = "Paused: waiting for a person's decision before going on."


def alternating(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with user and assistant turns alternating, as Bedrock requires.

    A turn that ended on a pause ends with the user's tool results; the next task would be a
    second user turn in a row. A short assistant note closes the paused turn instead.
    """
    if messages and messages[-1].get("role") == "user":
        return [*messages, {"role": "assistant", "content": [{"text": PAUSED_NOTE}]}]
    return messages


def _reconbot_cause(error: BaseException) -> ReconbotError | None:
    """The reconbot error behind an agent failure (Strands wraps what a model raises)."""
    seen: BaseException | None = error
    for _ in range(10):
        if seen is None:
            return None
        if isinstance(seen, ReconbotError):
            return seen
        seen = seen.__cause__ or getattr(seen, "original_exception", None)
    return None


def _dead_local_owner(owner: str) -> bool:
    """Whether a claim's owner was a process on this host that is gone."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _field_readings(proposal: Proposal) -> list[FieldReading]:
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


def _warnings(report: ValidationReport | None, proposal: Proposal | None) -> list[str]:
    notes = [n for role in Role for n in proposal.dataset(role).notes] if proposal else []
    return [*notes, *(report.facts if report else []), *(report.warnings if report else [])]


def utc_now() -> datetime:
    """The current time in UTC (the default clock's reading)."""
    return datetime.now(UTC)


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """The current time, UTC."""
        return utc_now()
