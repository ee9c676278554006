"""What the bot does by itself: at start, report approvals recovered from a crash; then, every
sweep, expire requests whose time is up, pick up uploads a dead process left unfinished, and
offer to go on with inspections one cut off."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from agent.dependencies import utc_now
from agent.domain import PauseStatus
from agent.usecases import UseCases
from bot.slack import blocks
from bot.slack.deliveries import Deliveries
from bot.slack.poster import ThreadPoster
from bot.slack.request_messages import RequestMessages
from bot.slack.work import BotWork

logger = logging.getLogger(__name__)


class Upkeep:
    """Recovery reports at start-up and the periodic sweep."""

    def __init__(
        self,
        service: UseCases,
        deliveries: Deliveries,
        work: BotWork,
        poster: ThreadPoster,
        messages: RequestMessages,
        resume_upload: Callable[[dict[str, Any], str], None],
        *,
        sweep_seconds: float,
        hold: timedelta,
        local_owners: bool = True,
    ) -> None:
        self.service = service
        self.deliveries = deliveries
        self.work = work
        self.poster = poster
        self.messages = messages
        self.resume_upload = resume_upload
        self.sweep_seconds = sweep_seconds
        self.hold = hold
        self.local_owners = local_owners
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    def start(self) -> None:
        """Report approvals recovered at start-up, then sweep every `sweep_seconds`."""
        self.work.submit(self.recover)
        self._sweeper = threading.Thread(
            target=self._sweep_forever, name="reconbot-expiry", daemon=True
        )
        self._sweeper.start()

    def stop(self) -> None:
        """Stop sweeping."""
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5)

    def sweep(self) -> list[str]:
        """Expire the requests whose time is up and say so on their messages; pick up uploads
        and inspections that a dead process left unfinished. Returns the expired pause ids."""
        now = utc_now()
        for delivery_id, event in self.deliveries.take_unfinished(now, now + self.hold):
            logger.info("event=%s | resuming an upload a stopped process left", delivery_id)
            self.resume_upload(event, delivery_id)  # enqueued: long, not on the sweeper
        expired = self.service.decisions.expire_due()
        for pause_id in expired:
            self.messages.show_latest(pause_id)
        for case in self.service.recovery.find_stalled():
            if case.channel is not None:
                self.poster.post(case.channel, case.thread_ts, blocks.stalled_message(case.id))
        return expired

    def _sweep_forever(self) -> None:
        while not self._stop.wait(self.sweep_seconds):
            try:
                self.sweep()
            except Exception:
                logger.exception("sweep=expiry | failed; trying again later")
            # A claim whose lease ran out (its process died, or could not save its outcome)
            # is re-run without waiting for a restart; long work, so on the executor.
            self.work.submit(self.recover_claims)

    def recover(self) -> None:
        """Finish approvals interrupted by a crash and report them in their threads; offer to
        go on with inspections interrupted by one."""
        self.sweep()
        self.recover_claims()

    def recover_claims(self) -> None:
        """Re-run or fail the approvals whose claim went stale, and report each in its thread."""
        for pause_id in self.service.recovery.recover(local_owners=self.local_owners):
            state = self.service.queries.pause(pause_id)
            if state is None:
                continue
            if state.status is PauseStatus.CONSUMED:
                outcome = self.service.queries.status(state.request.investigation_id).outcome
                if outcome is not None:
                    self.messages.report_outcome(outcome, state, state.decided_by or "reconbot")
            elif state.status is PauseStatus.FAILED:
                self.messages.report_failure(state, blocks.RESTARTED_WHILE_RECONCILING)
