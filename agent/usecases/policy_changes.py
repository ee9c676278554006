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

from agent.approval import Action, Origin
from agent.channel_policy import (
    TERMINAL_CHANNEL,
    PolicyRecord,
    channel_key,
    record_of,
    rules_of,
)
from agent.data.policy import Policy
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
from agent.errors import (
    ApprovalRefusedError,
    PolicyConflictError,
    PolicyProposalError,
    WorkflowError,
)
from agent.identity import new_id, policy_change_identity
from agent.pause import Transition
from agent.policy_change import (
    APPROVED_SOURCE,
    PolicyChange,
    proposed_policy,
    rule_changes,
)
from agent.ports import Claim, UnitOfWork
from agent.usecases.decisions import Decisions
from agent.usecases.intake import Intake
from agent.usecases.policy_effect import POLICY_CASE_PREFIX, effect_on_last_reconciliation

logger = logging.getLogger(__name__)

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
    """Those requests (to show as superseded where they were posted)."""

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
        request = self._proposal(case, changes, makers)
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

    def _proposal(
        self,
        case: Investigation,
        changes: dict[str, str],
        makers: tuple[str, ...],
        *,
        base: Policy | None = None,
    ) -> ApprovalRequest:
        """The request for `changes` (on top of `base`, an edited proposal's rules; else of the
        policy in force) to the policy in force in `case`'s channel, not saved. Raises
        PolicyProposalError for a change that cannot be made or that leaves the policy in
        force as it is."""
        current = self.deps.policy_for(case.channel)
        proposed = proposed_policy(base or current, changes, source=APPROVED_SOURCE)
        if proposed.version == current.version:
            raise PolicyProposalError("these values are the ones in force already: nothing changes")
        return self._request(case, current, proposed, makers)

    def _request(
        self, case: Investigation, current: Policy, proposed: Policy, makers: tuple[str, ...]
    ) -> ApprovalRequest:
        settings, now = self.deps.settings, self.deps.clock.now()
        pause_id = new_id("PAUSE")
        key = channel_key(case.channel)
        effect, missing = effect_on_last_reconciliation(self.deps, case.channel, proposed)
        change = PolicyChange(
            channel=key,
            before_version=current.version,
            after_version=proposed.version,
            after_rules=rules_of(proposed),
            changes=rule_changes(current, proposed),
            effect=effect,
            effect_missing=missing,
        )
        words = "; ".join(c.words for c in change.changes)
        return ApprovalRequest(
            pause_id=pause_id,
            investigation_id=case.id,
            kind=PauseKind.POLICY_CHANGE,
            revision=1,
            files=[],
            input_identity=current.version,
            mapping=None,
            mapping_digest=None,
            fields=[],
            clarifications=[],
            problems=[],
            warnings=[],
            rows={},
            policy_version=current.version,
            authorization_identity=policy_change_identity(
                pause_id=pause_id,
                investigation_id=case.id,
                channel=key,
                policy_version=current.version,
                proposed_version=proposed.version,
            ),
            requested_by=case.requested_by,
            channel=case.channel,
            thread_ts=case.thread_ts,
            created_at=now,
            expires_at=now + settings.approval_ttl,
            # Four-eyes whatever the bot's setting: a rule change is never its proposer's alone.
            approver_policy=settings.approver_policy.model_copy(update={"self_approval": False}),
            answers={},
            message=f"A change to the policy of {key}: {words}.",
            team=case.team,
            requesters=tuple(dict.fromkeys(makers)),
            policy_change=change,
        )

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
                claimed, replaced = self._approve_in_one_unit(
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
        self.deps.files.discard_sealed([old.pause_id for _, old in replaced])
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
            [old.pause_id for _, old in replaced],
        )

    def _approve_in_one_unit(
        self, pause_id: str, authorization: str, approver: Approver, origin: Origin | None
    ) -> tuple[PauseState | ApprovalRefusedError, list[tuple[str, ApprovalRequest]]]:
        """The guard, the claim, the version put in force, the consumption and the channel's
        superseded requests, in one unit of work."""
        now = self.deps.clock.now()
        replaced: list[tuple[str, ApprovalRequest]] = []
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
    ) -> list[tuple[str, ApprovalRequest]]:
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
        superseded = []
        for state in uow.pauses.open_in_channel(request.channel):
            pending = state.request
            if (
                pending.kind is PauseKind.POLICY_CHANGE
                or pending.policy_version != change.before_version
            ):
                continue
            if uow.pauses.apply(
                pending.pause_id, Transition.SUPERSEDE, actor=approver.user, at=now, reason=reason
            ):
                superseded.append((pending.investigation_id, pending))
        return superseded

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
        with self.deps.uow() as uow:
            seen = uow.pauses.get(pause_id)
            case = uow.investigations.get(seen.request.investigation_id) if seen else None
        if seen is not None and seen.request.kind is not PauseKind.POLICY_CHANGE:
            raise WorkflowError(f"{pause_id} is not a policy change.")
        change = seen.request.policy_change if seen is not None else None
        proposal = None
        if seen is not None and case is not None and change is not None:
            makers = (*seen.request.requesters, actor.user)
            proposal = self._proposal(case, changes, makers, base=change.after())
        now = self.deps.clock.now()
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
                assert proposal is not None
                uow.pauses.add(proposal)
        if isinstance(edited, ApprovalRefusedError):
            raise edited
        assert proposal is not None
        return proposal
