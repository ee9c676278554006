"""Decisions: approve, reject, edit, expire; and whether a request can still be decided.

Each decision is one unit of work: the pause is read once (locked), the guard
(`agent.approval.check`) decides, and the change it allows, the decision record and the case's
status are committed together. A refused decision is recorded too, then raised. The resumed
phase of an approval runs after that commit, outside any transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from agent.approval import Action, Facts, Origin, check, refusal_for_status
from agent.data.schema import READING_OPTIONS, SCHEMA, Role
from agent.dependencies import SYSTEM_ACTOR, Dependencies, Progress
from agent.domain import (
    ApprovalRequest,
    Approver,
    Decision,
    InvestigationStatus,
    Outcome,
    PauseKind,
    PauseState,
    PauseStatus,
    RefusalReason,
    Revision,
)
from agent.errors import ApprovalRefusedError, WorkflowError
from agent.pause import Transition, apply
from agent.ports import Claim, UnitOfWork
from agent.runtime.prompts import revise_prompt
from agent.runtime.turns import AgentTurns
from agent.usecases.common import current_revision, investigation_in
from agent.usecases.requests import investigate
from agent.usecases.resumption import Resumption

logger = logging.getLogger(__name__)


class Decisions:
    """A person's decisions on a request, each through the one guard."""

    def __init__(self, deps: Dependencies, turns: AgentTurns, resumption: Resumption) -> None:
        self.deps = deps
        self.turns = turns
        self.resumption = resumption

    def decidable(
        self, pause_id: str, authorization: str | None = None, origin: Origin | None = None
    ) -> PauseState:
        """The pause, if a person may still decide it (before showing a decision form).

        Raises ApprovalRefusedError otherwise. Records nothing: the decision itself goes
        through the guard again when it is submitted.
        """
        with self.deps.uow() as uow:
            state = uow.pauses.get(pause_id)
            policy = self.deps.policy_for(state.request.channel if state else None, uow)
        return check(
            Action.OPEN,
            state,
            pause_id=pause_id,
            facts=Facts(self.deps.clock.now(), policy.version, origin=origin),
            authorization=authorization,
        )

    def confirm(
        self,
        pause_id: str,
        authorization: str,
        approver: Approver,
        *,
        on_claimed: Callable[[PauseState], None] | None = None,
        origin: Origin | None = None,
    ) -> Outcome:
        """Approve a pause: guard and claim in one unit of work, then resume, save the outcome
        and consume the pause.

        Raises ApprovalRefusedError (with its reason code) when the approval does not apply;
        exactly one of any number of concurrent callers gets past the claim. `on_claimed` is
        told the claimed pause before the (long) resumed phase starts, so the winner can be
        shown at once.
        """
        now = self.deps.clock.now()
        claim = Claim(self.deps.owner, now + self.deps.settings.claim_lease)
        with self.deps.uow() as uow:
            state = uow.pauses.lock(pause_id)
            if state is not None and state.request.kind is PauseKind.POLICY_CHANGE:
                raise WorkflowError(
                    f"{pause_id} is a policy change: approving it puts the rules in force "
                    "(`PolicyChanges.approve`), it reconciles nothing."
                )
            revision = current_revision(uow, state.request.investigation_id) if state else None
            claimed = self.decide_in(
                uow,
                Action.APPROVE,
                state,
                pause_id,
                approver,
                now,
                authorization=authorization,
                origin=origin,
                transition=Transition.CLAIM,
                claim=claim,
                status=InvestigationStatus.RECONCILING,
                input_identity=revision.input_identity if revision else None,
            )
        if isinstance(claimed, ApprovalRefusedError):
            raise claimed
        assert revision is not None
        self.resumption.hold(pause_id)  # ours from the claim on, however long the wait
        try:
            if on_claimed is not None:
                on_claimed(claimed)
        except Exception:
            # Never leave a claim nobody runs: fail it now (Approve again retries).
            self.resumption.fail(claimed.request.investigation_id, pause_id)
            self.resumption.release(pause_id)
            raise
        return self.resumption.resume(claimed, revision, approver.user)

    def reject(
        self,
        pause_id: str,
        authorization: str,
        actor: Approver,
        reason: str,
        *,
        origin: Origin | None = None,
    ) -> PauseState:
        """Reject a pending request with a reason; later approvals of it are refused."""
        reason = reason.strip()
        if not reason:
            raise WorkflowError("A rejection needs a reason.")
        now = self.deps.clock.now()
        with self.deps.uow() as uow:
            rejected = self.decide_in(
                uow,
                Action.REJECT,
                uow.pauses.lock(pause_id),
                pause_id,
                actor,
                now,
                authorization=authorization,
                origin=origin,
                transition=Transition.REJECT,
                reason=reason,
                note=reason,
                status=InvestigationStatus.REJECTED,
            )
        if isinstance(rejected, ApprovalRefusedError):
            raise rejected
        self.deps.files.discard_sealed([pause_id])
        return rejected

    def edit(
        self,
        pause_id: str,
        authorization: str,
        actor: Approver,
        answers: dict[Role, dict[str, str]],
        progress: Progress | None = None,
        *,
        origin: Origin | None = None,
    ) -> ApprovalRequest:
        """Change which column feeds some fields (or how a file is read): a new proposal,
        validated, with its own request.

        The edited request is superseded in the same unit of work as the accepted edit, so it
        cannot be approved while the agent validates the new reading. If that turn fails (the
        model is busy), `Intake.investigate_again` makes a new request for the case.
        """
        now = self.deps.clock.now()
        changes = _changes(answers)
        with self.deps.uow() as uow:
            # Closed to approval in the same commit that accepts the edit: the reading it shows
            # was replaced; the request with the new reading follows once the agent validated it.
            edited = self.decide_in(
                uow,
                Action.EDIT,
                uow.pauses.lock(pause_id),
                pause_id,
                actor,
                now,
                authorization=authorization,
                origin=origin,
                transition=Transition.SUPERSEDE,
                reason=f"edited by {actor.user}: {changes}",
                note=changes,
            )
            if not isinstance(edited, ApprovalRefusedError):
                if edited.request.kind is PauseKind.POLICY_CHANGE:  # undoes the whole unit
                    raise WorkflowError(
                        f"{pause_id} is a policy change: edit its rules (`PolicyChanges.edit`)."
                    )
                _check_fields(answers)  # an unknown field undoes the whole unit
                request = edited.request
                investigation = investigation_in(uow, request.investigation_id)
                revision: Revision = current_revision(uow, request.investigation_id)
        if isinstance(edited, ApprovalRefusedError):
            raise edited
        self.deps.files.discard_sealed([pause_id])
        merged = {role: dict(fields) for role, fields in request.answers.items()}
        for role, fields in answers.items():
            merged.setdefault(role, {}).update(fields)
        return investigate(
            self.deps,
            self.turns,
            investigation,
            revision,
            revise_prompt(revision.number, answers, actor.user),
            merged,
            phase="revise",
            progress=progress,
            edits=(*request.edits, (actor.user, changes)),
        )

    def expire_due(self) -> list[str]:
        """Expire every pending request whose time is up; returns the expired pause ids."""
        now = self.deps.clock.now()
        with self.deps.uow() as uow:
            expired = [
                pause_id
                for pause_id in uow.pauses.due(now)
                if uow.pauses.apply(
                    pause_id,
                    Transition.EXPIRE,
                    actor=SYSTEM_ACTOR,
                    at=now,
                    reason="no decision before the request expired",
                )
            ]
        self.deps.files.discard_sealed(expired)
        return expired

    # -- inside a decision's unit of work -------------------------------------------------------

    def decide_in(
        self,
        uow: UnitOfWork,
        action: Action,
        state: PauseState | None,
        pause_id: str,
        decider: Approver,
        now: datetime,
        *,
        authorization: str,
        origin: Origin | None,
        transition: Transition,
        reason: str | None = None,
        note: str | None = None,
        claim: Claim | None = None,
        status: InvestigationStatus | None = None,
        input_identity: str | None = None,
    ) -> PauseState | ApprovalRefusedError:
        """One decision inside its unit of work, on the pause as locked: the guard, then the
        transition, the accepted decision (with `note`) and the case's new `status`.

        Returns the pause after the transition, or the refusal (recorded; a pause found
        expired is expired), for the caller to raise once the unit has committed: raised here,
        it would roll back its own record. The policy compared is the one in force in the
        request's channel, read in this unit.
        """
        in_force = self.deps.policy_for(state.request.channel if state else None, uow)
        try:
            check(
                action,
                state,
                pause_id=pause_id,
                facts=Facts(now, in_force.version, input_identity, origin),
                authorization=authorization,
                decider=decider,
            )
        except ApprovalRefusedError as error:
            if (
                error.reason == RefusalReason.EXPIRED
                and state is not None
                and state.status is PauseStatus.PENDING
            ):
                uow.pauses.apply(pause_id, Transition.EXPIRE, actor=SYSTEM_ACTOR, at=now)
            return record_refusal(uow, state, pause_id, action, decider.user, now, error)
        assert state is not None
        if not uow.pauses.apply(
            pause_id, transition, actor=decider.user, at=now, reason=reason, claim=claim
        ):
            # Another caller moved it first: refuse with the status it now has.
            latest = uow.pauses.get(pause_id)
            lost = (refusal_for_status(latest) if latest else None) or ApprovalRefusedError(
                RefusalReason.ALREADY_CLAIMED, "This request is no longer pending.", state=latest
            )
            return record_refusal(uow, state, pause_id, action, decider.user, now, lost)
        request = state.request
        uow.decisions.add(
            Decision(
                pause_id=pause_id,
                investigation_id=request.investigation_id,
                action=action.value,
                actor=decider.user,
                reason=note,
                accepted=True,
                refusal=None,
                at=now,
            )
        )
        if status is not None:
            uow.investigations.set_status(request.investigation_id, status, actor=decider.user)
        return apply(state, transition, actor=decider.user, at=now, reason=reason)


def record_refusal(
    uow: UnitOfWork,
    state: PauseState | None,
    pause_id: str,
    action: Action,
    actor: str,
    now: datetime,
    error: ApprovalRefusedError,
) -> ApprovalRefusedError:
    """Record a refused decision in the audit trail; returns the refusal for the caller."""
    uow.decisions.add(
        Decision(
            pause_id=pause_id,
            investigation_id=state.request.investigation_id if state else "",
            action=action.value,
            actor=actor,
            reason=None,
            accepted=False,
            refusal=RefusalReason(error.reason),
            at=now,
        )
    )
    logger.info(
        "pause=%s action=%s reason=%s | decision refused", pause_id, action.value, error.reason
    )
    return error


def _check_fields(answers: dict[Role, dict[str, str]]) -> None:
    for role, fields in answers.items():
        known = {spec.name for spec in SCHEMA[role]} | set(READING_OPTIONS)
        unknown = sorted(set(fields) - known)
        if unknown:
            raise WorkflowError(
                f"{role.value} has no field {', '.join(unknown)}; "
                f"its fields are {', '.join(sorted(known))}."
            )


def _changes(answers: dict[Role, dict[str, str]]) -> str:
    return "; ".join(
        f"{role.value}.{name}={column}"
        for role, fields in answers.items()
        for name, column in fields.items()
    )
