"""Validation reports remembered by what they were computed from, so that an edit of a mapping
re-validates only what it changed.

A file's checks depend on its columns (the digest of its bytes and how they were split), the
name it was uploaded under (messages name it) and its part of the mapping; the gates depend on
both files' columns and the few fields that make the keys that join them. Each report is kept
under a digest of exactly those inputs (and this module's `FORMAT`), as a small JSON file beside
the columnar cache; reports unused for the cache's age limit are removed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import Any

from agent.data.normalize.report import FieldCheck, ValidationReport
from agent.data.notes import Note

logger = logging.getLogger(__name__)

FORMAT = 6
"""Bumped when what a check computes changes, so that reports of an older build are not used."""


def memo_key(*inputs: Any) -> str:
    """The digest of a report's inputs (JSON-able values)."""
    text = json.dumps([FORMAT, *inputs], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ValidationMemo:
    """Reports by the digest of their inputs, in one folder."""

    def __init__(self, folder: Path, *, max_age: timedelta) -> None:
        self.folder = folder
        self.max_age = max_age

    def recall(self, key: str) -> ValidationReport | None:
        """The report remembered under `key`, if any."""
        path = self.folder / f"{key}.json"
        try:
            report = report_of(json.loads(path.read_text(encoding="utf-8")))
            now = time.time()
            os.utime(path, (now, now))
        except (OSError, ValueError, KeyError, TypeError):  # none, or not one of ours:
            return None  # the file is validated again
        return report

    def remember(self, key: str, report: ValidationReport) -> None:
        """Keep `report` under `key` (a failure to write only costs a validation later)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = self.folder / f".{key}.{os.getpid()}.json"
            text = json.dumps(saved_report(report), ensure_ascii=False)
            partial.write_text(text, encoding="utf-8")
            partial.replace(self.folder / f"{key}.json")
            self._evict()
        except OSError:
            logger.warning("folder=<%s> | a validation report was not kept", self.folder)

    def _evict(self) -> None:
        """Remove the reports unused for longer than `max_age`."""
        limit = time.time() - self.max_age.total_seconds()
        for path in self.folder.glob("*.json"):
            try:
                if path.stat().st_mtime < limit:
                    path.unlink(missing_ok=True)
            except OSError:
                continue


def saved_report(report: ValidationReport) -> dict[str, Any]:
    """`report` as a JSON object: its notes by their codes and parameters (`Note.to_json`),
    so that a remembered report says the same as the one computed."""
    proposed = report.proposed_reading
    return {
        "rows": dict(report.rows),
        "checks": [asdict(check) for check in report.checks],
        "errors": [n.to_json() for n in report.errors],
        "warnings": [n.to_json() for n in report.warnings],
        "facts": [n.to_json() for n in report.facts],
        "routine": [n.to_json() for n in report.routine],
        "proposed": report.proposed,
        "proposed_reading": proposed.to_json() if proposed is not None else None,
        "references": list(report.references),
    }


def report_of(saved: Mapping[str, Any]) -> ValidationReport:
    """The report `saved_report` wrote. Raises KeyError, TypeError or ValueError for an object
    that is not one (the file is then validated again)."""
    proposed = saved.get("proposed_reading")
    return ValidationReport(
        rows=dict(saved["rows"]),
        checks=[FieldCheck(**check) for check in saved["checks"]],
        errors=[Note.from_json(n) for n in saved["errors"]],
        warnings=[Note.from_json(n) for n in saved["warnings"]],
        facts=[Note.from_json(n) for n in saved["facts"]],
        routine=[Note.from_json(n) for n in saved["routine"]],
        proposed={role: dict(o) for role, o in saved.get("proposed", {}).items()},
        proposed_reading=Note.from_json(proposed) if proposed is not None else None,
        references=[int(v) for v in saved.get("references", [])],
    )
