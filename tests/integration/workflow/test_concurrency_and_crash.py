"""Exactly one winner under concurrent confirmations, and recovery after a crash mid-resume."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent.domain import Approver, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError
from agent.usecases import build_use_cases
from storage import tables as t
from tests.support.databases import POSTGRES_URL, drop_schema, postgres_schema_url

from .conftest import Demo, World, make_world, uploads

HELPER = Path(__file__).with_name("helper.py")
ROOT = Path(__file__).resolve().parents[3]
LOSERS = {RefusalReason.ALREADY_CLAIMED.value, RefusalReason.ALREADY_CONSUMED.value}


def _helper(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(HELPER), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
        check=False,
    )


def _confirm_in_threads(world: World, pause_id: str, auth: str, threads: int) -> list[str]:
    def click(n: int) -> str:
        try:
            world.service.decisions.confirm(pause_id, auth, Approver(user=f"user{n}"))
        except ApprovalRefusedError as error:
            return str(error.reason)
        return "RESUMED"

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(click, range(threads)))


def test_twenty_threads_on_sqlite_one_winner(tmp_path: Path, demo: Demo) -> None:
    world = make_world(f"sqlite:///{tmp_path / 'db.sqlite'}", tmp_path)
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    results = _confirm_in_threads(world, request.pause_id, request.authorization_identity, 20)
    counts = Counter(results)
    assert counts["RESUMED"] == 1, counts
    assert set(counts) - {"RESUMED"} <= LOSERS
    assert world.saved.outcome_count(request.pause_id) == 1
    reconciles = [e for e in world.saved.trace(request.investigation_id) if e.name == "reconcile"]
    assert len(reconciles) == 1
    assert world.saved.verify_audit()[1] is None


@pytest.mark.postgres
@pytest.mark.skipif(not POSTGRES_URL, reason="RECONBOT_TEST_POSTGRES_URL is not set")
def test_two_processes_ten_threads_each_on_postgres_one_winner(tmp_path: Path, demo: Demo) -> None:
    assert POSTGRES_URL
    url, schema = postgres_schema_url(POSTGRES_URL)
    try:
        world = make_world(url, tmp_path)
        request = world.service.intake.start(
            uploads(demo.orders, demo.payments), requested_by="a"
        ).request
        assert request is not None
        args = ["confirm", url, str(world.blob_dir), str(tmp_path / "work"), request.pause_id]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        children = [
            subprocess.Popen(
                [sys.executable, str(HELPER), *args, request.authorization_identity, "10"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            )
            for _ in range(2)
        ]
        results: list[str] = []
        for child in children:
            out, err = child.communicate(timeout=300)
            assert child.returncode == 0, err
            results += json.loads(out.strip().splitlines()[-1])
        counts = Counter(results)
        assert len(results) == 20
        assert counts["RESUMED"] == 1, counts
        assert set(counts) - {"RESUMED"} <= LOSERS
        assert world.saved.outcome_count(request.pause_id) == 1
        assert world.saved.verify_audit()[1] is None
        world.engine.dispose()
    finally:
        drop_schema(POSTGRES_URL, schema)


def test_crash_after_claim_is_recovered_at_next_start(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    work = str(tmp_path / "work")
    crashed = _helper(
        "crash",
        world.url,
        str(world.blob_dir),
        work,
        request.pause_id,
        request.authorization_identity,
    )
    assert crashed.returncode == 9, crashed.stderr
    assert world.saved.pause(request.pause_id).status is PauseStatus.CLAIMED  # type: ignore[union-attr]
    assert world.saved.outcome(request.investigation_id) is None

    recovered = _helper("recover", world.url, str(world.blob_dir), work)
    assert recovered.returncode == 0, recovered.stderr
    assert json.loads(recovered.stdout.strip().splitlines()[-1]) == [request.pause_id]
    assert world.saved.pause(request.pause_id).status is PauseStatus.CONSUMED  # type: ignore[union-attr]
    assert world.saved.outcome_count(request.pause_id) == 1
    outcome = world.saved.outcome(request.investigation_id)
    assert outcome is not None
    assert outcome.counts == demo.truth["findings"]

    again = _helper("recover", world.url, str(world.blob_dir), work)
    assert json.loads(again.stdout.strip().splitlines()[-1]) == []
    assert world.saved.outcome_count(request.pause_id) == 1
    with pytest.raises(ApprovalRefusedError) as refused:
        world.service.decisions.confirm(
            request.pause_id, request.authorization_identity, Approver(user="b")
        )
    assert refused.value.reason == RefusalReason.ALREADY_CONSUMED


def test_a_claim_retried_once_already_is_marked_failed_and_can_be_retried(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    work = str(tmp_path / "work")
    args = (world.url, str(world.blob_dir), work, request.pause_id, request.authorization_identity)
    assert _helper("crash", *args).returncode == 9
    # As if recovery had already re-run it once and died again: the next start gives up on it.
    assert world.saved.claims()[0][2] == 1
    with world.engine.begin() as conn:
        conn.execute(t.pauses.update().values(attempts=2))
    recovered = _helper("recover", *args[:3])
    assert json.loads(recovered.stdout.strip().splitlines()[-1]) == [request.pause_id]
    assert world.saved.pause(request.pause_id).status is PauseStatus.FAILED  # type: ignore[union-attr]
    outcome = world.service.decisions.confirm(
        request.pause_id, request.authorization_identity, Approver(user="b")
    )
    assert outcome.counts == demo.truth["findings"]


def test_two_questions_at_once_both_stay_in_the_conversation(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None
    world.service.decisions.confirm(
        request.pause_id, request.authorization_identity, Approver(user="bob")
    )
    other = make_world(world.url, tmp_path / "other")
    # The second process sees the same stored files.
    other.service = build_use_cases(replace(other.service.deps, blobs=world.blobs))
    barrier = threading.Barrier(2)
    questions = ["why is #SH1010 flagged?", "explain over_capture"]

    failures: list[BaseException] = []

    def ask(service: Any, question: str) -> None:
        barrier.wait()
        try:
            service.questions.ask(started.investigation.id, question, actor="carol")
        except BaseException as error:  # reported below, in the test's thread
            failures.append(error)

    threads = [
        threading.Thread(target=ask, args=(s.service, q))
        for s, q in zip((world, other), questions, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    saved = world.saved.conversation(started.investigation.id)
    said = json.dumps(saved)
    assert all(q in said for q in questions), "neither turn replaced the other"
    roles = [m["role"] for m in saved]
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    other.engine.dispose()
