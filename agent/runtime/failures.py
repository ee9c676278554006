"""A tool's own failure (not the file's, not the person's) said to the person as what failed,
with a reference to the log entry that holds the details.

An engine error that is not one of reconbot's (`ReconbotError`: it explains itself) is a fault
of the bot or of the machine: DuckDB running out of its memory, a bug. The person reads which
step failed and a reference; the log has the exception's type and where it was raised under
that reference, never its message (a DuckDB message may quote a cell of the uploaded file).
"""

from __future__ import annotations

import logging
import traceback

from agent.identity import new_id

logger = logging.getLogger(__name__)


def said_failure(step: str, error: BaseException) -> str:
    """Log `error` under a new reference (its type and stack, not its message) and return what
    the person reads: that `step` failed inside the bot, why in one word, and the reference."""
    reference = new_id("ERR")
    kind = type(error).__name__
    where = "".join(traceback.format_tb(error.__traceback__)[-3:]).strip()
    logger.error("ref=<%s> step=<%s> error=<%s> | a tool failed\n%s", reference, step, kind, where)
    return (
        f"{step} failed inside the bot ({kind}); nothing was decided and nothing was changed. "
        f"Try again; if it fails again, the bot's log has the details under {reference}."
    )
