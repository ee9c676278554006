"""Sealed reconciliation: the reconciliation a confirmation request would start, done while the
person reads the request, and kept sealed until that very request is approved.

As soon as a confirmation request is issued, its reconciliation is computed under exactly its
identity (the files' input identity, the mapping's digest, the policy's version) on a
background thread, and written under the work directory: the exceptions CSV and what the
results message shows (the summary and the examples), with the digests of the bytes read and
when it was sealed. Nothing reads it but `take`, which the resumed turn's `reconcile` calls after
the guard has honoured the approval: it hands the sealed work over only when it was computed
under the approved identity from the approved bytes, and otherwise the turn reconciles as it
would have. A decision other than the approval (an edit, a new revision, a rejection, expiry, a
change of policy) discards it (`discard`), and work nobody takes is removed with its folder.

The sealed work is an optimisation, never a source of truth: a restart, a failure or a discard
only means reconciling on approval, as without it. One seal runs at a time per process (the
newest request first), so it never competes with a second one for memory.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import duckdb

from agent.data.pipeline import TextNotKeptError
from agent.data.reconcile.values import Finding, Summary
from agent.data.schema import Role

logger = logging.getLogger(__name__)

_MANIFEST = "sealed.json"
_EXPORT = "exceptions.csv"


@dataclass(frozen=True)
class SealIdentity:
    """What a sealed reconciliation was computed under: the request's whole identity."""

    pause_id: str
    input_identity: str
    mapping_digest: str
    policy_version: str


@dataclass(frozen=True)
class SealedOutcome:
    """A sealed reconciliation handed over on approval: the exceptions CSV (`export`), what the
    results message shows, the digests of the bytes it read and when it was sealed."""

    identity: SealIdentity
    export: Path
    export_size: int
    exported: int
    summary: Summary
    examples: list[Finding]
    digests: dict[Role, str]
    sealed_at: datetime


Sealed = tuple[int, Summary, list[Finding], dict[Role, str]]
"""A reconciliation's exceptions CSV row count, its summary, its examples and the digests of
the bytes it read."""

Compute = Callable[[Path], Sealed]
"""Reconcile into the exceptions CSV at the path given."""


INTERRUPT_EVERY = 0.02
"""Seconds between two interrupts of a seal that must stop (`SealedWork._interrupt`)."""

INTERRUPT_FOR = 60.0
"""Seconds a seal that must stop is interrupted for, at most (it stops at its next statement)."""


class SealedWork:
    """The sealed reconciliations of this process, one folder each under `folder`."""

    def __init__(self, folder: Path, *, max_age: timedelta) -> None:
        self.folder = folder
        self.max_age = max_age
        self._lock = threading.Lock()
        self._running: dict[str, Future[None]] = {}
        self._working: dict[str, duckdb.DuckDBPyConnection] = {}
        self._discarded: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sealed")

    def seal(self, identity: SealIdentity, compute: Compute) -> Future[None]:
        """Start computing the reconciliation of `identity` (after any seal already running);
        its outcome stays sealed until `take`. A failure is logged and leaves nothing sealed."""
        self._sweep()
        with self._lock:
            self._discarded.discard(identity.pause_id)
            try:
                running = self._pool.submit(self._run, identity, compute)
            except RuntimeError:  # stopped (`stop`): the approval reconciles then
                logger.info("pause=<%s> | not sealed: sealing has stopped", identity.pause_id)
                stopped: Future[None] = Future()
                stopped.set_result(None)
                return stopped
            self._running[identity.pause_id] = running
        return running

    def working(self, pause_id: str, con: duckdb.DuckDBPyConnection) -> None:
        """Say that the seal of `pause_id` runs on `con`: a discard interrupts it there."""
        with self._lock:
            self._working[pause_id] = con
            discarded = pause_id in self._discarded
        if discarded:
            self._interrupt(pause_id)

    def take(self, identity: SealIdentity) -> SealedOutcome | None:
        """The outcome sealed under exactly `identity` (waiting for it when it is still being
        computed), or None when there is none, it failed, or it was computed under anything
        else. The caller still checks the digests of the bytes read against the approval."""
        with self._lock:
            running = self._running.get(identity.pause_id)
        if running is not None and running.cancel():  # not started: computing now is sooner
            return None
        if running is not None:
            running.result()  # `_run` never raises
        folder = self._folder(identity.pause_id)
        try:
            saved = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        outcome = _outcome(folder, saved)
        if outcome is None or outcome.identity != identity or saved.get("engine") != engine():
            logger.warning(
                "pause=<%s> | the sealed work is not the approved one", identity.pause_id
            )
            return None
        return outcome

    def discard(self, pause_id: str) -> None:
        """Forget what was sealed for the request `pause_id` (a running seal's outcome is
        dropped when it ends): the request will never be approved as it was."""
        with self._lock:
            self._discarded.add(pause_id)
            running = self._running.get(pause_id)
        if running is not None and running.cancel():  # queued: never runs
            with self._lock:
                self._running.pop(pause_id, None)
                self._discarded.discard(pause_id)
        elif running is not None and not running.done():  # running: stopped where it is
            self._interrupt(pause_id)
        elif running is None or running.done():
            self._remove(pause_id)
            with self._lock:
                self._discarded.discard(pause_id)

    def stop(self) -> None:
        """Stop sealing, for a process that is ending: queued seals never run, running ones
        are interrupted where they are and leave nothing sealed, and the process does not wait
        for them at exit. An approval after this reconciles as it would without sealing."""
        with self._lock:
            running = dict(self._running)
            self._discarded.update(running)
        self._pool.shutdown(wait=False, cancel_futures=True)
        for pause_id in running:
            self._interrupt(pause_id)
        if running:
            logger.info("seals=%s | sealing stopped: the process is ending", len(running))

    def _interrupt(self, pause_id: str) -> None:
        """Interrupt the seal of `pause_id` until it ends: DuckDB drops an interrupt that comes
        between two statements, so it is said again, every INTERRUPT_EVERY seconds, on its
        own thread, for at most INTERRUPT_FOR seconds."""

        def keep_interrupting() -> None:
            for _ in range(int(INTERRUPT_FOR / INTERRUPT_EVERY)):
                with self._lock:
                    running = self._running.get(pause_id)
                    con = self._working.get(pause_id)
                if running is None or running.done():
                    return
                if con is not None:
                    con.interrupt()
                time.sleep(INTERRUPT_EVERY)

        threading.Thread(target=keep_interrupting, name="unseal", daemon=True).start()

    def _run(self, identity: SealIdentity, compute: Compute) -> None:
        pause_id = identity.pause_id
        folder = self._folder(pause_id)
        try:
            if pause_id in self._discarded:
                return
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            exported, summary, examples, digests = compute(folder / _EXPORT)
            sealed_at = datetime.now(UTC)
            manifest = _manifest(identity, exported, summary, examples, digests, sealed_at)
            manifest["export_size"] = (folder / _EXPORT).stat().st_size
            written = folder / f"{_MANIFEST}.part"  # whole or absent: another process reads it
            written.write_text(json.dumps(manifest), encoding="utf-8")
            written.replace(folder / _MANIFEST)
            logger.info("pause=<%s> | a reconciliation was sealed", pause_id)
        except TextNotKeptError:  # the files' text is not kept: sealing would read them again
            logger.info("pause=<%s> | not sealed: no text kept; reconciled on approval", pause_id)
            shutil.rmtree(folder, ignore_errors=True)
        except Exception as error:  # an optimisation: the approval reconciles as without it
            if pause_id in self._discarded:
                logger.info("pause=<%s> | sealing stopped: the request was discarded", pause_id)
            else:
                kind = type(error).__name__
                logger.warning("pause=<%s> error=<%s> | sealing failed", pause_id, kind)
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            with self._lock:
                self._running.pop(pause_id, None)
                self._working.pop(pause_id, None)
                dropped = pause_id in self._discarded
                self._discarded.discard(pause_id)
            if dropped:
                self._remove(pause_id)

    def _sweep(self) -> None:
        """Remove sealed work older than `max_age`: its request expired or was decided in a
        way that did not tell this process (another worker, a restart)."""
        cutoff = time.time() - self.max_age.total_seconds()
        with self._lock:
            running = set(self._running)
        for folder in self.folder.glob("*"):
            with suppress(OSError):
                if folder.name not in running and folder.stat().st_mtime < cutoff:
                    shutil.rmtree(folder, ignore_errors=True)

    def _remove(self, pause_id: str) -> None:
        folder = self._folder(pause_id)
        with suppress(OSError):  # the manifest first: a reader never finds half a folder
            (folder / _MANIFEST).unlink()
        shutil.rmtree(folder, ignore_errors=True)

    def _folder(self, pause_id: str) -> Path:
        return self.folder / pause_id


@cache
def engine() -> str:
    """A fingerprint of the engine's code (the `agent.data` package's Python and SQL): work
    sealed by another build (before an upgrade and a restart) is never published by this one."""
    digest = hashlib.sha256()
    for name, source in sorted(_sources(files("agent.data"), ""), key=lambda found: found[0]):
        digest.update(name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _sources(folder: Traversable, prefix: str) -> list[tuple[str, Traversable]]:
    """Every .py and .sql file under `folder`, recursively, by its path inside the package."""
    found: list[tuple[str, Traversable]] = []
    for entry in folder.iterdir():
        name = f"{prefix}/{entry.name}"
        if entry.is_dir():
            found.extend(_sources(entry, name))
        elif entry.name.endswith((".py", ".sql")):
            found.append((name, entry))
    return found


def _manifest(
    identity: SealIdentity,
    exported: int,
    summary: Summary,
    examples: list[Finding],
    digests: dict[Role, str],
    sealed_at: datetime,
) -> dict[str, Any]:
    return {
        "identity": [
            identity.pause_id,
            identity.input_identity,
            identity.mapping_digest,
            identity.policy_version,
        ],
        "engine": engine(),
        "exported": exported,
        "summary": summary.model_dump(mode="json"),
        "examples": [f.model_dump(mode="json") for f in examples],
        "digests": {role.value: digest for role, digest in digests.items()},
        "sealed_at": sealed_at.isoformat(),
    }


def _outcome(folder: Path, saved: dict[str, Any]) -> SealedOutcome | None:
    try:
        return SealedOutcome(
            identity=SealIdentity(*saved["identity"]),
            export=folder / _EXPORT,
            export_size=int(saved["export_size"]),
            exported=int(saved["exported"]),
            summary=Summary.model_validate(saved["summary"]),
            examples=[Finding.model_validate(f) for f in saved["examples"]],
            digests={Role(role): digest for role, digest in saved["digests"].items()},
            sealed_at=datetime.fromisoformat(saved["sealed_at"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
