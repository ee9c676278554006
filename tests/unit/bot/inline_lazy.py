"""Bolt's lazy listeners run on the caller's thread in unit tests, so a dispatch returns with
their work done, and what one of them raises is seen (Bolt logs it instead of raising)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from slack_bolt import App


class InlineExecutor(Executor):
    """Runs what is submitted at once, on the submitting thread."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:
            future.set_exception(error)
        return future


class LazyFailures(logging.Handler):
    """Collects the failures of lazy listeners, which Bolt logs on the app's logger."""

    def __init__(self, app: App, failed: Callable[[BaseException], None]) -> None:
        super().__init__(logging.ERROR)
        self.failed = failed
        app.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Failed to run an internal function"):
            self.failed(RuntimeError(record.getMessage()))
