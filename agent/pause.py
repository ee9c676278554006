"""The pause's lifecycle: every status change a pause can make, in one table.

A pause is born `pending`. From there a person approves it (`claim`: the one approval that
wins runs the reconciliation), rejects it, or lets it expire; a newer request supersedes it.
A claimed pause is `consume`d when its outcome is saved, or `fail`s (and may be approved again:
the retry). Recovery `take_over`s a claim whose process died. Nothing else moves a pause:
storage persists a transition named here, with a compare-and-set on the statuses this table
allows it from, and never decides one itself.

    pending  --claim-->      claimed  --consume--> consumed
    pending  --reject-->     rejected
    pending  --supersede-->  superseded
    pending  --expire-->     expired
    claimed  --fail-->       failed   --claim-->   claimed   (retry)
    claimed  --take_over-->  claimed  (a new owner, after its owner died)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from agent.domain import PauseState, PauseStatus


class Transition(StrEnum):
    """The status changes of a pause."""

    CLAIM = "claim"
    CONSUME = "consume"
    REJECT = "reject"
    SUPERSEDE = "supersede"
    EXPIRE = "expire"
    FAIL = "fail"
    TAKE_OVER = "take_over"
    RENEW = "renew"


@dataclass(frozen=True)
class Rule:
    """One transition: the statuses it may start from, where it leads, and what it records.

    `records_decider`: the actor and time become the pause's `decided_by`/`decided_at` (who
    approved or rejected it, shown on the message). `takes_claim`: it hands the pause to an
    owner with a lease (and counts an attempt). `owner_only`: only the claim's current owner
    may make it (a process that lost its claim must not complete or fail it).
    """

    sources: frozenset[PauseStatus]
    target: PauseStatus
    records_decider: bool = False
    takes_claim: bool = False
    owner_only: bool = False
    audit_name: str | None = None
    counts_attempt: bool = True

    @property
    def audit_event(self) -> str:
        """The audit log's name for this change (kept stable: the chain records it)."""
        return self.audit_name or f"pause_{self.target.value}"


RULES: dict[Transition, Rule] = {
    Transition.CLAIM: Rule(
        frozenset({PauseStatus.PENDING, PauseStatus.FAILED}),
        PauseStatus.CLAIMED,
        records_decider=True,
        takes_claim=True,
    ),
    Transition.CONSUME: Rule(
        frozenset({PauseStatus.CLAIMED}), PauseStatus.CONSUMED, owner_only=True
    ),
    Transition.REJECT: Rule(
        frozenset({PauseStatus.PENDING}), PauseStatus.REJECTED, records_decider=True
    ),
    # A failed request is open too (Approve retries it): a change of policy supersedes it.
    Transition.SUPERSEDE: Rule(
        frozenset({PauseStatus.PENDING, PauseStatus.FAILED}), PauseStatus.SUPERSEDED
    ),
    Transition.EXPIRE: Rule(frozenset({PauseStatus.PENDING}), PauseStatus.EXPIRED),
    Transition.FAIL: Rule(frozenset({PauseStatus.CLAIMED}), PauseStatus.FAILED, owner_only=True),
    Transition.TAKE_OVER: Rule(
        frozenset({PauseStatus.CLAIMED}),
        PauseStatus.CLAIMED,
        takes_claim=True,
        owner_only=True,
        audit_name="claim_recovered",
    ),
    Transition.RENEW: Rule(
        frozenset({PauseStatus.CLAIMED}),
        PauseStatus.CLAIMED,
        takes_claim=True,
        owner_only=True,
        audit_name="claim_renewed",
        counts_attempt=False,
    ),
}

OPEN_STATUSES = frozenset({PauseStatus.PENDING, PauseStatus.FAILED})
"""Where a request may still be approved (a failed one is retried by Approve)."""
DECIDABLE = frozenset({PauseStatus.PENDING})
"""Where a person may still reject or edit a request (approving also retries a failed one)."""


def rule(transition: Transition) -> Rule:
    """The rule of `transition`."""
    return RULES[transition]


def allows(state: PauseState, transition: Transition) -> bool:
    """Whether `state`'s status lets `transition` happen (ownership aside)."""
    return state.status in RULES[transition].sources


def apply(
    state: PauseState,
    transition: Transition,
    *,
    actor: str,
    at: datetime,
    reason: str | None = None,
) -> PauseState:
    """The pause after `transition`, as storage will have saved it.

    Used to show the new state without reading it back, and by the in-memory unit of work.
    Raises ValueError when the status does not allow the transition: callers check first
    (storage's conditional update is what settles a race).
    """
    if not allows(state, transition):
        raise ValueError(f"a {state.status.value} pause cannot {transition.value}")
    changes: dict[str, object] = {"status": RULES[transition].target}
    if RULES[transition].records_decider:
        changes.update(decided_by=actor, decided_at=at, reason=reason)
    elif reason is not None:
        changes["reason"] = reason
    return state.model_copy(update=changes)
