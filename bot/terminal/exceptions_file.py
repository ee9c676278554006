"""Where a terminal user finds the exceptions CSV of an outcome: written to the file they named
(`--export FILE`), or else a copy kept under the cases home
(`HOME/exceptions/exceptions-INV-…-rN.csv`), so the terminal always names a `.csv` file a person
can open, never a blob's key."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

from agent.domain import Outcome
from agent.errors import ReconbotError
from agent.usecases import UseCases
from bot.config import Settings
from bot.terminal.paths import kept_exceptions_file

logger = logging.getLogger(__name__)


def locate_exceptions(
    service: UseCases, settings: Settings, outcome: Outcome, export: Path | None
) -> str | None:
    """Write the outcome's exceptions CSV to `export` when given; return where a person reads
    it (that file, else a copy kept under the cases home), None if the outcome has none.

    Never raises: the outcome is saved whatever happens to a copy, so a failure is said beside
    where the file is (the kept copy, or the file store when even that cannot be written)."""
    if outcome.export_digest is None:
        return None
    failed = ""
    if export is not None:
        try:
            with service.queries.exceptions_file(outcome) as stored:
                assert stored is not None
                shutil.copyfile(stored, export)
            return str(export)
        except (OSError, ReconbotError) as error:
            failed = f" (not written to {export}: {_why(outcome, export, error)})"
    kept = kept_exceptions_file(settings.state_home, outcome)
    try:
        if not _holds(kept, outcome.export_digest):  # else kept earlier: the same bytes
            with service.queries.exceptions_file(outcome) as stored:
                assert stored is not None
                _copy_whole(stored, kept)
            _seal(kept).write_text(_stamp(kept, outcome.export_digest), encoding="utf-8")
        return f"{kept}{failed}"
    except (OSError, ReconbotError) as error:
        store = f"{outcome.export_digest} in {settings.blob_url}"
        return f"{store}{failed} (not written to {kept}: {_why(outcome, kept, error)})"


def _why(outcome: Outcome, target: Path, error: OSError | ReconbotError) -> str:
    """Log why a copy failed; the reason in a few words for the person."""
    logger.warning(
        "investigation=%s target=%s | exceptions CSV not written or read: %s",
        outcome.investigation_id,
        target,
        error,
    )
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)


def _seal(path: Path) -> Path:
    """Where the kept copy's digest and stat are noted when it is written."""
    return path.with_name(f".{path.name}.sha256")


def _stamp(path: Path, digest: str) -> str:
    """The copy's digest with its size and modification time: a copy someone changed since
    (saved from a spreadsheet) no longer matches, without hashing it on every `status`."""
    stat = path.stat()
    return f"{digest} {stat.st_size} {stat.st_mtime_ns}"


def _holds(path: Path, digest: str) -> bool:
    """Whether `path` is the copy written of the bytes with `digest` (`sha256:…`), unchanged
    since (its seal, read instead of hashing the file again)."""
    try:
        return _seal(path).read_text(encoding="utf-8") == _stamp(path, digest)
    except OSError:
        return False


def _copy_whole(source: Path, target: Path) -> None:
    """Copy `source` to `target` so that `target` is never seen half written: a temporary file
    in the same folder takes the name once complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".part")
    os.close(handle)
    try:
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
