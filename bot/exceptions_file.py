"""Where a terminal user finds the exceptions CSV of an outcome: written to the file they named
(`--export FILE`), or the stored file itself, so the terminal always says where it is."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from agent.domain import Outcome
from agent.errors import ReconbotError
from agent.usecases import UseCases
from bot.config import Settings

logger = logging.getLogger(__name__)


def locate_exceptions(
    service: UseCases, settings: Settings, outcome: Outcome, export: Path | None
) -> str | None:
    """Write the outcome's exceptions CSV to `export` when given; return where a person reads
    it (that path, else where it is stored), None if the outcome has none. Never raises: the
    outcome is saved whatever happens to the copy, so a failure is said beside where it is."""
    if outcome.export_digest is None:
        return None
    kept = f"{outcome.export_digest} in {settings.blob_url} (add --export FILE for a copy)"
    local = settings.blob_url.startswith("file://")
    if export is None and not local:
        return kept  # never downloaded just to be named
    try:
        with service.queries.exceptions_file(outcome) as stored:
            assert stored is not None
            if local:
                kept = str(stored)
            if export is None:
                return kept
            shutil.copyfile(stored, export)
        return str(export)
    except (OSError, ReconbotError) as error:
        logger.warning("export=%s | exceptions CSV not written or read: %s", export, error)
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        target = f"not written to {export}" if export is not None else "not readable"
        return f"{kept} ({target}: {why})"
