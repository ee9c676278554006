"""The guard: whether a confirmation still applies to the pause it names (DESIGN §4).

Nothing else decides whether an investigation resumes. The checks run in a fixed order and the
first that fails raises `ApprovalRefusedError` with its reason code and a sentence for the person.
"""

from __future__ import annotations

from datetime import datetime

from agent.domain import (
    ApprovalRequest,
    Approver,
    ApproverPolicy,
    PauseState,
    PauseStatus,
    RefusalReason,
)
from agent.errors import ApprovalRefusedError
from agent.identity import mapping_digest

_STATUS_REFUSALS = {
    PauseStatus.CONSUMED: RefusalReason.ALREADY_CONSUMED,
    PauseStatus.CLAIMED: RefusalReason.ALREADY_CLAIMED,
    PauseStatus.REJECTED: RefusalReason.REJECTED,
    PauseStatus.SUPERSEDED: RefusalReason.SUPERSEDED,
    PauseStatus.EXPIRED: RefusalReason.EXPIRED,
}


def refusal_for_status(state: PauseState) -> ApprovalRefusedError | None:
    """The refusal that a pause's status alone calls for, or None if it can still be decided."""
    reason = _STATUS_REFUSALS.get(state.status)
    if reason is None:
        return None
    who = f" by {state.decided_by}" if state.decided_by else ""
    when = f" at {state.decided_at:%Y-%m-%d %H:%M} UTC" if state.decided_at else ""
    words = {
        RefusalReason.ALREADY_CONSUMED: f"This request was already approved{who}{when} "
        "and its reconciliation has run.",
        RefusalReason.ALREADY_CLAIMED: f"This request was just approved{who}{when}; "
        "the reconciliation is running.",
        RefusalReason.REJECTED: f"This request was rejected{who}{when}"
        + (f": {state.reason}" if state.reason else "."),
        RefusalReason.SUPERSEDED: "This request was superseded"
        + (f" ({state.reason})" if state.reason else "")
        + "; decide on the newest request in the thread.",
        RefusalReason.EXPIRED: "This request has expired; ask for a fresh one.",
    }
    return ApprovalRefusedError(reason, words[reason])


def may_approve(policy: ApproverPolicy, approver: Approver, requested_by: str) -> bool:
    """Whether `approver` may approve a request made by `requested_by` under `policy`."""
    if not policy.self_approval and approver.user == requested_by:
        return False
    if not policy.approvers:
        return True
    allowed = set(policy.approvers)
    return approver.user in allowed or bool(allowed.intersection(approver.groups))


def who_may_approve(policy: ApproverPolicy, requested_by: str) -> str:
    """The approver policy in words, for a refusal."""
    who = ", ".join(policy.approvers) if policy.approvers else "anyone in the channel"
    if not policy.self_approval:
        return f"{who}, except the requester ({requested_by})"
    return who


def short_version(version: str) -> str:
    """`sha256:1a2b3c4d5e6f` from a policy version, as people see it next to a request."""
    return version[:19]


def check_policy(request: ApprovalRequest, current_policy_version: str) -> None:
    """Raise `POLICY_CHANGED` unless `request` was made under the policy now in force.

    The policy version is part of what an approval covers (DESIGN §3): an approval given under
    one set of rules must not run a reconciliation under another. Used by the guard and by the
    recovery of an interrupted approval.
    """
    if request.policy_version != current_policy_version:
        raise ApprovalRefusedError(
            RefusalReason.POLICY_CHANGED,
            "The reconciliation policy changed since this request was made (it was made under "
            f"policy {short_version(request.policy_version)}; the policy now in force is "
            f"{short_version(current_policy_version)}). Nothing was run: a new request is "
            "needed, made under the current policy (investigate again).",
        )


def check_confirmation(
    state: PauseState,
    *,
    submitted_identity: str,
    approver: Approver,
    current_input_identity: str | None,
    current_policy_version: str,
    now: datetime,
) -> None:
    """Raise `ApprovalRefusedError` unless confirming `state` with these facts may proceed.

    Order: status, expiry, authorization identity, approver, policy in force, current inputs,
    mapping. A `failed` pause (its resumed phase errored) may be confirmed again: that is the
    retry, refused like any other once the policy has changed.
    """
    refusal = refusal_for_status(state)
    if refusal is not None:
        raise refusal
    request = state.request
    if now >= request.expires_at:
        raise ApprovalRefusedError(
            RefusalReason.EXPIRED, "This request has expired; ask for a fresh one."
        )
    if submitted_identity != request.authorization_identity:
        raise ApprovalRefusedError(
            RefusalReason.IDENTITY_MISMATCH,
            "This approval was issued for something else than the saved request; nothing was run.",
        )
    if not may_approve(request.approver_policy, approver, request.requested_by):
        raise ApprovalRefusedError(
            RefusalReason.NOT_AUTHORIZED,
            f"{approver.user} may not approve this request. Who may: "
            f"{who_may_approve(request.approver_policy, request.requested_by)}.",
        )
    check_policy(request, current_policy_version)
    if current_input_identity != request.input_identity:
        raise ApprovalRefusedError(
            RefusalReason.STALE_INPUT,
            "The files changed after this request was made; decide on the newest request.",
        )
    if not request.approvable or request.mapping is None:
        raise ApprovalRefusedError(
            RefusalReason.NOT_APPROVABLE,
            "This request asks a question; answer it (edit the mapping) before approving.",
        )
    if request.mapping_digest != mapping_digest(request.mapping):
        raise ApprovalRefusedError(
            RefusalReason.MAPPING_MISMATCH,
            "The saved mapping does not match the mapping this request was issued for.",
        )
