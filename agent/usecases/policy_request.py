"""A proposed change to a channel's policy as the request a person approves: the rules it
would put in force, each change in words, the versions, and its effect on the channel's last
approved reconciliation (`PolicyChanges` saves and decides it)."""

from __future__ import annotations

from agent.channel_policy import channel_key, rules_of
from agent.data.policy import Policy
from agent.dependencies import Dependencies
from agent.domain import ApprovalRequest, Investigation, PauseKind
from agent.errors import PolicyProposalError
from agent.identity import new_id, policy_change_identity
from agent.policy_change import APPROVED_SOURCE, PolicyChange, proposed_policy, rule_changes
from agent.usecases.policy_effect import effect_on_last_reconciliation


def policy_change_request(
    deps: Dependencies,
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
    current = deps.policy_for(case.channel)
    proposed = proposed_policy(base or current, changes, source=APPROVED_SOURCE)
    if proposed.version == current.version:
        raise PolicyProposalError("these values are the ones in force already: nothing changes")
    return _request(deps, case, current, proposed, makers)


def _request(
    deps: Dependencies,
    case: Investigation,
    current: Policy,
    proposed: Policy,
    makers: tuple[str, ...],
) -> ApprovalRequest:
    settings, now = deps.settings, deps.clock.now()
    pause_id = new_id("PAUSE")
    key = channel_key(case.channel)
    effect, missing = effect_on_last_reconciliation(deps, case.channel, proposed)
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
