"""Where a terminal user finds the exceptions CSV of an outcome: written to the file they named
(`--export FILE`), or the stored file itself, so the terminal always says where it is."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from agent.domain import Outcome
from agent.usecases import UseCases
from bot.config import Settings

logger = logging.getLogger(__name__)


def locate_exceptions(
    service: UseCases, settings: Settings, outcome: Outcome, export: Path | None
) -> str | None:
    """Write the outcome's exceptions CSV to `export` when given; return where a person reads
    it (that path, the stored file on a local store, or its digest in S3), None if none."""
    if outcome.export_digest is None:
        return None
    if export is not None:
        with service.queries.exceptions_file(outcome) as stored:
            assert stored is not None
            try:
                shutil.copyfile(stored, export)
            except OSError as error:  # the outcome stands: say where it is instead
                logger.warning("export=%s | exceptions CSV not written: %s", export, error)
                return f"{stored} (not written to {export}: {error.strerror or error})"
        return str(export)
    if settings.blob_url.startswith("file://"):
        with service.queries.exceptions_file(outcome) as stored:
            return str(stored)
    return f"{outcome.export_digest} in {settings.blob_url} (add --export FILE for a copy)"
