"""A confirmation request's reconciliation is computed while the request waits and kept sealed:
nothing of it is visible before that request is approved; an edit, a new revision, a rejection
or expiry discards it; on approval it is published only under the approved identity, and the
result is byte for byte the one computed on approval without sealing."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import agent.data.reconcile.preload as preload_module
from agent.casefiles import SealIdentity
from agent.domain import ApprovalRequest, Approver, Role
from bot.slack.blocks.home import status_message
from bot.terminal.status_text import render_status

from .conftest import Demo, World, make_world, uploads

BOB = Approver(user="bob")


def _sealed_folder(world: World, pause_id: str) -> Path:
    return world.service.deps.files.sealed.folder / pause_id


def _wait_sealed(world: World, pause_id: str) -> None:
    """Wait (bounded) until the request's reconciliation is sealed."""
    manifest = _sealed_folder(world, pause_id) / "sealed.json"
    for _ in range(600):
        if manifest.exists():
            return
        time.sleep(0.05)
    raise AssertionError("the reconciliation was not sealed within 30 s")


def _wait_idle(world: World) -> None:
    """Wait (bounded) until no seal is running, so what it leaves on disk is final."""
    sealed = world.service.deps.files.sealed
    for _ in range(600):
        if not sealed._running:
            return
        time.sleep(0.05)
    raise AssertionError("a seal was still running after 30 s")


def _export(world: World, case: str) -> bytes:
    outcome = world.saved.outcome(case)
    assert outcome is not None and outcome.export_digest is not None
    with world.blobs.local_copy(outcome.export_digest) as path:
        return Path(path).read_bytes()


def _start(world: World, demo: Demo) -> tuple[str, ApprovalRequest]:
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    assert started.request is not None and started.request.mapping is not None
    return started.investigation.id, started.request


def test_the_sealed_result_is_published_on_approval_and_equals_one_computed_then(
    database_url: str, tmp_path: Path, demo: Demo
) -> None:
    sealed_world = make_world(database_url, tmp_path / "sealed")
    plain_world = make_world(database_url, tmp_path / "plain", seal=False)
    try:
        case, request = _start(sealed_world, demo)
        _wait_sealed(sealed_world, request.pause_id)
        sealed_world.service.decisions.confirm(
            request.pause_id, request.authorization_identity, BOB
        )
        other, plain_request = _start(plain_world, demo)
        assert not _sealed_folder(plain_world, plain_request.pause_id).exists()
        plain_world.service.decisions.confirm(
            plain_request.pause_id, plain_request.authorization_identity, BOB
        )

        assert _export(sealed_world, case) == _export(plain_world, other)
        published, computed = sealed_world.saved.outcome(case), plain_world.saved.outcome(other)
        assert published is not None and computed is not None
        assert published.summary == computed.summary
        assert published.counts == computed.counts
        assert {k: v for k, v in published.counts.items() if v} == {
            k: v for k, v in demo.truth["findings"].items() if v
        }
        resumed = [e for e in sealed_world.saved.trace(case) if e.name == "reconcile"]
        assert len(resumed) == 1, "one reconcile execution on resume"
        assert resumed[0].detail is not None
        assert resumed[0].detail.startswith("published the result sealed at ")
        [computed_run] = [e for e in plain_world.saved.trace(other) if e.name == "reconcile"]
        assert computed_run.detail is None
        assert not _sealed_folder(sealed_world, request.pause_id).exists(), "used once"
    finally:
        sealed_world.engine.dispose()
        plain_world.engine.dispose()


def test_nothing_sealed_is_visible_before_the_approval(world: World, demo: Demo) -> None:
    case, request = _start(world, demo)
    _wait_sealed(world, request.pause_id)
    assert world.saved.outcome(case) is None
    status = world.service.queries.status(case)
    assert status.outcome is None
    assert "reconcile" not in [e.name for e in status.trace]
    rendered = status_message(status)
    shown = [render_status(status), rendered.text, json.dumps(rendered.blocks)]
    for text in shown:  # the terminal's and Slack's status: no category, no count
        assert not [c for c in demo.truth["findings"] if c in text], "no figure while paused"
    answer = world.service.questions.ask(case, "which orders were never paid?", actor="carol")
    assert answer.text.startswith("This investigation has not been reconciled yet;")


def test_an_edit_discards_what_was_sealed_for_the_edited_request(world: World, demo: Demo) -> None:
    case, request = _start(world, demo)
    _wait_sealed(world, request.pause_id)
    fetched: list[str] = []
    real = world.blobs.local_copy

    def counted(digest: str) -> Any:
        fetched.append(digest)
        return real(digest)

    world.blobs.local_copy = counted  # type: ignore[method-assign]
    edited = world.service.decisions.edit(
        request.pause_id,
        request.authorization_identity,
        BOB,
        {Role.ORDERS: {"customer": "Lineitem name"}},
    )
    _wait_idle(world)
    assert not _sealed_folder(world, request.pause_id).exists()
    assert fetched == [], "the edit loaded from the text kept, after the seal gave it back"
    assert edited.mapping is not None
    _wait_sealed(world, edited.pause_id)  # the new request is sealed in its turn
    world.service.decisions.confirm(
        edited.pause_id, edited.authorization_identity, Approver(user="carol")
    )
    [run] = [e for e in world.saved.trace(case) if e.name == "reconcile"]
    assert run.detail is not None and "sealed" in run.detail


def test_a_rejection_discards_what_was_sealed(world: World, demo: Demo) -> None:
    _, request = _start(world, demo)
    _wait_sealed(world, request.pause_id)
    world.service.decisions.reject(
        request.pause_id, request.authorization_identity, BOB, "wrong export"
    )
    assert not _sealed_folder(world, request.pause_id).exists()


def test_a_new_revision_discards_what_was_sealed_for_the_old_one(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    case, request = _start(world, demo)
    _wait_sealed(world, request.pause_id)
    changed = tmp_path / "payments.csv"
    changed.write_bytes(demo.payments.read_bytes().rstrip(b"\r\n").rsplit(b"\n", 1)[0] + b"\n")
    world.service.intake.add_file(case, uploads(changed)[0], actor="alice")
    _wait_idle(world)
    assert not _sealed_folder(world, request.pause_id).exists()


def test_expiry_discards_what_was_sealed(world: World, demo: Demo) -> None:
    _, request = _start(world, demo)
    _wait_sealed(world, request.pause_id)
    world.clock.advance(timedelta(hours=25))
    assert request.pause_id in world.service.decisions.expire_due()
    assert not _sealed_folder(world, request.pause_id).exists()


def test_work_sealed_under_another_identity_is_never_published(world: World, demo: Demo) -> None:
    _, request = _start(world, demo)
    _wait_sealed(world, request.pause_id)
    files = world.service.deps.files
    assert request.mapping_digest is not None
    approved = SealIdentity(
        request.pause_id, request.input_identity, request.mapping_digest, request.policy_version
    )
    assert files.take_sealed(approved) is not None
    manifest = _sealed_folder(world, request.pause_id) / "sealed.json"
    saved = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**saved, "engine": "another build"}))
    assert files.take_sealed(approved) is None, "sealed by another build of the engine"
    manifest.write_text(json.dumps(saved))
    for other in (
        replace(approved, mapping_digest="sha256:" + "0" * 64),
        replace(approved, input_identity="sha256:" + "1" * 64),
        replace(approved, policy_version="another"),
    ):
        assert files.take_sealed(other) is None


def test_files_too_large_to_keep_as_text_are_not_sealed_and_reconcile_on_approval(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sealing files whose text is not kept would read them again beside the person's edits:
    they are not sealed, and the approval reconciles them as without sealing."""
    monkeypatch.setattr(preload_module, "MEMORY_LIMIT_BYTES", 1)  # nothing fits: no text kept
    case, request = _start(world, demo)
    _wait_idle(world)
    assert not _sealed_folder(world, request.pause_id).exists()
    world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    [run] = [e for e in world.saved.trace(case) if e.name == "reconcile"]
    assert run.detail is None, "computed on approval"
    outcome = world.saved.outcome(case)
    assert outcome is not None
    assert {k: v for k, v in outcome.counts.items() if v} == {
        k: v for k, v in demo.truth["findings"].items() if v
    }


def test_work_sealed_from_other_bytes_is_not_published_and_the_approval_reconciles(
    world: World, demo: Demo
) -> None:
    """The sealed work says which bytes it read: when their digests do not make the approved
    input identity, the approval reconciles the approved files itself."""
    case, request = _start(world, demo)
    _wait_sealed(world, request.pause_id)
    manifest = _sealed_folder(world, request.pause_id) / "sealed.json"
    saved = json.loads(manifest.read_text())
    saved["digests"]["orders"] = "sha256:" + "2" * 64
    manifest.write_text(json.dumps(saved))
    world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    [run] = [e for e in world.saved.trace(case) if e.name == "reconcile"]
    assert run.detail is None, "computed on approval, not published"
    outcome = world.saved.outcome(case)
    assert outcome is not None
    assert {k: v for k, v in outcome.counts.items() if v} == {
        k: v for k, v in demo.truth["findings"].items() if v
    }
    assert not _sealed_folder(world, request.pause_id).exists()
