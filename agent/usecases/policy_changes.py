"""A change to a channel's policy is itself a request a person approves (issue 41).

`propose` makes a *policy change* request in the channel: the rules it changes, before and
after, in words, and what the change would have done to the channel's last approved
reconciliation. Deciding it goes through the one guard like any request: its authorization
identity binds the channel, the version in force and the proposed version; the proposer may not
approve it (four-eyes, the approver policy's); it expires; an edit is a new proposal; a
rejection needs a reason. Approving it puts the proposed version in force in the channel in the
same unit of work as the claim, audited, and supersedes the channel's pending requests made
under the old version, which are then made again under the new one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from agent.approval import Action, Facts, Origin, check
from agent.channel_policy import TERMINAL_CHANNEL, PolicyRecord, channel_key, record_of
from agent.dependencies import Dependencies
from agent.domain import (
    ApprovalRequest,
    Approver,
    Investigation,
    InvestigationStatus,
    PauseKind,
    PauseState,
    Revision,
)
from agent.errors import ApprovalRefusedError, PolicyConflictError, WorkflowError
from agent.identity import new_id
from agent.pause import Transition
from agent.policy_change import APPROVED_SOURCE
from agent.ports import Claim, UnitOfWork
from agent.usecases.decisions import Decisions
from agent.usecases.intake import Intake
from agent.usecases.policy_effect import POLICY_CASE_PREFIX
from agent.usecases.policy_request import policy_change_request

logger = logging.getLogger(__name__)

_Replaced = tuple[list[tuple[str, ApprovalRequest]], list[str]]
"""The cases to make again, each with its newest superseded request; every pause superseded."""

SEED_ACTOR = "seed"
"""Who the first record of a channel names: the configured policy it was under until then."""


@dataclass(frozen=True)
class PolicyApproved:
    """An approved change: the request, the requests of the channel it superseded (made under
    the old version), and those made again under the new one."""

    request: ApprovalRequest
    superseded: list[str]
    """The cases whose open request (pending, or failed and awaiting a retry) was
    superseded."""
    reissued: list[ApprovalRequest]
    superseded_pauses: list[str]
    """Every request superseded (to show as superseded where it was posted)."""

    @property
    def not_reissued(self) -> list[str]:
        """The superseded cases whose new request could not be made (the model was busy):
        said to the approver, each to be investigated again."""
        made = {request.investigation_id for request in self.reissued}
        return [case for case in self.superseded if case not in made]


class PolicyChanges:
    """Propose, approve and edit changes to a channel's policy (reject and expiry are any
    request's: `Decisions`)."""

    def __init__(self, deps: Dependencies, decisions: Decisions, intake: Intake) -> None:
        self.deps = deps
        self.decisions = decisions
        self.intake = intake

    def propose(
        self,
        channel: str | None,
        changes: dict[str, str],
        *,
        proposed_by: str,
        thread_ts: str | None = None,
        team: str | None = None,
    ) -> ApprovalRequest:
        """Ask the channel to approve `changes` to its policy in force (rule -> value as
        typed). Raises PolicyProposalError naming the rule for a change that cannot be made."""
        if channel == TERMINAL_CHANNEL:  # the key of the cases outside any chat channel
            channel = None
        now = self.deps.clock.now()
        case = Investigation(
            id=new_id(POLICY_CASE_PREFIX),
            status=InvestigationStatus.AWAITING_DECISION,
            requested_by=proposed_by,
            channel=channel,
            thread_ts=thread_ts,
            revision=1,
            created_at=now,
            team=team,
        )
        return self._propose_in(case, changes, (proposed_by,))

    def _propose_in(
        self, case: Investigation, changes: dict[str, str], makers: tuple[str, ...]
    ) -> ApprovalRequest:
        """The request for `changes` to the policy in force in the new `case`'s channel,
        saved with the case as its one pending request."""
        request = policy_change_request(self.deps, case, changes, makers)
        with self.deps.uow() as uow:
            revision = Revision(
                investigation_id=case.id,
                number=1,
                files={},
                input_identity=request.policy_version,
                created_at=case.created_at,
                added_by=makers[0],
            )
            uow.investigations.add(case, revision)
            uow.pauses.add(request)
        logger.info(
            "investigation=%s pause=%s channel=%s | policy change proposed",
            case.id,
            request.pause_id,
            channel_key(case.channel),
        )
        return request

    def approve(
        self,
        pause_id: str,
        authorization: str,
        approver: Approver,
        *,
        origin: Origin | None = None,
    ) -> PolicyApproved:
        """Approve a policy change through the guard: in one unit of work, claim it, put its
        version in force in its channel (audited), consume it and supersede the channel's
        open requests (pending, or failed and awaiting a retry) made under the old version;
        then make each of those again under the new version. Raises ApprovalRefusedError when
        the approval does not apply (another change was approved first: `POLICY_CHANGED`; its
        proposer: `NOT_AUTHORIZED`)."""
        for attempt in range(2):
            try:
                claimed, (replaced, superseded) = self._approve_in_one_unit(
                    pause_id, authorization, approver, origin
                )
                break
            except PolicyConflictError:
                # Another change of the channel was put in force meanwhile: nothing of this one
                # was written; decided again, the guard now refuses it (POLICY_CHANGED).
                if attempt:
                    raise
        if isinstance(claimed, ApprovalRefusedError):
            raise claimed
        self.deps.files.discard_sealed(superseded)
        reissued = []
        for investigation_id, old in replaced:  # with the people's answers and edits it had
            try:
                again = self.intake.investigate_again(
                    investigation_id, actor=approver.user, answers=old.answers, edits=old.edits
                )
            except Exception:  # the case stays superseded: "investigate again" makes it later
                logger.exception(
                    "investigation=%s | not made again under the new policy", investigation_id
                )
                continue
            reissued.append(again)
        return PolicyApproved(
            claimed.request,
            [case for case, _ in replaced],
            reissued,
            superseded,
        )

    def _approve_in_one_unit(
        self, pause_id: str, authorization: str, approver: Approver, origin: Origin | None
    ) -> tuple[PauseState | ApprovalRefusedError, _Replaced]:
        """The guard, the claim, the version put in force, the consumption and the channel's
        superseded requests, in one unit of work."""
        now = self.deps.clock.now()
        replaced: _Replaced = ([], [])
        with self.deps.uow() as uow:
            state = uow.pauses.lock(pause_id)
            if state is not None and state.request.kind is not PauseKind.POLICY_CHANGE:
                raise WorkflowError(f"{pause_id} is not a policy change.")
            channel = state.request.channel if state is not None else None
            # Read once: the guard compares this version, and the new one is put on top of
            # this very record, so a change put in force after this read makes it conflict.
            record = uow.policies.in_force(channel_key(channel))
            in_force = record.policy() if record is not None else self.deps.settings.policy
            claimed = self.decisions.decide_in(
                uow,
                Action.APPROVE,
                state,
                pause_id,
                approver,
                now,
                authorization=authorization,
                origin=origin,
                transition=Transition.CLAIM,
                claim=Claim(self.deps.owner, now + self.deps.settings.claim_lease),
                status=InvestigationStatus.COMPLETED,
                input_identity=in_force.version,
            )
            if not isinstance(claimed, ApprovalRefusedError):
                replaced = self._put_in_force(uow, claimed, record, approver, now)
        return claimed, replaced

    def _put_in_force(
        self,
        uow: UnitOfWork,
        claimed: PauseState,
        read: PolicyRecord | None,
        approver: Approver,
        now: datetime,
    ) -> _Replaced:
        request = claimed.request
        change = request.policy_change
        assert change is not None
        key = change.channel
        if read is None:  # the seed it replaces, as its first version
            seed = self.deps.settings.policy
            read = uow.policies.add(
                record_of(key, seed, since=now, by=SEED_ACTOR, source=seed.source), after=None
            )
        uow.policies.add(
            record_of(
                key,
                change.after(),
                since=now,
                by=approver.user,
                source=f"{APPROVED_SOURCE} ({request.pause_id})",
                pause_id=request.pause_id,
            ),
            after=read,
        )
        uow.pauses.apply(
            request.pause_id, Transition.CONSUME, actor=approver.user, at=now, owner=self.deps.owner
        )
        reason = (
            f"the policy of this channel changed to {change.after_version[:19]} "
            f"(approved by {approver.user}, {request.pause_id}); a new request follows under it"
        )
        # Every open request not under the new rules: those made under the old version, and
        # any left failed under an older one (a claim that failed once its rules had gone).
        # Each case is made again once, from its newest request (its latest answers and edits).
        newest: dict[str, ApprovalRequest] = {}
        superseded: list[str] = []
        for state in uow.pauses.open_in_channel(request.channel):  # oldest first
            open_request = state.request
            if (
                open_request.kind is PauseKind.POLICY_CHANGE
                or open_request.policy_version == change.after_version
            ):
                continue
            if uow.pauses.apply(
                open_request.pause_id,
                Transition.SUPERSEDE,
                actor=approver.user,
                at=now,
                reason=reason,
            ):
                newest[open_request.investigation_id] = open_request
                superseded.append(open_request.pause_id)
        return list(newest.items()), superseded

    def withdraw(self, pause_id: str, *, actor: str, reason: str) -> bool:
        """Take back a pending policy change nobody could be shown (its message could not be
        posted in the channel): superseded with `reason`, its case closed, so no request waits
        that nobody sees. False when it was no longer pending (decided meanwhile)."""
        now = self.deps.clock.now()
        with self.deps.uow() as uow:
            state = uow.pauses.get(pause_id)
            if state is None or state.request.kind is not PauseKind.POLICY_CHANGE:
                raise WorkflowError(f"{pause_id} is not a policy change.")
            if not uow.pauses.apply(
                pause_id, Transition.SUPERSEDE, actor=actor, at=now, reason=reason
            ):
                return False
            uow.investigations.set_status(
                state.request.investigation_id, InvestigationStatus.REJECTED, actor=actor
            )
        logger.info("pause=%s | policy change withdrawn: not shown in its channel", pause_id)
        return True

    def edit(
        self,
        pause_id: str,
        authorization: str,
        actor: Approver,
        changes: dict[str, str],
        *,
        origin: Origin | None = None,
    ) -> ApprovalRequest:
        """An edit of a policy change is a new proposal: `changes` on top of the rules it
        proposed, checked first (a change that cannot be made changes nothing). In one unit of
        work, through the guard, the old request is superseded and the new one, naming the
        proposer and the editor, waits for someone else. Refused (`POLICY_CHANGED`) once
        another version is in force: its rules would bring the older ones back."""
        now = self.deps.clock.now()
        with self.deps.uow() as uow:
            seen = uow.pauses.get(pause_id)
            case = uow.investigations.get(seen.request.investigation_id) if seen else None
            in_force = self.deps.policy_for(seen.request.channel if seen else None, uow)
        if seen is not None and seen.request.kind is not PauseKind.POLICY_CHANGE:
            raise WorkflowError(f"{pause_id} is not a policy change.")
        change = seen.request.policy_change if seen is not None else None
        proposal = None
        try:  # the guard first: a refused edit costs no proposal (its effect reconciles)
            check(
                Action.EDIT,
                seen,
                pause_id=pause_id,
                facts=Facts(now, in_force.version, origin=origin),
                authorization=authorization,
                decider=actor,
            )
        except ApprovalRefusedError:
            pass  # decided below, where the refusal is recorded
        else:
            if case is not None and change is not None:
                makers = (*seen.request.requesters, actor.user)  # type: ignore[union-attr]
                proposal = policy_change_request(
                    self.deps, case, changes, makers, base=change.after()
                )
        described = ", ".join(f"{key}={value}" for key, value in changes.items())
        with self.deps.uow() as uow:
            edited = self.decisions.decide_in(
                uow,
                Action.EDIT,
                uow.pauses.lock(pause_id),
                pause_id,
                actor,
                now,
                authorization=authorization,
                origin=origin,
                transition=Transition.SUPERSEDE,
                reason=f"edited by {actor.user}: {described}",
                note=described,
                status=InvestigationStatus.AWAITING_DECISION,
            )
            if not isinstance(edited, ApprovalRefusedError):
                if proposal is None:  # refused a moment ago, allowed now: nothing is kept
                    raise WorkflowError(f"{pause_id} changed while it was edited; edit again.")
                uow.pauses.add(proposal)
        if isinstance(edited, ApprovalRefusedError):
            raise edited
        assert proposal is not None
        return proposal
