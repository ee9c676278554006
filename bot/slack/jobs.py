"""The Slack bot's jobs: each a name, the lane it runs on, and the handler call it makes.

Listeners enqueue through `Enqueue` (typed values in, JSON out) on any `JobQueue`; workers run a
job by name through `JobRunner` (JSON in, the handler's typed call out), over the `JobTargets`
set at composition (`bot.slack.handlers.job_runner`), so this module knows the handlers' calls,
not the handlers. Everything a job needs travels in its arguments, so any worker of any host
can run it, and a retried job does the same thing.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agent.data.schema import Role
from bot.jobs.queue import SWEEP, Attempt, JobQueue, Lane, thread_lock
from bot.slack.payloads import ButtonValue, ClarificationAnswer, Click, ModalMetadata

logger = logging.getLogger(__name__)

FILES_SHARED = "files_shared"
INVESTIGATE_AGAIN = "investigate_again"
QUESTION = "question"
PUBLISH_HOME = "publish_home"
APPROVE = "approve"
ANSWER = "answer"
REJECT = "reject"
EDIT = "edit"
PROPOSE_POLICY = "propose_policy"

LANES = {
    FILES_SHARED: Lane.WORK,
    INVESTIGATE_AGAIN: Lane.WORK,
    QUESTION: Lane.WORK,
    PUBLISH_HOME: Lane.WORK,
    SWEEP: Lane.WORK,
    APPROVE: Lane.DECISIONS,
    ANSWER: Lane.DECISIONS,
    REJECT: Lane.DECISIONS,
    EDIT: Lane.DECISIONS,
    PROPOSE_POLICY: Lane.WORK,
}


def _click(value: dict[str, Any]) -> Click:
    return Click(**value)


class Enqueue:
    """What the listeners call: one method per job, each putting it on its lane with the lock
    of the case's thread (and, for an upload, its Slack event id so it is enqueued once).

    A job the queue refuses (the database is down) is not lost in the log: `unqueued` is told
    the thread, so the person hears their click or question was not taken. An upload is the
    exception: its delivery is kept until answered, and the sweep enqueues it again."""

    def __init__(
        self, queue: JobQueue, unqueued: Callable[[str, str | None, str], None] | None = None
    ) -> None:
        self.queue = queue
        self.unqueued = unqueued

    def _put(
        self,
        name: str,
        args: dict[str, Any],
        channel: str | None,
        thread_ts: str | None,
        *,
        once: str | None = None,
    ) -> None:
        lock = thread_lock(channel, thread_ts) if channel else None
        try:
            self.queue.enqueue(name, args, lane=LANES[name], lock=lock, once=once)
        except Exception:
            if name == FILES_SHARED or channel is None or self.unqueued is None:
                logger.exception("job=%s | not enqueued", name)
                return
            self.unqueued(channel, thread_ts, f"enqueue {name}")

    def files_shared(self, event: dict[str, Any], delivery_id: str | None) -> None:
        """A message with files (resumable by its delivery id)."""
        self._put(
            FILES_SHARED,
            {"event": event, "delivery_id": delivery_id},
            event.get("channel"),
            event.get("thread_ts") or event.get("ts"),
            once=f"event:{delivery_id}" if delivery_id else None,
        )

    def investigate_again(self, click: Click) -> None:
        """ "Try again" after the model could not take its turn."""
        args = {"click": dataclasses.asdict(click)}
        self._put(INVESTIGATE_AGAIN, args, click.channel, click.thread_ts)

    def question(self, event: dict[str, Any], text: str) -> None:
        """A question in an investigation's thread."""
        thread = event.get("thread_ts") or event.get("ts")
        self._put(QUESTION, {"event": event, "text": text}, event.get("channel"), thread)

    def publish_home(self, user: str) -> None:
        """The App Home tab of `user` (once while one is waiting)."""
        self._put(PUBLISH_HOME, {"user": user}, None, None, once=f"home:{user}")

    def approve(self, click: Click, button: ButtonValue) -> None:
        """Approve or Retry: the guard, then the reconciliation for the winner."""
        args = {"click": dataclasses.asdict(click), "button": button.encode()}
        self._put(APPROVE, args, click.channel, click.thread_ts)

    def answer(self, click: Click, answer: ClarificationAnswer) -> None:
        """A clarification's answer (an edit of one field)."""
        args = {
            "click": dataclasses.asdict(click),
            "button": answer.button.encode(),
            "role": answer.role.value,
            "field": answer.field,
            "column": answer.column,
        }
        self._put(ANSWER, args, click.channel, click.thread_ts)

    def reject(self, metadata: ModalMetadata, user: str, reason: str) -> None:
        """Reject with the modal's reason."""
        args = {"metadata": metadata.encode(), "user": user, "reason": reason}
        self._put(REJECT, args, metadata.channel, metadata.thread_ts or None)

    def edit(self, metadata: ModalMetadata, user: str, changed: dict[str, str]) -> None:
        """An edited mapping from the modal."""
        args = {"metadata": metadata.encode(), "user": user, "changed": changed}
        self._put(EDIT, args, metadata.channel, metadata.thread_ts or None)

    def propose_policy(
        self, channel: str, user: str, changes: dict[str, str], team: str | None = None
    ) -> None:
        """A change to a channel's policy, proposed with `/recon policy` (its Slack workspace:
        `team`, which the request's origin check compares)."""
        args = {"channel": channel, "user": user, "changes": changes, "team": team}
        self._put(PROPOSE_POLICY, args, channel, None)


class FilesShared(Protocol):
    """The handler of an upload: the event, its delivery id, which run this is."""

    def __call__(
        self, event: dict[str, Any], delivery_id: str | None = None, *, attempt: Attempt = ...
    ) -> None:
        """Work on the upload `event`."""
        ...


class Approve(Protocol):
    """The handler of an Approve (or Retry) click, told which run this is."""

    def __call__(self, click: Click, button: ButtonValue, *, attempt: Attempt = ...) -> None:
        """Decide the click."""
        ...


@dataclass(frozen=True)
class JobTargets:
    """The handler call each job makes: the registry a `JobRunner` runs, set at composition."""

    files_shared: FilesShared
    investigate_again: Callable[[Click], None]
    question: Callable[[dict[str, Any], str], None]
    publish_home: Callable[[str], None]
    approve: Approve
    answer: Callable[[Click, ClarificationAnswer], None]
    reject: Callable[[ModalMetadata, str, str], None]
    edit: Callable[[ModalMetadata, str, dict[str, str]], None]
    propose_policy: Callable[[str, str, dict[str, str], str | None], None]
    sweep: Callable[[], object]
    recover_claims: Callable[[], None]


class JobRunner:
    """Runs a job by name on its target: the one place JSON becomes typed values."""

    def __init__(self, targets: JobTargets) -> None:
        self.targets = targets
        self._jobs: dict[str, Callable[[dict[str, Any], Attempt], None]] = {
            FILES_SHARED: self._files_shared,
            INVESTIGATE_AGAIN: lambda a, _: targets.investigate_again(_click(a["click"])),
            QUESTION: lambda a, _: targets.question(a["event"], a["text"]),
            PUBLISH_HOME: lambda a, _: targets.publish_home(a["user"]),
            APPROVE: self._approve,
            ANSWER: self._answer,
            REJECT: lambda a, _: targets.reject(
                ModalMetadata.decode(a["metadata"]), a["user"], a["reason"]
            ),
            EDIT: lambda a, _: targets.edit(
                ModalMetadata.decode(a["metadata"]), a["user"], dict(a["changed"])
            ),
            PROPOSE_POLICY: lambda a, _: targets.propose_policy(
                a["channel"], a["user"], dict(a["changes"]), a.get("team")
            ),
            SWEEP: lambda _a, _: self._sweep(),
        }

    @property
    def names(self) -> list[str]:
        """Every job's name."""
        return list(self._jobs)

    def run(self, name: str, args: dict[str, Any], attempt: Attempt) -> None:
        """Run job `name`; what it raises is for the queue to retry or record."""
        self._jobs[name](args, attempt)

    def _files_shared(self, args: dict[str, Any], attempt: Attempt) -> None:
        self.targets.files_shared(args["event"], args.get("delivery_id"), attempt=attempt)

    def _approve(self, args: dict[str, Any], attempt: Attempt) -> None:
        self.targets.approve(
            _click(args["click"]), ButtonValue.decode(args["button"]), attempt=attempt
        )

    def _answer(self, args: dict[str, Any], attempt: Attempt) -> None:
        answer = ClarificationAnswer(
            ButtonValue.decode(args["button"]), Role(args["role"]), args["field"], args["column"]
        )
        self.targets.answer(_click(args["click"]), answer)

    def _sweep(self) -> None:
        self.targets.sweep()
        self.targets.recover_claims()
