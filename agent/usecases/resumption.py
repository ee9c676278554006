"""The resumed phase: with a claim held, the agent reconciles under the approved mapping.

The approval is bound into the turn's context (`BoundContext`): the reconcile tool uses that
mapping, those inputs and that policy version, or nothing. The turn reads the rules of the
version the request was approved under, even when a change of the channel's policy was approved
after the claim (the claim is where the guard decided). The outcome is saved and the pause
consumed in one unit of work, only while this process still holds the claim; a failed phase
marks the pause failed (approve again to retry) and the case failed.
"""

from __future__ import annotations

import logging
import threading

from agent.dependencies import SYSTEM_ACTOR, Dependencies
from agent.domain import InvestigationStatus, Outcome, PauseState, RefusalReason, Revision
from agent.errors import ApprovalRefusedError, WorkflowError
from agent.pause import Transition
from agent.ports import Claim
from agent.runtime.context import BoundContext
from agent.runtime.prompts import resume_prompt
from agent.runtime.turns import AgentTurns

logger = logging.getLogger(__name__)

RETRY_REASON = "the resumed phase failed; approve again to retry"


class Resumption:
    """Runs the resumed phase of a claimed pause and settles it: consumed or failed."""

    def __init__(self, deps: Dependencies, turns: AgentTurns) -> None:
        self.deps = deps
        self.turns = turns
        self._running: set[str] = set()
        self._running_guard = threading.Lock()

    def hold(self, pause_id: str) -> None:
        """Mark a claim of this process as in flight: from its claim until it is settled,
        recovery in this process leaves it alone, however long it runs past its lease."""
        with self._running_guard:
            self._running.add(pause_id)

    def release(self, pause_id: str) -> None:
        """The claim is settled (consumed, failed, or given up)."""
        with self._running_guard:
            self._running.discard(pause_id)

    def running(self, pause_id: str) -> bool:
        """Whether this process is working on the claim now."""
        with self._running_guard:
            return pause_id in self._running

    def resume(self, state: PauseState, revision: Revision, actor: str) -> Outcome:
        """Reconcile under the approval of `state` (claimed by this process) and save the
        outcome; raises what the phase raised after marking the pause failed.

        The claim's lease is renewed while the phase runs, so a reconciliation longer than
        the lease is never taken over by another process while this one still works on it."""
        pause_id = state.request.pause_id
        self.hold(pause_id)
        done = threading.Event()
        keeper = threading.Thread(
            target=self._keep_lease, args=(pause_id, done), name=f"lease-{pause_id}", daemon=True
        )
        keeper.start()
        try:
            return self._resume(state, revision, actor)
        finally:
            done.set()
            keeper.join(timeout=5)
            self.release(pause_id)

    def _keep_lease(self, pause_id: str, done: threading.Event) -> None:
        """Renew the claim's lease every third of a lease until `done` (or the claim is lost)."""
        lease = self.deps.settings.claim_lease
        while not done.wait(max(1.0, lease.total_seconds() / 3)):
            now = self.deps.clock.now()
            try:
                with self.deps.uow() as uow:
                    kept = uow.pauses.apply(
                        pause_id,
                        Transition.RENEW,
                        actor=self.deps.owner,
                        at=now,
                        claim=Claim(self.deps.owner, now + lease),
                        owner=self.deps.owner,
                    )
            except Exception:
                logger.warning("pause=%s | lease not renewed; trying again", pause_id)
                continue
            if not kept:
                logger.warning("pause=%s | the claim is no longer this process's", pause_id)
                return

    def _resume(self, state: PauseState, revision: Revision, actor: str) -> Outcome:
        request = state.request
        assert request.mapping is not None
        assert request.mapping_digest is not None
        # Under the rules it was approved under: a change of policy approved after this claim
        # was taken does not undo the approval (the guard decided it under those rules).
        approved_under = self.deps.policy_of_version(request.channel, request.policy_version)
        context = self.turns.context(
            request.investigation_id,
            revision,
            "resume",
            channel=request.channel,
            policy=approved_under,
        )
        context.bound = BoundContext(
            pause_id=request.pause_id,
            mapping=request.mapping,
            mapping_digest=request.mapping_digest,
            input_identity=request.input_identity,
            files={ref.role: ref for ref in request.files},
            policy_version=request.policy_version,
        )
        try:
            report = self.turns.invoke(
                context, resume_prompt(actor, request.mapping_digest, request.revision)
            )
            result = context.result
            if result is None:
                raise WorkflowError("The reconciliation did not run: " + (report or "no report."))
        except Exception:
            logger.exception(
                "investigation=%s pause=%s | resumed phase failed",
                request.investigation_id,
                request.pause_id,
            )
            self.fail(request.investigation_id, request.pause_id)
            raise
        outcome = Outcome(
            investigation_id=request.investigation_id,
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
            created_at=self.deps.clock.now(),
        )
        with self.deps.uow() as uow:
            if not uow.pauses.apply(
                request.pause_id,
                Transition.CONSUME,
                actor=self.deps.owner,
                at=outcome.created_at,
                owner=self.deps.owner,
            ):
                raise ApprovalRefusedError(
                    RefusalReason.ALREADY_CONSUMED,
                    "Another process took this reconciliation over (this one was presumed "
                    "stopped); its result stands.",
                    state=state,
                )
            uow.outcomes.add(outcome)
            uow.investigations.set_status(
                request.investigation_id, InvestigationStatus.COMPLETED, actor=self.deps.owner
            )
        return outcome

    def fail(self, investigation_id: str, pause_id: str, reason: str = RETRY_REASON) -> bool:
        """Mark a pause this process claimed failed (a retry is offered) and its case failed;
        False if the claim was no longer this process's."""
        with self.deps.uow() as uow:
            if uow.pauses.apply(
                pause_id,
                Transition.FAIL,
                actor=SYSTEM_ACTOR,
                at=self.deps.clock.now(),
                reason=reason,
                owner=self.deps.owner,
            ):
                uow.investigations.set_status(
                    investigation_id, InvestigationStatus.FAILED, actor=SYSTEM_ACTOR
                )
                return True
        return False
