"""The approval workflow on real databases: pauses, the guard, revisions, rejection, expiry."""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from agent.data.schema import Role
from agent.domain import Approver, InvestigationStatus, PauseKind, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError
from agent.usecases.common import Upload
from storage import tables as t

from .conftest import Demo, World, uploads

BOB = Approver(user="bob")


class _Refusal:
    """`with _Refusal(reason):` expects an ApprovalRefusedError with that reason code."""

    def __init__(self, reason: RefusalReason) -> None:
        self.reason = reason

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: object, _tb: object) -> bool:
        assert isinstance(error, ApprovalRefusedError), f"expected a refusal, got {error!r}"
        assert error.reason == self.reason, f"{error.reason} instead of {self.reason}: {error}"
        return True


def _no_figures(request_json: str, truth: dict[str, int]) -> None:
    for category in truth:
        assert category not in request_json


def test_confirmation_pauses_without_figures_then_resumes_once(world: World, demo: Demo) -> None:
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None
    assert request.kind is PauseKind.CONFIRMATION
    assert request.mapping is not None
    assert request.authorization_identity.startswith("sha256:")
    _no_figures(request.model_dump_json(), demo.truth["findings"])
    assert world.saved.outcome(started.investigation.id) is None

    outcome = world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert outcome.investigation_id == started.investigation.id
    assert outcome.counts == demo.truth["findings"]
    saved = world.saved.outcome(started.investigation.id)
    assert saved == outcome
    assert world.saved.pause(request.pause_id).status is PauseStatus.CONSUMED  # type: ignore[union-attr]

    with _Refusal(RefusalReason.ALREADY_CONSUMED):
        world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert world.saved.outcome_count(request.pause_id) == 1

    trace = [(e.phase, e.name) for e in world.saved.trace(started.investigation.id)]
    assert trace == [
        ("investigate", "inspect_datasets"),
        ("investigate", "validate_mapping"),
        ("resume", "reconcile"),
    ]
    answer = world.service.questions.ask(
        started.investigation.id, "explain the rules", actor="carol"
    )
    assert "Rule" in answer.text
    names = [e.name for e in world.saved.trace(started.investigation.id)]
    assert names.count("reconcile") == 1  # replayed history is context, not an execution


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _ambiguous_files(folder: Path) -> tuple[Path, Path]:
    n = 60
    orders = _write(
        folder / "orders.csv",
        ["Name", "Total", "Currency", "Created at"],
        [[f"#{1001 + i}", f"{100 + i}.00", "USD", "2025-10-01 10:00:00 +0000"] for i in range(n)],
    )
    payments = _write(
        folder / "payments.csv",
        ["id", "Amount", "Amount Refunded", "Amount Captured", "Currency", "order_id"],
        [
            [
                f"py_{i:06d}",
                f"{100 + i}.00",
                "0.00",
                f"{100 + i - (i % 3)}.00",
                "USD",
                f"#{1001 + i}",
            ]
            for i in range(n)
        ],
    )
    return orders, payments


def test_clarification_is_answered_by_an_edit_then_approved(world: World, tmp_path: Path) -> None:
    orders, payments = _ambiguous_files(tmp_path)
    started = world.service.intake.start(uploads(orders, payments), requested_by="alice")
    question = started.request
    assert question is not None
    assert question.kind is PauseKind.CLARIFICATION
    assert question.mapping is None
    assert any(c.field == "captured_amount" for c in question.clarifications)
    with _Refusal(RefusalReason.NOT_APPROVABLE):
        world.service.decisions.confirm(question.pause_id, question.authorization_identity, BOB)

    answered = world.service.decisions.edit(
        question.pause_id,
        question.authorization_identity,
        BOB,
        {Role.PAYMENTS: {"captured_amount": "Amount Captured"}},
    )
    assert answered.kind is PauseKind.CONFIRMATION
    assert answered.mapping is not None
    assert answered.mapping.payments.columns["captured_amount"] == "Amount Captured"
    assert world.saved.pause(question.pause_id).status is PauseStatus.SUPERSEDED  # type: ignore[union-attr]
    outcome = world.service.decisions.confirm(
        answered.pause_id, answered.authorization_identity, BOB
    )
    # Amount Captured is short by 1 or 2 dollars on two rows of three.
    assert outcome.counts["amount_mismatch"] == 40


def test_edit_naming_a_missing_column_is_a_clarification(world: World, demo: Demo) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    edited = world.service.decisions.edit(
        request.pause_id,
        request.authorization_identity,
        BOB,
        {Role.ORDERS: {"order_amount": "No Such Column"}},
    )
    assert edited.kind is PauseKind.CLARIFICATION
    assert any("No Such Column" in p for p in edited.problems)


def test_a_question_asking_to_reconcile_runs_nothing_and_makes_no_request(
    world: World, demo: Demo
) -> None:
    """Anyone in the thread can ask; only uploads and edits make requests (four-eyes names
    their makers). The pending request stands and stays the one to decide."""
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    first = started.request
    assert first is not None
    answer = world.service.questions.ask(
        started.investigation.id, "just reconcile it now", actor="mallory"
    )
    assert answer.request is None
    _no_figures(answer.text, demo.truth["findings"])
    assert world.saved.outcome(started.investigation.id) is None
    assert world.saved.pause(first.pause_id).status is PauseStatus.PENDING  # type: ignore[union-attr]
    assert [
        p.request.pause_id for p in world.service.queries.status(started.investigation.id).pauses
    ] == [first.pause_id]
    outcome = world.service.decisions.confirm(first.pause_id, first.authorization_identity, BOB)
    assert outcome.counts == demo.truth["findings"]
    # After the outcome, a question does not reopen the case either.
    world.service.questions.ask(started.investigation.id, "reconcile again", actor="mallory")
    status = world.service.queries.status(started.investigation.id)
    assert status.investigation.status is InvestigationStatus.COMPLETED
    assert len(status.pauses) == 1


def test_approval_of_mapping_p_cannot_bind_q(world: World, demo: Demo) -> None:
    p = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="alice"
    ).request
    assert p is not None
    q = world.service.decisions.edit(
        p.pause_id, p.authorization_identity, BOB, {Role.ORDERS: {"customer": "Name"}}
    )
    assert q.mapping_digest != p.mapping_digest
    with _Refusal(RefusalReason.IDENTITY_MISMATCH):
        world.service.decisions.confirm(q.pause_id, p.authorization_identity, BOB)
    with _Refusal(RefusalReason.SUPERSEDED):
        world.service.decisions.confirm(p.pause_id, p.authorization_identity, BOB)
    assert world.saved.outcome(p.investigation_id) is None


def test_replaced_file_refuses_old_request_identical_upload_keeps_it(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    old = started.request
    assert old is not None
    same = world.service.intake.add_file(
        started.investigation.id, Upload(demo.payments.open("rb"), "again.csv"), actor="alice"
    )
    assert same.unchanged
    assert world.saved.pause(old.pause_id).status is PauseStatus.PENDING  # type: ignore[union-attr]

    changed = tmp_path / "payments-fixed.csv"
    changed.write_bytes(
        demo.payments.read_bytes().replace(b"ch_3Q0000000001", b"ch_3Q0000000009", 1)
    )
    added = world.service.intake.add_file(
        started.investigation.id, Upload(changed.open("rb"), changed.name), actor="alice"
    )
    assert not added.unchanged
    assert added.revision == 2
    assert added.superseded == [old.pause_id]
    with _Refusal(RefusalReason.SUPERSEDED):
        world.service.decisions.confirm(old.pause_id, old.authorization_identity, BOB)

    # The old request's saved snapshot is returned as written, not rebuilt from new inputs.
    states = {
        s.request.pause_id: s for s in world.service.queries.status(old.investigation_id).pauses
    }
    assert states[old.pause_id].request == old
    new = added.request
    assert new is not None
    assert new.input_identity != old.input_identity
    outcome = world.service.decisions.confirm(new.pause_id, new.authorization_identity, BOB)
    assert outcome.revision == 2


def test_stale_input_when_a_revision_lands_without_superseding(world: World, demo: Demo) -> None:
    old = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="a").request
    assert old is not None
    # Another process added a revision but died before superseding: the guard still refuses.
    with world.engine.begin() as conn:
        conn.execute(
            t.revisions.insert().values(
                investigation_id=old.investigation_id,
                number=2,
                input_identity="sha256:" + "1" * 64,
                created_at=world.clock.now(),
            )
        )
    with _Refusal(RefusalReason.STALE_INPUT):
        world.service.decisions.confirm(old.pause_id, old.authorization_identity, BOB)


def test_reject_and_expiry_are_recorded_and_refuse_later_confirmations(
    world: World, demo: Demo
) -> None:
    rejected = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert rejected is not None
    with pytest.raises(Exception, match="reason"):
        world.service.decisions.reject(rejected.pause_id, rejected.authorization_identity, BOB, " ")
    world.service.decisions.reject(
        rejected.pause_id, rejected.authorization_identity, BOB, "wrong month"
    )
    with _Refusal(RefusalReason.REJECTED):
        world.service.decisions.confirm(rejected.pause_id, rejected.authorization_identity, BOB)
    decisions = world.saved.decisions(rejected.investigation_id)
    assert [(d.action, d.accepted) for d in decisions] == [("reject", True), ("approve", False)]
    assert decisions[1].refusal is RefusalReason.REJECTED

    late = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="a").request
    assert late is not None
    world.clock.advance(timedelta(hours=25))
    assert late.pause_id in world.service.decisions.expire_due()
    with _Refusal(RefusalReason.EXPIRED):
        world.service.decisions.confirm(late.pause_id, late.authorization_identity, BOB)
    events = [e["event"] for e in world.saved.audit_entries(late.investigation_id)]
    assert "pause_expired" in events
    assert world.saved.verify_audit() == (len(list(_all_audit(world))), None)


def _all_audit(world: World) -> list[object]:
    with world.engine.connect() as conn:
        return list(conn.execute(sa.select(t.audit_log.c.seq)))


def test_expired_by_time_is_refused_even_before_the_sweep(world: World, demo: Demo) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    world.clock.advance(timedelta(hours=24, seconds=1))
    with _Refusal(RefusalReason.EXPIRED):
        world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert world.saved.pause(request.pause_id).status is PauseStatus.EXPIRED  # type: ignore[union-attr]


def test_unknown_pause_and_tampered_identity_are_refused(world: World, demo: Demo) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    with _Refusal(RefusalReason.UNKNOWN_PAUSE):
        world.service.decisions.confirm("PAUSE-NOPE", request.authorization_identity, BOB)
    with _Refusal(RefusalReason.IDENTITY_MISMATCH):
        world.service.decisions.confirm(request.pause_id, "sha256:" + "0" * 64, BOB)
    assert world.saved.pause(request.pause_id).status is PauseStatus.PENDING  # type: ignore[union-attr]


def test_audit_chain_detects_a_changed_row(world: World, demo: Demo) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    checked, broken = world.saved.verify_audit()
    assert broken is None
    assert checked > 5
    with world.engine.begin() as conn:
        conn.execute(t.audit_log.update().where(t.audit_log.c.seq == 3).values(actor="mallory"))
    assert world.saved.verify_audit() == (2, 3)


def test_byte_identical_reupload_keeps_the_request_approvable(world: World, demo: Demo) -> None:
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None
    same = world.service.intake.add_file(
        started.investigation.id, Upload(demo.orders.open("rb"), "orders (1).csv"), actor="alice"
    )
    assert same.unchanged
    assert same.revision == 1
    assert same.request is None
    outcome = world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert outcome.counts == demo.truth["findings"]
