"""An Approve job run again after its worker stopped (`attempt.retried`): the handler finishes
the claim the cut-off run held, shows what that run had finished, or decides as on a first run
when that run had claimed nothing. The use cases, Slack and the thread lock are fakes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from types import SimpleNamespace
from typing import Any, cast

import pytest

from agent.domain import PauseKind, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError, ReconbotError
from agent.usecases.recovery import Recovery
from bot.jobs.queue import Attempt
from bot.slack import blocks
from bot.slack.handlers.decisions import DecisionHandlers
from bot.slack.payloads import ButtonValue, Click

PAUSE = "PAUSE-0123456789"
BUTTON = ButtonValue(PAUSE, "sha256:" + "d" * 64)
CLICK = Click("C0FINANCE", "U0ALICE", "1.0", "1.2", BUTTON.encode())
AGAIN = Attempt(number=2, last=False, interrupted=True)
REQUEST = SimpleNamespace(
    investigation_id="INV-1", channel="C0FINANCE", thread_ts="1.0", kind=PauseKind.CONFIRMATION
)


def _state(status: PauseStatus, decided_by: str = "U0ALICE") -> Any:
    return SimpleNamespace(status=status, decided_by=decided_by, request=REQUEST)


class Fakes:
    """The use cases, messages, poster and lanes a `DecisionHandlers` uses, recording calls."""

    def __init__(self, states: list[Any], outcome: Any = None) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.states = states  # what each read of the pause returns, in turn (the last repeats)
        self.outcome = outcome
        self.rerun: Any = None
        self.lock = threading.Lock()
        self.locked_during_rerun = False

    def record(self, name: str) -> Any:
        return lambda *args, **kwargs: self.calls.append((name, args))

    def pause(self, pause_id: str) -> Any:
        self.calls.append(("queries.pause", (pause_id,)))
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]

    def resume_interrupted(self, pause_id: str) -> Any:
        self.calls.append(("recovery.resume_interrupted", (pause_id,)))
        self.locked_during_rerun = self.lock.locked()
        if isinstance(self.rerun, Exception):
            raise self.rerun
        return self.rerun

    def confirm(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(("decisions.confirm", args))
        raise ApprovalRefusedError(RefusalReason.ALREADY_CLAIMED, "claimed")

    @contextmanager
    def uow(self) -> Iterator[Any]:
        yield SimpleNamespace(
            pauses=SimpleNamespace(get=self.pause),
            outcomes=SimpleNamespace(latest=lambda _id: self.outcome),
        )

    def recovery(self) -> Any:
        """The use case that decides what became of a cut-off run (`Recovery`'s own), over
        these fakes: it reads the pause, and re-runs through `resume_interrupted`."""
        fake: Any = SimpleNamespace(
            deps=SimpleNamespace(uow=self.uow), resume_interrupted=self.resume_interrupted
        )
        fake._now = self.pause
        fake.finish_interrupted = partial(Recovery.finish_interrupted, fake)
        return fake

    def handlers(self) -> DecisionHandlers:
        service = SimpleNamespace(
            queries=SimpleNamespace(
                pause=self.pause,
                status=lambda _id: SimpleNamespace(outcome=self.outcome),
            ),
            recovery=self.recovery(),
            decisions=SimpleNamespace(confirm=self.confirm),
        )
        messages = SimpleNamespace(
            report_outcome=self.record("messages.report_outcome"),
            report_failure=self.record("messages.report_failure"),
            refuse=self.record("messages.refuse"),
            show_latest=self.record("messages.show_latest"),
        )
        return DecisionHandlers(
            cast(Any, service),
            cast(Any, SimpleNamespace(approver=lambda user: user)),
            cast(Any, SimpleNamespace(lock=lambda channel, thread_ts: self.lock)),
            cast(Any, SimpleNamespace(post=self.record("poster.post"))),
            cast(Any, messages),
            cast(Any, None),
        )

    def names(self) -> list[str]:
        return [name for name, _ in self.calls if name != "queries.pause"]


def test_a_claim_the_cut_off_run_held_is_re_run_under_the_thread_lock_and_shown() -> None:
    outcome = SimpleNamespace(pause_id=PAUSE)
    consumed = _state(PauseStatus.CONSUMED)
    fakes = Fakes([_state(PauseStatus.CLAIMED), consumed])
    fakes.rerun = outcome
    fakes.handlers().approve(CLICK, BUTTON, attempt=AGAIN)
    assert fakes.names() == [
        "poster.post",
        "recovery.resume_interrupted",
        "messages.report_outcome",
    ]
    assert fakes.calls[1][1][2] == blocks.picked_up_note("the reconciliation", 2)
    assert fakes.locked_during_rerun and not fakes.lock.locked()
    assert fakes.calls[-1][1] == (outcome, consumed, "U0ALICE")


def test_an_approval_finished_before_the_cut_is_shown_and_not_run_again() -> None:
    outcome = SimpleNamespace(pause_id=PAUSE)
    consumed = _state(PauseStatus.CONSUMED)
    fakes = Fakes([consumed], outcome)
    fakes.handlers().approve(CLICK, BUTTON, attempt=AGAIN)
    assert fakes.names() == ["messages.report_outcome"]
    assert fakes.calls[-1][1] == (outcome, consumed, "U0ALICE")


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (ReconbotError("the file store is down"), "the file store is down"),
        (RuntimeError("boom"), blocks.INTERNAL_FAILURE),
        (None, blocks.RESTARTED_WHILE_RECONCILING),
    ],
    ids=["said", "internal", "marked failed"],
)
def test_a_re_run_that_failed_shows_the_failure_with_its_words(
    error: Exception | None, words: str
) -> None:
    failed = _state(PauseStatus.FAILED)
    fakes = Fakes([_state(PauseStatus.CLAIMED), failed])
    fakes.rerun = error
    fakes.handlers().approve(CLICK, BUTTON, attempt=AGAIN)
    assert fakes.names()[-1] == "messages.report_failure"
    assert fakes.calls[-1][1] == (failed, words)
    assert not fakes.lock.locked()


@pytest.mark.parametrize(
    "state",
    [
        None,
        _state(PauseStatus.CLAIMED, decided_by="U0BOB"),
        _state(PauseStatus.PENDING, decided_by=""),
    ],
    ids=["unknown", "another's claim", "never claimed"],
)
def test_when_the_cut_off_run_claimed_nothing_the_decision_is_taken_as_on_a_first_run(
    state: Any,
) -> None:
    fakes = Fakes([state])
    fakes.handlers().approve(CLICK, BUTTON, attempt=AGAIN)
    assert "recovery.resume_interrupted" not in fakes.names()
    assert fakes.names()[:2] == ["decisions.confirm", "messages.refuse"]
