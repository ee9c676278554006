"""The guard: every rule of whether a person's decision on a pause may proceed.

Nothing else decides whether a request is approved, rejected, edited or re-run. `check` takes
the decision (`Action`), the pause as saved, what the person submitted and what holds now
(`Facts`), and either returns the pause or raises `ApprovalRefusedError` with its
`RefusalReason` and a sentence for the person. The checks run in one fixed order, the first that
fails decides:

1. the pause exists (`UNKNOWN_PAUSE`);
2. its status allows the action (`ALREADY_CONSUMED`, `ALREADY_CLAIMED`, `REJECTED`,
   `SUPERSEDED`, `EXPIRED`): approve also retries a `failed` pause, reject and edit need it
   `pending`;
3. it has not expired (`EXPIRED`);
4. the submitted authorization identity is the saved one (`IDENTITY_MISMATCH`);
5. a click comes from the request's own workspace, channel and thread (`ORIGIN_MISMATCH`): a
   button value copied into another message, or a payload naming another channel, runs nothing;
6. the person may decide it (`NOT_AUTHORIZED`): with self-approval off, nobody whose action
   produced the request (an uploader of any of its revisions, an editor of its reading) may
   approve it; they may withdraw it (reject) or correct it (edit) like an approver;
7. approve and re-run only: the policy in force is the one it was made under
   (`POLICY_CHANGED`), the inputs are still the current revision's (`STALE_INPUT`), it carries a
   complete mapping (`NOT_APPROVABLE`) whose digest matches (`MAPPING_MISMATCH`).

A re-run by recovery (`RESUME`) checks the policy only: its claim is already held, and the
approval it repeats passed every other check when it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from agent.domain import (
    ApprovalRequest,
    Approver,
    ApproverPolicy,
    PauseKind,
    PauseState,
    PauseStatus,
    RefusalReason,
)
from agent.errors import ApprovalRefusedError
from agent.identity import mapping_digest
from agent.pause import DECIDABLE, Transition, allows


class Action(StrEnum):
    """What a person (or recovery) does with a pause."""

    APPROVE = "approve"
    REJECT = "reject"
    EDIT = "edit"
    OPEN = "open"
    """About to show a decision form (reject or edit): is it still decidable?"""
    RESUME = "resume"
    """Recovery re-runs an interrupted approval."""


@dataclass(frozen=True)
class Origin:
    """Where a click came from in Slack: its workspace, channel and thread."""

    team: str | None
    channel: str
    thread_ts: str | None


@dataclass(frozen=True)
class Facts:
    """What holds when the decision is made, to compare with what the pause was issued for.

    `origin` is None for a decision taken in a terminal (`reconbot decide`): whoever can run
    the bot's commands holds its database already; the approver rules still apply.
    """

    now: datetime
    policy_version: str
    input_identity: str | None = None
    origin: Origin | None = None


_STATUS_REFUSALS = {
    PauseStatus.CONSUMED: RefusalReason.ALREADY_CONSUMED,
    PauseStatus.CLAIMED: RefusalReason.ALREADY_CLAIMED,
    PauseStatus.REJECTED: RefusalReason.REJECTED,
    PauseStatus.SUPERSEDED: RefusalReason.SUPERSEDED,
    PauseStatus.EXPIRED: RefusalReason.EXPIRED,
}
EXPIRED_WORDS = "This request has expired; ask for a fresh one."


def unknown_pause(pause_id: str) -> ApprovalRefusedError:
    """The refusal of a decision on a pause that was never saved."""
    return ApprovalRefusedError(RefusalReason.UNKNOWN_PAUSE, f"There is no request {pause_id}.")


def refusal_for_status(state: PauseState) -> ApprovalRefusedError | None:
    """The refusal that a pause's status alone calls for, or None if it can still be decided.

    Also the answer to a caller that lost a race: its conditional update found the pause moved
    on, and the new status says to what.
    """
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
        RefusalReason.EXPIRED: EXPIRED_WORDS,
    }
    return ApprovalRefusedError(reason, words[reason], state=state)


def requesters_of(request: ApprovalRequest) -> tuple[str, ...]:
    """Everyone whose action produced `request` (older snapshots name only the requester)."""
    return request.requesters or (request.requested_by,)


def may_approve(
    policy: ApproverPolicy, approver: Approver, requesters: str | Iterable[str]
) -> bool:
    """Whether `approver` may decide a request produced by `requesters` under `policy`."""
    makers = {requesters} if isinstance(requesters, str) else set(requesters)
    if not policy.self_approval and approver.user in makers:
        return False
    if not policy.approvers:
        return True
    allowed = set(policy.approvers)
    return approver.user in allowed or bool(allowed.intersection(approver.groups))


def approval_parties(
    policy: ApproverPolicy, requesters: str | Iterable[str]
) -> tuple[list[str] | None, list[str]]:
    """Who may approve a request made by `requesters` under `policy`, each once: the named
    approvers who did not make it (None: anyone in the channel), and, without self-approval,
    its makers, who may not. One rule for every place that says it (a refusal, Slack)."""
    makers = [requesters] if isinstance(requesters, str) else list(requesters)
    makers = list(dict.fromkeys(m for m in makers if m))
    excluded = [] if policy.self_approval else makers
    if not policy.approvers:
        return None, excluded
    return [a for a in dict.fromkeys(policy.approvers) if a not in excluded], excluded


def who_may_approve(policy: ApproverPolicy, requesters: str | Iterable[str]) -> str:
    """The approver policy in words, for a refusal."""
    allowed, excluded = approval_parties(policy, requesters)
    return parties_in_words(allowed, excluded, str)


def parties_in_words(
    allowed: list[str] | None, excluded: list[str], name: Callable[[str], str]
) -> str:
    """`approval_parties` in words, each person as `name` writes them (a Slack mention, an
    account name)."""
    if allowed is None:
        who = "anyone in the channel"
    else:
        who = ", ".join(map(name, allowed)) or "nobody else named as an approver"
    if not excluded:
        return who
    noun = "the requester" if len(excluded) == 1 else "those who made this request"
    return f"{who}, except {noun} ({', '.join(map(name, excluded))})"


def short_version(version: str) -> str:
    """`sha256:1a2b3c4d5e6f` from a policy version, as people see it next to a request."""
    return version[:19]


def check(
    action: Action,
    state: PauseState | None,
    *,
    pause_id: str,
    facts: Facts,
    authorization: str | None = None,
    decider: Approver | None = None,
) -> PauseState:
    """Return the pause if `action` on it may proceed; raise `ApprovalRefusedError` if not.

    `authorization` is the identity the button or form carried (checked when given; a person's
    decision always carries one), `decider` who decides (checked when given; recovery has
    none). The order of the checks is the module's docstring.
    """
    if action in (Action.APPROVE, Action.REJECT, Action.EDIT) and (
        authorization is None or decider is None
    ):
        raise TypeError(f"a person's {action.value} needs its authorization and its decider")
    if state is None:
        raise unknown_pause(pause_id)
    _check_status(action, state)
    request = state.request
    if action is not Action.RESUME and facts.now >= request.expires_at:
        raise ApprovalRefusedError(RefusalReason.EXPIRED, EXPIRED_WORDS, state=state)
    if authorization is not None and authorization != request.authorization_identity:
        raise ApprovalRefusedError(
            RefusalReason.IDENTITY_MISMATCH,
            "This approval was issued for something else than the saved request; nothing was run."
            if action is Action.APPROVE
            else "This decision was issued for something else than the saved request.",
            state=state,
        )
    if facts.origin is not None:
        _check_origin(state, facts.origin)
    makers = requesters_of(request)
    # Whoever made a request may withdraw it (reject) or correct it (edit, a new request that
    # still needs someone else's approval): only approving one's own is four-eyes' concern.
    own = action in (Action.REJECT, Action.EDIT) and decider is not None and decider.user in makers
    allowed = own or decider is None or may_approve(request.approver_policy, decider, makers)
    if decider is not None and not allowed:
        verb = "approve" if action is Action.APPROVE else "decide"
        raise ApprovalRefusedError(
            RefusalReason.NOT_AUTHORIZED,
            f"{decider.user} may not {verb} this request. Who may: "
            f"{who_may_approve(request.approver_policy, makers)}.",
            state=state,
        )
    if action in (Action.APPROVE, Action.RESUME) or (
        action is Action.EDIT and request.kind is PauseKind.POLICY_CHANGE
    ):  # an edited policy change made under other rules would bring those back
        _check_policy(state, facts.policy_version)
    if action is Action.APPROVE:
        _check_binding(state, facts.input_identity)
    return state


def _check_status(action: Action, state: PauseState) -> None:
    if action is Action.RESUME:
        proceeds = state.status is PauseStatus.CLAIMED
    elif action is Action.APPROVE:
        proceeds = allows(state, Transition.CLAIM)
    else:
        proceeds = state.status in DECIDABLE
    if not proceeds:
        raise refusal_for_status(state) or ApprovalRefusedError(
            RefusalReason.ALREADY_CLAIMED, "This request is no longer pending.", state=state
        )


def _check_origin(state: PauseState, origin: Origin) -> None:
    """A click counts only in the request's own workspace, channel and thread."""
    request = state.request
    if (
        request.channel != origin.channel
        or (request.thread_ts is not None and origin.thread_ts != request.thread_ts)
        or (request.team is not None and origin.team != request.team)
    ):
        raise ApprovalRefusedError(
            RefusalReason.ORIGIN_MISMATCH,
            "This button belongs to a request in another conversation; nothing was run. "
            "Decide on the request in its own thread.",
        )  # without the pause: a click from elsewhere learns nothing about it


def _check_policy(state: PauseState, current_policy_version: str) -> None:
    """The policy version is part of what an approval covers: an approval given under one set
    of rules must not run a reconciliation under another."""
    request = state.request
    if request.policy_version != current_policy_version:
        raise ApprovalRefusedError(
            RefusalReason.POLICY_CHANGED,
            "The reconciliation policy changed since this request was made (it was made under "
            f"policy {short_version(request.policy_version)}; the policy now in force is "
            f"{short_version(current_policy_version)}). Nothing was run: a new request is "
            "needed, made under the current policy (investigate again).",
            state=state,
        )


def _check_binding(state: PauseState, current_input_identity: str | None) -> None:
    request: ApprovalRequest = state.request
    if current_input_identity != request.input_identity:
        raise ApprovalRefusedError(
            RefusalReason.STALE_INPUT,
            "The files changed after this request was made; decide on the newest request.",
            state=state,
        )
    if request.kind is PauseKind.POLICY_CHANGE:
        _check_rules(state)
        return
    if not request.approvable or request.mapping is None:
        raise ApprovalRefusedError(
            RefusalReason.NOT_APPROVABLE,
            "This request asks a question; answer it (edit the mapping) before approving.",
            state=state,
        )
    if request.mapping_digest != mapping_digest(request.mapping):
        raise ApprovalRefusedError(
            RefusalReason.MAPPING_MISMATCH,
            "The saved mapping does not match the mapping this request was issued for.",
            state=state,
        )


def _check_rules(state: PauseState) -> None:
    """A policy change approves the rules it saved, whose version is the one it was issued
    for (the identity binds that version)."""
    change = state.request.policy_change
    if change is None or change.after().version != change.after_version:
        raise ApprovalRefusedError(
            RefusalReason.MAPPING_MISMATCH,
            "The saved rules do not match the version this request was issued for.",
            state=state,
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
    """Raise `ApprovalRefusedError` unless approving `state` with these facts may proceed
    (the `APPROVE` case of `check`, spelled out)."""
    check(
        Action.APPROVE,
        state,
        pause_id=state.request.pause_id,
        facts=Facts(now, current_policy_version, current_input_identity),
        authorization=submitted_identity,
        decider=approver,
    )
