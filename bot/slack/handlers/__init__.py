"""The bot's side of an investigation, one module per story: `intake` (files, try again),
`decisions` (approve, reject, edit, answer), `questions` (answers, home), `upkeep` (recovery
reports, the sweep). Listeners acknowledge, parse the payload, and enqueue one job
(`jobs`, see `bot.slack.jobs`) on the queue they were given (`bot.jobs.queue.JobQueue`); the
job calls one handler through the registry `job_runner` makes, which the composition hands to
the queue, and the handler makes the use case's call and shows the result in the thread
through `messages` and the poster.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from slack_sdk import WebClient

from agent.domain import ApproverPolicy
from agent.usecases import UseCases
from bot.jobs.queue import JobQueue
from bot.slack.approvers import ApproverDirectory
from bot.slack.deliveries import Deliveries
from bot.slack.files import SlackFiles
from bot.slack.handlers.decisions import DecisionHandlers
from bot.slack.handlers.intake import IntakeHandlers
from bot.slack.handlers.questions import QuestionHandlers
from bot.slack.handlers.upkeep import Upkeep
from bot.slack.jobs import Enqueue, JobRunner, JobTargets
from bot.slack.poster import ThreadPoster
from bot.slack.request_messages import RequestMessages
from bot.slack.work import BotWork

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HandlerSettings:
    """How the bot runs its work: pool size, how often it sweeps, how long an upload's
    delivery is held by the process working on it before another may resume it, and whether
    a dead process of this host is recognised by its pid and this process sweeps (the
    embedded queue; not with the PostgreSQL queue: it re-runs the jobs of a worker that
    stopped, and workers sweep)."""

    workers: int = 4
    expiry_sweep_seconds: float = 30.0
    delivery_hold: timedelta = timedelta(minutes=15)
    local_owners: bool = True


@dataclass(frozen=True)
class Handlers:
    """Every handler, wired to the same executor, queue, poster and request messages."""

    work: BotWork
    queue: JobQueue
    jobs: Enqueue
    messages: RequestMessages
    intake: IntakeHandlers
    decisions: DecisionHandlers
    questions: QuestionHandlers
    upkeep: Upkeep
    sweeps: bool = True

    def start(self) -> None:
        """Start background work: recovery reports, then the sweep (for the embedded queue;
        with PostgreSQL, the workers sweep)."""
        if self.sweeps:
            self.upkeep.start()

    def close(self) -> None:
        """Stop sweeping and finish the work already started."""
        self.upkeep.stop()
        self.queue.close()
        self.work.close()


def build_handlers(
    service: UseCases,
    deliveries: Deliveries,
    client: WebClient,
    files: SlackFiles,
    approver_policy: ApproverPolicy,
    settings: HandlerSettings,
    work: BotWork,
    queue: JobQueue,
) -> Handlers:
    """The handlers of the bot over `service`, talking to Slack through `client`, running on
    `work`'s lanes and enqueueing on `queue`."""
    poster = ThreadPoster(client)
    messages = RequestMessages(poster, deliveries, service.queries)

    def unqueued(channel: str, thread_ts: str | None, what: str) -> None:
        """A job the queue refused: logged with its traceback on the listener's thread, told
        in the thread from the decision lane (the ack never waits on Slack)."""
        ref = messages.log_internal_error(what)
        try:
            work.decide(messages.post_internal_error, channel, thread_ts, ref)
        except RuntimeError:  # the lanes are closed: the bot is stopping
            logger.warning("ref=%s | not told in the thread: the bot is stopping", ref)

    jobs = Enqueue(queue, unqueued)
    intake = IntakeHandlers(service, files, deliveries, work, poster, messages)
    return Handlers(
        work=work,
        queue=queue,
        jobs=jobs,
        messages=messages,
        intake=intake,
        decisions=DecisionHandlers(
            service, ApproverDirectory(client, approver_policy), work, poster, messages, client
        ),
        questions=QuestionHandlers(service, work, poster, messages, client),
        upkeep=Upkeep(
            service,
            deliveries,
            work,
            poster,
            messages,
            jobs.files_shared,
            sweep_seconds=settings.expiry_sweep_seconds,
            hold=settings.delivery_hold,
            local_owners=settings.local_owners,
        ),
        sweeps=settings.local_owners,
    )


def job_runner(handlers: Handlers) -> JobRunner:
    """What runs the jobs: each job's handler call, for the queue's workers (the registry the
    composition hands to the queue)."""
    return JobRunner(
        JobTargets(
            files_shared=handlers.intake.files_shared,
            investigate_again=handlers.intake.investigate_again,
            question=handlers.questions.question,
            publish_home=handlers.questions.publish_home,
            approve=handlers.decisions.approve,
            answer=handlers.decisions.answer,
            reject=handlers.decisions.reject,
            edit=handlers.decisions.edit,
            propose_policy=handlers.decisions.propose_policy,
            sweep=handlers.upkeep.sweep,
            recover_claims=handlers.upkeep.recover_claims,
        )
    )
