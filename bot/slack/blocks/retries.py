"""What the bot says when work was cut off or has to wait: a step picked up again after the
process running it stopped, a file store that is down (and when it is tried again), a failure
whose Retry was used. Each keeps the thread truthful after any crash."""

from __future__ import annotations

from collections.abc import Sequence

from bot.slack.blocks.common import Rendered, code, mention, note


def interrupted_note(names: Sequence[str]) -> Rendered:
    """The progress message of a step whose process stopped before it finished."""
    files = ", ".join(code(n, 60) for n in names)
    return note(
        f":hourglass: The work on {files} was cut off: the process doing it stopped. "
        "Another picked it up; see below. Nothing needs uploading again."
    )


def picked_up_note(what: str, attempt: int) -> Rendered:
    """Said in the thread when a job runs again (`what`: the step, in words)."""
    return note(
        f":arrows_counterclockwise: Picking up {what} again (attempt {attempt}): the process "
        "working on it stopped before it finished."
    )


def store_down_note(names: Sequence[str], wait_seconds: float) -> Rendered:
    """The file store could not be reached; the step runs again by itself."""
    files = ", ".join(code(n, 60) for n in names)
    return note(
        f":hourglass: The file store could not be reached while storing {files}. Trying again "
        f"in {round(wait_seconds)} s by itself; nothing needs uploading again."
    )


def retried_note(user: str) -> Rendered:
    """A failure message whose Retry was used: the button is gone, the outcome follows."""
    return note(f":arrows_counterclockwise: {mention(user)} retried; the outcome is below.")
