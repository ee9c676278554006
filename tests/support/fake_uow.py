"""An in-memory unit of work (`agent.ports.UnitOfWorkFactory`) for unit tests of the use cases.

Faithful to the ports' contract, as `storage.unit_of_work` implements it on SQL:

- `with factory() as uow:` takes a store-wide lock for the whole unit (like SQLite's
  `BEGIN IMMEDIATE`: units run one at a time, so `pauses.lock` means what it says) and works on
  a deep copy of the committed store; the unit sees its own writes.
- Leaving the block normally commits (the working copy becomes the committed store); an
  exception rolls back everything written in the block (the copy is dropped).
- `investigations.add` keeps one investigation per chat thread (a unique index in SQL): a
  second for the same (channel, thread_ts) writes nothing and returns False.
- `pauses.apply` persists a transition of `agent.pause.RULES` as a compare-and-set: from the
  rule's sources only, owner-only rules only for the stored claim's owner; claiming rules set
  the owner and lease and count an attempt. Repositories append the matching audit entries.

What a test can read without opening a unit of work (which would add to the log):
`factory.store` (the committed state), `factory.commits`, `factory.rollbacks`, and
`factory.log`: one `UnitRecord` per unit of work, in the order they began, with whether it
committed, how many times it read a pause (`get`/`lock`) and the writes it made. A test can make
the next call of a repository method raise once: `factory.fail_once("outcomes.add", error)`.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agent.channel_policy import PolicyRecord
from agent.domain import (
    ApprovalRequest,
    Decision,
    Investigation,
    InvestigationStatus,
    Outcome,
    PauseState,
    PauseStatus,
    Revision,
    ToolExecution,
)
from agent.errors import PolicyConflictError
from agent.pause import OPEN_STATUSES, RULES, Transition
from agent.pause import apply as apply_transition
from agent.ports import (
    AuditLog,
    Claim,
    ConversationRepository,
    DecisionRepository,
    InvestigationRepository,
    OutcomeRepository,
    PauseRepository,
    PolicyRepository,
    TraceRepository,
    UnitOfWorkFactory,
)

SYSTEM_ACTOR = "reconbot"
"""Who the audit log names for an outcome (`OutcomeRepository.add` names no actor)."""

_NO_LEASE = datetime.min.replace(tzinfo=UTC)


@dataclass
class StoredPause:
    """A pause as stored: its state, and the claim bookkeeping the state does not show."""

    state: PauseState
    claim_owner: str | None = None
    lease_until: datetime | None = None
    attempts: int = 0


@dataclass
class MemoryStore:
    """Everything saved. The committed one lives in the factory; each unit works on a copy."""

    investigations: dict[str, Investigation] = field(default_factory=dict)
    revisions: dict[str, list[Revision]] = field(default_factory=dict)
    pauses: dict[str, StoredPause] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    traces: list[ToolExecution] = field(default_factory=list)
    conversations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    policies: list[PolicyRecord] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class UnitRecord:
    """What one unit of work did: committed (None while open), pause reads, writes in order.

    Writes are named `<repository>.<what>`: `investigations.add`, `investigations.add_revision`,
    `investigations.status:<status>`, `pauses.add`, `pauses.<transition>`,
    `decisions.<action>:accepted` or `decisions.<action>:<REFUSAL>`, `outcomes.add`,
    `traces.add`, `conversations.append`, `audit.<event>` (an entry appended directly). A
    conditional change that found nothing to change (it returned False) is not a write.
    """

    committed: bool | None = None
    pause_reads: int = 0
    pause_locks: int = 0
    writes: list[str] = field(default_factory=list)
    thread: str = field(default_factory=lambda: threading.current_thread().name)


class MemoryUnitOfWorkFactory:
    """Opens in-memory units of work over one committed store (`UnitOfWorkFactory`)."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.log: list[UnitRecord] = []
        self.commits = 0
        self.rollbacks = 0
        self._lock = threading.Lock()
        self._holder: int | None = None
        self._failures: dict[str, list[BaseException]] = {}

    def __call__(self) -> MemoryUnitOfWork:
        """A new unit of work, not yet begun."""
        return MemoryUnitOfWork(self)

    def fail_once(self, method: str, error: BaseException) -> None:
        """Make the next call of `method` (e.g. `"outcomes.add"`) raise `error`, in any unit."""
        self._failures.setdefault(method, []).append(error)

    def since(self, mark: int) -> list[UnitRecord]:
        """The units of work begun after `mark` (a length of `log` taken earlier)."""
        return self.log[mark:]

    # -- used by the units of work --------------------------------------------------------------

    def _begin(self) -> None:
        if self._holder == threading.get_ident():
            raise RuntimeError(
                "a unit of work is already open in this thread; nesting one would deadlock "
                "(on SQLite: 'database is locked')"
            )
        self._lock.acquire()
        self._holder = threading.get_ident()

    def _end(self) -> None:
        self._holder = None
        self._lock.release()

    def _maybe_fail(self, method: str) -> None:
        queued = self._failures.get(method)
        if queued:
            raise queued.pop(0)


class MemoryUnitOfWork:
    """One transaction over the in-memory store (`agent.ports.UnitOfWork`); not re-entrant."""

    # Typed as the ports' protocols: their attributes are settable, so mypy matches them exactly.
    investigations: InvestigationRepository
    pauses: PauseRepository
    decisions: DecisionRepository
    outcomes: OutcomeRepository
    traces: TraceRepository
    conversations: ConversationRepository
    policies: PolicyRepository
    audit: AuditLog

    def __init__(self, factory: MemoryUnitOfWorkFactory) -> None:
        self._factory = factory
        self._work: MemoryStore | None = None
        self.record: UnitRecord | None = None

    def __enter__(self) -> MemoryUnitOfWork:
        """Take the store's lock, copy the committed store and build the repositories on it."""
        if self._work is not None:
            raise RuntimeError("this unit of work is already in a transaction")
        self._factory._begin()
        try:
            self._work = copy.deepcopy(self._factory.store)
        except BaseException:
            self._factory._end()
            raise
        self.record = UnitRecord()
        self._factory.log.append(self.record)
        audit = MemoryAuditLog(self)
        self.audit = audit
        self.investigations = MemoryInvestigationRepository(self, audit)
        self.pauses = MemoryPauseRepository(self, audit)
        self.decisions = MemoryDecisionRepository(self, audit)
        self.outcomes = MemoryOutcomeRepository(self, audit)
        self.traces = MemoryTraceRepository(self)
        self.conversations = MemoryConversationRepository(self)
        self.policies = MemoryPolicyRepository(self, audit)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Commit if the block ended normally, roll back if it raised; release the lock."""
        work, record = self._work, self.record
        if work is None or record is None:
            return
        self._work = None
        try:
            if exc_type is None:
                self._factory.store = work
                self._factory.commits += 1
                record.committed = True
            else:
                self._factory.rollbacks += 1
                record.committed = False
        finally:
            self._factory._end()

    # -- used by the repositories ---------------------------------------------------------------

    @property
    def work(self) -> MemoryStore:
        """The unit's working copy of the store."""
        if self._work is None:
            raise RuntimeError("the unit of work is not open (use it inside its `with` block)")
        return self._work

    def call(self, method: str) -> MemoryStore:
        """Enter a repository method: the working store, after any failure a test asked for."""
        work = self.work
        self._factory._maybe_fail(method)
        return work

    def wrote(self, what: str) -> None:
        assert self.record is not None
        self.record.writes.append(what)

    def read_pause(self, *, lock: bool) -> None:
        assert self.record is not None
        self.record.pause_reads += 1
        if lock:
            self.record.pause_locks += 1


class MemoryAuditLog:
    """The audit log as a list (`agent.ports.AuditLog`); no hashes, so nothing to break."""

    def __init__(self, uow: MemoryUnitOfWork) -> None:
        self._uow = uow

    def append(
        self,
        event: str,
        *,
        actor: str,
        investigation_id: str | None = None,
        pause_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append an entry (a write of its own when called directly)."""
        self._uow.call("audit.append")
        self.record(event, actor, investigation_id, pause_id, detail)
        self._uow.wrote(f"audit.{event}")

    def record(
        self,
        event: str,
        actor: str,
        investigation_id: str | None,
        pause_id: str | None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append the entry a repository's change comes with."""
        entries = self._uow.work.audit
        entries.append(
            {
                "seq": len(entries) + 1,
                "event": event,
                "actor": actor,
                "investigation_id": investigation_id,
                "pause_id": pause_id,
                "detail": copy.deepcopy(detail or {}),
            }
        )

    def verify(self) -> tuple[int, int | None]:
        """(entries, None): a list has no chain to break."""
        return len(self._uow.call("audit.verify").audit), None

    def entries(self, investigation_id: str) -> Iterator[dict[str, Any]]:
        """The entries of an investigation, in order (this unit's included)."""
        work = self._uow.call("audit.entries")
        return iter(
            [copy.deepcopy(e) for e in work.audit if e["investigation_id"] == investigation_id]
        )


class MemoryInvestigationRepository:
    """Investigations and their revisions (`agent.ports.InvestigationRepository`)."""

    def __init__(self, uow: MemoryUnitOfWork, audit: MemoryAuditLog) -> None:
        self._uow = uow
        self._audit = audit

    def add(self, investigation: Investigation, revision: Revision) -> bool:
        """Save a new investigation with its first revision; a known id raises ValueError.
        False, and nothing written, when its chat thread has one already (a unique index in
        SQL: one investigation per thread; rows without a thread are not concerned)."""
        work = self._uow.call("investigations.add")
        if investigation.id in work.investigations:
            raise ValueError(f"investigation {investigation.id} exists already")
        thread = (investigation.channel, investigation.thread_ts)
        if None not in thread and any(
            (i.channel, i.thread_ts) == thread for i in work.investigations.values()
        ):
            return False
        work.investigations[investigation.id] = investigation.model_copy(
            update={"revision": revision.number}
        )
        work.revisions[investigation.id] = [revision]
        self._audit.record(
            "investigation_started",
            investigation.requested_by,
            investigation.id,
            None,
            {"revision": revision.number},
        )
        self._uow.wrote("investigations.add")
        return True

    def get(self, investigation_id: str) -> Investigation | None:
        """The investigation, or None."""
        return self._uow.call("investigations.get").investigations.get(investigation_id)

    def set_status(
        self,
        investigation_id: str,
        status: InvestigationStatus,
        *,
        actor: str,
        only_from: tuple[InvestigationStatus, ...] = (),
    ) -> bool:
        """Set the status (only from `only_from`, when given); True if it changed."""
        work = self._uow.call("investigations.set_status")
        current = work.investigations.get(investigation_id)
        if current is None or (only_from and current.status not in only_from):
            return False
        work.investigations[investigation_id] = current.model_copy(update={"status": status})
        self._audit.record(
            "investigation_status", actor, investigation_id, None, {"status": status.value}
        )
        self._uow.wrote(f"investigations.status:{status.value}")
        return True

    def add_revision(self, revision: Revision, *, actor: str) -> None:
        """Make `revision` the current one; an unknown case or a taken number raises."""
        work = self._uow.call("investigations.add_revision")
        current = work.investigations.get(revision.investigation_id)
        if current is None:
            raise ValueError(f"no investigation {revision.investigation_id}")
        revisions = work.revisions[revision.investigation_id]
        if any(r.number == revision.number for r in revisions):
            raise ValueError(f"revision {revision.number} exists already")
        revisions.append(revision)
        work.investigations[revision.investigation_id] = current.model_copy(
            update={"revision": revision.number}
        )
        self._audit.record(
            "revision_added",
            actor,
            revision.investigation_id,
            None,
            {"revision": revision.number},
        )
        self._uow.wrote("investigations.add_revision")

    def revisions(self, investigation_id: str) -> list[Revision]:
        """All revisions, oldest first."""
        work = self._uow.call("investigations.revisions")
        return sorted(work.revisions.get(investigation_id, []), key=lambda r: r.number)

    def recent(self, *, channel: str | None = None, limit: int = 20) -> list[Investigation]:
        """Recent investigations, newest first, optionally of one channel."""
        work = self._uow.call("investigations.recent")
        found = [i for i in work.investigations.values() if channel is None or i.channel == channel]
        newest_first = list(reversed(found))  # among equal times, the later saved first
        return sorted(newest_first, key=lambda i: i.created_at, reverse=True)[:limit]

    def by_thread(self, channel: str, thread_ts: str) -> Investigation | None:
        """The investigation anchored on a chat thread (there is at most one), or None."""
        found = [
            i
            for i in self.recent(limit=len(self._uow.work.investigations))
            if i.channel == channel and i.thread_ts == thread_ts
        ]
        return found[0] if found else None


class MemoryPauseRepository:
    """Pauses and their lifecycle (`agent.ports.PauseRepository`)."""

    def __init__(self, uow: MemoryUnitOfWork, audit: MemoryAuditLog) -> None:
        self._uow = uow
        self._audit = audit

    def add(self, request: ApprovalRequest) -> None:
        """Save the snapshot as a new pending pause; a known id raises ValueError."""
        work = self._uow.call("pauses.add")
        if request.pause_id in work.pauses:
            raise ValueError(f"pause {request.pause_id} exists already")
        work.pauses[request.pause_id] = StoredPause(
            PauseState(request=request, status=PauseStatus.PENDING)
        )
        self._audit.record(
            "pause_recorded",
            request.requested_by,
            request.investigation_id,
            request.pause_id,
            {"kind": request.kind.value, "revision": request.revision},
        )
        self._uow.wrote("pauses.add")

    def get(self, pause_id: str) -> PauseState | None:
        """The pause and its status, or None."""
        work = self._uow.call("pauses.get")
        self._uow.read_pause(lock=False)
        stored = work.pauses.get(pause_id)
        return None if stored is None else stored.state

    def lock(self, pause_id: str) -> PauseState | None:
        """The pause, or None (the whole store is locked for the unit already)."""
        work = self._uow.call("pauses.lock")
        self._uow.read_pause(lock=True)
        stored = work.pauses.get(pause_id)
        return None if stored is None else stored.state

    def of_investigation(self, investigation_id: str) -> list[PauseState]:
        """All pauses of an investigation, oldest first (by creation time, then id)."""
        work = self._uow.call("pauses.of_investigation")
        states = [
            p.state
            for p in work.pauses.values()
            if p.state.request.investigation_id == investigation_id
        ]
        return sorted(states, key=lambda s: (s.request.created_at, s.request.pause_id))

    def open_in_channel(self, channel: str | None) -> list[PauseState]:
        """The pending and failed pauses of a channel's cases, oldest first."""
        work = self._uow.call("pauses.open_in_channel")
        states = [
            p.state
            for p in work.pauses.values()
            if p.state.status in OPEN_STATUSES
            and work.investigations[p.state.request.investigation_id].channel == channel
        ]
        return sorted(states, key=lambda s: (s.request.created_at, s.request.pause_id))

    def apply(
        self,
        pause_id: str,
        transition: Transition,
        *,
        actor: str,
        at: datetime,
        reason: str | None = None,
        claim: Claim | None = None,
        owner: str | None = None,
    ) -> bool:
        """Persist `transition` if its rule allows it from where the pause stands (and, for an
        owner-only rule, `owner` holds the claim); False, and nothing written, if not.

        Raises ValueError when the rule takes a claim or is owner-only and none is given.
        """
        rule = RULES[transition]
        if rule.takes_claim and claim is None:
            raise ValueError(f"{transition.value} takes a claim: pass claim=")
        if rule.owner_only and owner is None:
            raise ValueError(f"only the claim's owner may {transition.value}: pass owner=")
        work = self._uow.call("pauses.apply")
        stored = work.pauses.get(pause_id)
        if stored is None or stored.state.status not in rule.sources:
            return False
        if rule.owner_only and stored.claim_owner != owner:
            return False
        stored.state = apply_transition(stored.state, transition, actor=actor, at=at, reason=reason)
        if rule.takes_claim:
            assert claim is not None
            stored.claim_owner = claim.owner
            stored.lease_until = claim.lease_until
            if rule.counts_attempt:
                stored.attempts += 1
        detail: dict[str, Any] = {"reason": reason} if reason else {}
        if transition is Transition.TAKE_OVER:
            detail["previous_owner"] = owner
        self._audit.record(
            rule.audit_event, actor, stored.state.request.investigation_id, pause_id, detail
        )
        self._uow.wrote(f"pauses.{transition.value}")
        return True

    def claims(self) -> list[tuple[str, Claim, int]]:
        """Claimed pauses with (pause id, claim, attempts), by pause id."""
        work = self._uow.call("pauses.claims")
        return [
            (pause_id, Claim(p.claim_owner or "", p.lease_until or _NO_LEASE), p.attempts)
            for pause_id, p in sorted(work.pauses.items())
            if p.state.status is PauseStatus.CLAIMED
        ]

    def due(self, now: datetime) -> list[str]:
        """Pending pauses whose expiry has passed at `now`, soonest expiry first."""
        work = self._uow.call("pauses.due")
        due = [
            (p.state.request.expires_at, pause_id)
            for pause_id, p in work.pauses.items()
            if p.state.status is PauseStatus.PENDING and p.state.request.expires_at <= now
        ]
        return [pause_id for _, pause_id in sorted(due)]


class MemoryDecisionRepository:
    """Every decision (`agent.ports.DecisionRepository`)."""

    def __init__(self, uow: MemoryUnitOfWork, audit: MemoryAuditLog) -> None:
        self._uow = uow
        self._audit = audit

    def add(self, decision: Decision) -> None:
        """Append a decision, audited as accepted or refused."""
        work = self._uow.call("decisions.add")
        work.decisions.append(decision)
        refusal = decision.refusal.value if decision.refusal else None
        self._audit.record(
            "decision_accepted" if decision.accepted else "decision_refused",
            decision.actor,
            decision.investigation_id or None,
            decision.pause_id,
            {"action": decision.action, "reason": decision.reason, "refusal": refusal},
        )
        self._uow.wrote(f"decisions.{decision.action}:{refusal or 'accepted'}")

    def of_investigation(self, investigation_id: str) -> list[Decision]:
        """All decisions of an investigation, oldest first."""
        work = self._uow.call("decisions.of_investigation")
        return [d for d in work.decisions if d.investigation_id == investigation_id]


class MemoryOutcomeRepository:
    """The results of resumed phases (`agent.ports.OutcomeRepository`)."""

    def __init__(self, uow: MemoryUnitOfWork, audit: MemoryAuditLog) -> None:
        self._uow = uow
        self._audit = audit

    def add(self, outcome: Outcome) -> None:
        """Save an outcome; a pause's second one raises ValueError (a unique key in SQL)."""
        work = self._uow.call("outcomes.add")
        if any(o.pause_id == outcome.pause_id for o in work.outcomes):
            raise ValueError(f"pause {outcome.pause_id} has an outcome already")
        work.outcomes.append(outcome)
        self._audit.record(
            "outcome_saved",
            SYSTEM_ACTOR,
            outcome.investigation_id,
            outcome.pause_id,
            {"counts": dict(outcome.counts)},
        )
        self._uow.wrote("outcomes.add")

    def latest(self, investigation_id: str) -> Outcome | None:
        """The newest outcome of an investigation, or None."""
        work = self._uow.call("outcomes.latest")
        found = [o for o in work.outcomes if o.investigation_id == investigation_id]
        return found[-1] if found else None

    def latest_in_channel(self, channel: str | None) -> Outcome | None:
        """The newest outcome of a channel's cases, or None."""
        work = self._uow.call("outcomes.latest_in_channel")
        found = [
            o for o in work.outcomes if work.investigations[o.investigation_id].channel == channel
        ]
        return max(found, key=lambda o: o.created_at, default=None)


class MemoryTraceRepository:
    """Tool executions (`agent.ports.TraceRepository`)."""

    def __init__(self, uow: MemoryUnitOfWork) -> None:
        self._uow = uow

    def add(self, executions: list[ToolExecution]) -> None:
        """Append the tool executions of one invocation."""
        work = self._uow.call("traces.add")
        if executions:
            work.traces.extend(executions)
            self._uow.wrote("traces.add")

    def of_investigation(self, investigation_id: str) -> list[ToolExecution]:
        """The trace, in order."""
        work = self._uow.call("traces.of_investigation")
        return [e for e in work.traces if e.investigation_id == investigation_id]


class MemoryConversationRepository:
    """The agent's memory (`agent.ports.ConversationRepository`)."""

    def __init__(self, uow: MemoryUnitOfWork) -> None:
        self._uow = uow

    def append(self, investigation_id: str, messages: list[dict[str, Any]]) -> None:
        """Append one invocation's messages (copied: the caller keeps its own list)."""
        work = self._uow.call("conversations.append")
        work.conversations.setdefault(investigation_id, []).extend(copy.deepcopy(messages))
        self._uow.wrote("conversations.append")

    def load(self, investigation_id: str) -> list[dict[str, Any]]:
        """The saved conversation (a copy the caller may change), or an empty one."""
        work = self._uow.call("conversations.load")
        return copy.deepcopy(work.conversations.get(investigation_id, []))


class MemoryPolicyRepository:
    """Each channel's policy versions (`agent.ports.PolicyRepository`)."""

    def __init__(self, uow: MemoryUnitOfWork, audit: MemoryAuditLog) -> None:
        self._uow = uow
        self._audit = audit

    def in_force(self, channel: str) -> PolicyRecord | None:
        """The channel's latest record, or None."""
        found = self.history(channel)
        return found[-1] if found else None

    def history(self, channel: str) -> list[PolicyRecord]:
        """The channel's records, oldest first."""
        work = self._uow.call("policies.history")
        return [record for record in work.policies if record.channel == channel]

    def add(self, record: PolicyRecord, *, after: PolicyRecord | None) -> PolicyRecord:
        """Put `record` in force on top of `after` (audited "policy_in_force"); refused as
        the database refuses it when `after` is no longer the channel's latest."""
        work = self._uow.call("policies.add")
        latest = self.in_force(record.channel)
        if (latest.number if latest else 0) != (after.number if after else 0):
            raise PolicyConflictError(f"The policy of {record.channel} changed meanwhile.")
        record = record.model_copy(update={"number": (after.number if after else 0) + 1})
        work.policies.append(record)
        self._uow.wrote("policies.add")
        self._audit.append(
            "policy_in_force",
            actor=record.by,
            pause_id=record.pause_id,
            detail={"channel": record.channel, "version": record.version, "rules": record.rules},
        )
        return record


if TYPE_CHECKING:
    _factory: UnitOfWorkFactory = MemoryUnitOfWorkFactory()
