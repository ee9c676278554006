"""What the listeners reach, set once when they are registered.

Every listener is a module-level function whose first parameter is a `ListenerDeps`; `bound`
fixes it, and Bolt passes the rest by name (`ack`, `body`, `client`…). A unit test calls the
function itself with fakes, without an app.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Concatenate, ParamSpec, TypeVar

from agent.usecases import UseCases
from bot.slack.handlers import Handlers
from bot.slack.visibility import ChannelVisibility

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class ListenerDeps:
    """The use cases (for quick reads), the handlers (the jobs to enqueue, how to tell a
    clicker), and who sees which channels (the slash command)."""

    service: UseCases
    handlers: Handlers
    visibility: ChannelVisibility


def bound(
    listener: Callable[Concatenate[ListenerDeps, P], R], deps: ListenerDeps
) -> Callable[P, R]:
    """`listener` with `deps` as its first argument, for Bolt to call.

    Bolt reads the names of the remaining parameters to know what to pass, and the name of a
    lazy listener to tell it apart, so the partial keeps the function's name (not its
    `__wrapped__`, which would make Bolt read `deps` as a parameter to fill)."""
    call = functools.partial(listener, deps)
    setattr(call, "__name__", getattr(listener, "__name__", "listener"))  # noqa: B010
    return call
