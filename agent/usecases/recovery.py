"""Recovery: what a process that died left half done is finished, or reported failed.

An approval whose process died mid-reconciliation is re-run once under the same pause (the
guard's `RESUME` check: not when the policy changed since). An inspection that died before
its request is reported, for someone to investigate again. Nothing a person uploaded or
decided is lost: both are saved before the work that might die starts.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agent.approval import Action, Facts, check
from agent.dependencies import SYSTEM_ACTOR, Dependencies
from agent.domain import (
    Investigation,
    InvestigationStatus,
    Outcome,
    PauseState,
    PauseStatus,
    Revision,
)
from agent.errors import ApprovalRefusedError, ReconbotError
from agent.pause import Transition
from agent.ports import Claim, UnitOfWork
from agent.usecases.common import current_revision, request_stood
from agent.usecases.decisions import record_refusal
from agent.usecases.resumption import Resumption

logger = logging.getLogger(__name__)

MAX_RECOVERY_ATTEMPTS = 2
STALL_SCAN = 200


@dataclass(frozen=True)
class Finished:
    """What became of an approval whose job run was cut off: the pause as it stands now, the
    outcome (saved before the cut, or by the re-run; None: there is none), and what the re-run
    raised, if it did."""

    state: PauseState
    outcome: Outcome | None
    error: Exception | None = None


class Recovery:
    """Finish or fail interrupted approvals; find interrupted inspections."""

    def __init__(self, deps: Dependencies, resumption: Resumption) -> None:
        self.deps = deps
        self.resumption = resumption

    def recover(self, *, local_owners: bool = True) -> list[str]:
        """At start-up: finish or fail every claim whose process died.

        A claim is taken over when its lease ran out, or (with `local_owners`) when its owner
        was a process of this host that no longer runs. Workers of a job queue pass False:
        the queue re-runs a job whose worker stopped, and two rescuers must not compete.
        The recorded approval is re-run once under the same pause; a claim that was already
        retried is marked failed, with a retry offered. A claim whose request was made under
        another policy version than the one now in force is not re-run: it is marked failed
        with `POLICY_CHANGED` (recorded as a refused decision), and a new request is needed;
        one whose rules are still known (a version put in force in its channel since, or the
        seed) is re-run under them, as the run it replaces would have finished (the claim is
        where the guard decided).
        """
        recovered = []
        now = self.deps.clock.now()
        with self.deps.uow() as uow:
            claims = uow.pauses.claims()
        for pause_id, claim, attempts in claims:
            if not (claim.lease_until <= now or (local_owners and _dead_local_owner(claim.owner))):
                continue
            if self.resumption.running(pause_id):
                continue  # this process is still working on it, past its lease
            taken = self._take_over(pause_id, claim, attempts)
            if taken is None:
                continue  # another process took it over first
            recovered.append(pause_id)
            if taken is False:
                continue  # not to be re-run: marked failed, with a retry offered
            state, revision = taken
            logger.info(
                "pause=%s attempts=%s | re-running an interrupted approval", pause_id, attempts
            )
            try:
                self.resumption.resume(state, revision, state.decided_by or SYSTEM_ACTOR)
            except Exception:
                logger.exception("pause=%s | recovery failed; marked failed", pause_id)
        return recovered

    def finish_interrupted(
        self,
        pause_id: str,
        decider: str,
        *,
        on_rerun: Callable[[PauseState], None] | None = None,
    ) -> Finished | None:
        """What became of the approval of `decider` whose job run was cut off (the job runs
        again): None when that run claimed nothing for them; the outcome it saved before the
        cut; or its claim taken over and re-run at once (`on_rerun` told first), with the error
        if the re-run raised (a failure the pause records; the caller shows it)."""
        with self.deps.uow() as uow:
            state = uow.pauses.get(pause_id)
            saved = uow.outcomes.latest(state.request.investigation_id) if state else None
        if state is None or state.decided_by != decider:
            return None
        if state.status is PauseStatus.CONSUMED:
            found = saved is not None and saved.pause_id == pause_id
            return Finished(state, saved) if found else None
        if state.status is not PauseStatus.CLAIMED:
            return None
        if on_rerun is not None:
            on_rerun(state)
        try:
            outcome = self.resume_interrupted(pause_id)
        except Exception as error:
            if not isinstance(error, ReconbotError):
                logger.exception("pause=%s | re-run failed", pause_id)
            return Finished(self._now(pause_id) or state, None, error)
        return Finished(self._now(pause_id) or state, outcome)

    def _now(self, pause_id: str) -> PauseState | None:
        with self.deps.uow() as uow:
            return uow.pauses.get(pause_id)

    def resume_interrupted(self, pause_id: str) -> Outcome | None:
        """Finish an approval whose run was cut off, at once: the job queue has seen its worker
        stop (no heartbeat), so there is no lease to wait for. Its claim is taken over and the
        recorded approval re-run, as at start-up (`recover`): once, not under a changed policy.

        Returns the outcome; None when there is nothing to finish here (the pause is not
        claimed, this process runs it, another took it over) or when it was marked failed
        instead (read the pause to tell). Raises what the re-run raised (it is then failed).
        """
        if self.resumption.running(pause_id):
            return None
        with self.deps.uow() as uow:
            claims = uow.pauses.claims()
        found = next(((claim, n) for pid, claim, n in claims if pid == pause_id), None)
        if found is None:
            return None
        taken = self._take_over(pause_id, *found)
        if not taken:
            return None
        state, revision = taken
        logger.info("pause=%s | re-running an approval whose run was cut off", pause_id)
        return self.resumption.resume(state, revision, state.decided_by or SYSTEM_ACTOR)

    def _take_over(
        self, pause_id: str, claim: Claim, attempts: int
    ) -> tuple[PauseState, Revision] | Literal[False] | None:
        """Take the stale claim over; return what to re-run, False when it was marked failed
        instead (policy changed, or retried too often), None when another process took it."""
        now = self.deps.clock.now()
        new_claim = Claim(self.deps.owner, now + self.deps.settings.claim_lease)
        failed = None
        with self.deps.uow() as uow:
            if not uow.pauses.apply(
                pause_id,
                Transition.TAKE_OVER,
                actor=self.deps.owner,
                at=now,
                claim=new_claim,
                owner=claim.owner,
            ):
                return None
            state = uow.pauses.get(pause_id)
            assert state is not None
            investigation_id = state.request.investigation_id
            revision = current_revision(uow, investigation_id)
            try:
                check(
                    Action.RESUME,
                    state,
                    pause_id=pause_id,
                    facts=Facts(now, self._rules_version(state, uow)),
                )
            except ApprovalRefusedError as error:
                logger.warning("pause=%s | not re-run: %s", pause_id, error)
                record_refusal(uow, state, pause_id, Action.RESUME, SYSTEM_ACTOR, now, error)
                failed = str(error)
            else:
                if attempts >= MAX_RECOVERY_ATTEMPTS:
                    failed = ""
                else:
                    uow.investigations.set_status(
                        investigation_id, InvestigationStatus.RECONCILING, actor=SYSTEM_ACTOR
                    )
        if failed is not None:
            if failed:
                self.resumption.fail(investigation_id, pause_id, reason=failed)
            else:
                self.resumption.fail(investigation_id, pause_id)
            return False
        return state, revision

    def find_stalled(self) -> list[Investigation]:
        """Investigations whose inspection stopped without a request: the process died in
        the middle of the agent's turn. The files are stored; each such case is marked failed
        (so it is reported once) and returned, for someone to investigate it again."""
        cutoff = self.deps.clock.now() - self.deps.settings.claim_lease
        waiting = (InvestigationStatus.AWAITING_FILE, InvestigationStatus.AWAITING_DECISION)
        stalled = []
        with self.deps.uow() as uow:
            for investigation in uow.investigations.recent(limit=STALL_SCAN):
                if investigation.status not in waiting:
                    continue
                revision = current_revision(uow, investigation.id)
                if not revision.complete:
                    continue
                # Stalled: no request of the current revision stands (none was made, or an
                # edit closed the last one and its turn never ended), and nothing happened on
                # the case for a whole lease.
                if request_stood(uow.pauses.of_investigation(investigation.id), revision):
                    continue
                decided = [d.at for d in uow.decisions.of_investigation(investigation.id)]
                if max([revision.created_at, *decided]) > cutoff:
                    continue
                if not uow.investigations.set_status(
                    investigation.id,
                    InvestigationStatus.FAILED,
                    actor=SYSTEM_ACTOR,
                    only_from=waiting,
                ):
                    continue  # another process reported it first
                logger.warning(
                    "investigation=%s revision=%s | inspection never finished; marked failed",
                    investigation.id,
                    revision.number,
                )
                stalled.append(investigation)
        return stalled

    def _rules_version(self, state: PauseState, uow: UnitOfWork) -> str:
        """The policy version a claim is re-run under: its request's while those rules are
        known in its channel (a change approved after the claim does not undo it), else the
        version in force (which the guard then refuses: `POLICY_CHANGED`)."""
        request = state.request
        if self.deps.policy_of_version(request.channel, request.policy_version, uow):
            return request.policy_version
        return self.deps.policy_for(request.channel, uow).version


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
