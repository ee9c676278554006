"""A process that ends stops its sealed reconciliations: a running one is interrupted where it
is and leaves nothing sealed, a queued one never runs, and none is sealed afterwards. The
approval of such a request then reconciles, as it would had nothing been sealed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import duckdb

from agent.casefiles.sealed import Sealed, SealedWork, SealIdentity


def _identity(pause_id: str) -> SealIdentity:
    return SealIdentity(pause_id, "inputs", "mapping", "policy")


def _endless(work: SealedWork, pause_id: str, started: threading.Event) -> Callable[[Path], Sealed]:
    """A computation that runs in DuckDB until it is interrupted (bounded: about a minute)."""

    def compute(export: Path) -> Sealed:
        con = duckdb.connect()
        work.working(pause_id, con)
        started.set()
        con.execute("SELECT sum(i * i) FROM range(20_000_000_000) t(i)").fetchall()
        raise AssertionError("the computation was not interrupted")

    return compute


def test_stopping_interrupts_a_running_seal_and_cancels_a_queued_one(tmp_path: Path) -> None:
    work = SealedWork(tmp_path / "sealed", max_age=timedelta(hours=1))
    started = threading.Event()
    running = work.seal(_identity("PAUSE-RUNNING"), _endless(work, "PAUSE-RUNNING", started))
    queued = work.seal(_identity("PAUSE-QUEUED"), _endless(work, "PAUSE-QUEUED", threading.Event()))
    assert started.wait(10), "the first seal did not start"

    began = time.monotonic()
    work.stop()
    running.result(timeout=20)

    assert time.monotonic() - began < 20
    assert queued.cancelled()
    assert work.take(_identity("PAUSE-RUNNING")) is None
    assert work.take(_identity("PAUSE-QUEUED")) is None
    assert not (tmp_path / "sealed" / "PAUSE-RUNNING").exists(), "nothing left half-written"


def test_nothing_is_sealed_after_stopping(tmp_path: Path) -> None:
    work = SealedWork(tmp_path / "sealed", max_age=timedelta(hours=1))
    work.stop()
    late = work.seal(_identity("PAUSE-LATE"), _endless(work, "PAUSE-LATE", threading.Event()))

    assert late.done()
    assert work.take(_identity("PAUSE-LATE")) is None
    assert not (tmp_path / "sealed" / "PAUSE-LATE").exists()


def test_a_discard_between_two_statements_still_stops_the_seal(tmp_path: Path) -> None:
    """DuckDB drops an interrupt that comes while no statement runs: the seal is interrupted
    again until it ends, so the statement after the discard is stopped too."""
    work = SealedWork(tmp_path / "sealed", max_age=timedelta(hours=1))
    between, discarded = threading.Event(), threading.Event()

    def compute(export: Path) -> Sealed:
        con = duckdb.connect()
        work.working("PAUSE-BETWEEN", con)
        between.set()
        assert discarded.wait(10)  # the discard comes now, while no statement runs
        con.execute("SELECT sum(i * i) FROM range(20_000_000_000) t(i)").fetchall()
        raise AssertionError("the computation was not interrupted")

    running = work.seal(_identity("PAUSE-BETWEEN"), compute)
    assert between.wait(10)
    work.discard("PAUSE-BETWEEN")
    discarded.set()

    running.result(timeout=20)
    assert work.take(_identity("PAUSE-BETWEEN")) is None
    assert not (tmp_path / "sealed" / "PAUSE-BETWEEN").exists()
