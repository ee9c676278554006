"""The policy version is bound into what an approval covers (docs/design.md §3, §7.7).

Two services share one database and one blob store, as two processes (or one process before and
after a restart with another `RECONBOT_POLICY`) do: a request made under one policy must not be
approved into a reconciliation under other rules.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from agent.data.policy import Policy, load_policy
from agent.dependencies import Dependencies
from agent.domain import ApprovalRequest, Approver, PauseKind, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError
from agent.identity import authorization_identity
from agent.models.offline import OfflineModel
from agent.pause import Transition
from agent.ports import Claim
from agent.usecases import UseCases, build_use_cases

from .conftest import Demo, World, uploads

BOB = Approver(user="bob")
STRICTER = "amount_tolerance_minor = 0\nwindow_days_after = 100\n"


def _service_with(world: World, policy: Policy) -> UseCases:
    """Other use cases on the same database, blobs and clock, configured with `policy`."""
    settings = replace(world.service.deps.settings, policy=policy)
    return build_use_cases(
        Dependencies(world.uow, world.blobs, OfflineModel(), world.clock, settings)
    )


def _identity(request: ApprovalRequest, policy_version: str) -> str:
    """The authorization identity of `request` had it been made under `policy_version`."""
    return authorization_identity(
        pause_id=request.pause_id,
        investigation_id=request.investigation_id,
        revision=request.revision,
        input_identity=request.input_identity,
        mapping_digest=request.mapping_digest,
        policy_version=policy_version,
    )


def _policy_file(folder: Path, text: str, name: str) -> Policy:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return load_policy(path)


def test_a_request_is_bound_to_the_version_of_the_policy_in_force(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    stricter = _policy_file(tmp_path, STRICTER, "stricter.toml")
    service = _service_with(world, stricter)
    request = service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="alice"
    ).request
    assert request is not None
    assert request.kind is PauseKind.CONFIRMATION
    assert request.policy_version == stricter.version != Policy().version
    assert request.authorization_identity == _identity(request, stricter.version)
    assert request.authorization_identity != _identity(request, Policy().version)
    saved = world.saved.pause(request.pause_id)
    assert saved is not None
    assert saved.request.policy_version == stricter.version

    outcome = service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert outcome.summary["policy_version"] == stricter.version
    assert outcome.counts["capture_outside_window"] == 0  # the 100-day window applied
    assert demo.truth["findings"]["capture_outside_window"] > 0


def test_the_same_rules_from_a_file_still_approve_a_request_made_under_the_defaults(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    assert request.policy_version == Policy().version
    # Where the rules come from is not part of the version: a file restating them is the same.
    restated = _policy_file(tmp_path, "amount_tolerance_minor = 1\n", "restated.toml")
    assert restated.source != Policy().source
    after_restart = _service_with(world, restated)
    outcome = after_restart.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert outcome.counts == demo.truth["findings"]
    assert outcome.summary["policy_version"] == request.policy_version


def test_a_pending_approval_is_refused_after_the_policy_changes(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    changed = _policy_file(tmp_path, STRICTER, "changed.toml")
    after_restart = _service_with(world, changed)

    # Refused with a reason that says the rules changed (IDENTITY_MISMATCH, or a code of its own).
    with pytest.raises(ApprovalRefusedError, match=r"(?i)polic") as refused:
        after_restart.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert refused.value.reason == RefusalReason.POLICY_CHANGED
    words = str(refused.value)
    assert "new request" in words
    assert request.policy_version[:19] in words and changed.version[:19] in words
    assert world.saved.outcome(request.investigation_id) is None
    state = world.saved.pause(request.pause_id)
    assert state is not None
    assert state.status is not PauseStatus.CONSUMED
    refusals = [d.refusal for d in world.saved.decisions(request.investigation_id)]
    assert refusals == [RefusalReason.POLICY_CHANGED]

    # The way on: a new request for the same revision, made under the policy now in force.
    fresh = after_restart.intake.investigate_again(request.investigation_id, actor="a")
    assert fresh.policy_version == changed.version
    assert world.saved.pause(request.pause_id).status is PauseStatus.SUPERSEDED  # type: ignore[union-attr]
    outcome = after_restart.decisions.confirm(fresh.pause_id, fresh.authorization_identity, BOB)
    assert outcome.summary["policy_version"] == changed.version
    assert world.saved.verify_audit()[1] is None


def _crash_after_claim(world: World, request: ApprovalRequest) -> None:
    """As if the process that approved `request` died mid-resume: claimed, lease run out."""
    gone = Claim("elsewhere:1:dead", world.clock.now() - timedelta(seconds=1))
    with world.uow() as uow:
        claimed = uow.pauses.apply(
            request.pause_id, Transition.CLAIM, actor=BOB.user, at=world.clock.now(), claim=gone
        )
    assert claimed


def test_an_interrupted_approval_is_not_re_run_under_a_changed_policy(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    _crash_after_claim(world, request)
    changed = _policy_file(tmp_path, STRICTER, "changed.toml")
    after_restart = _service_with(world, changed)

    assert after_restart.recovery.recover() == [request.pause_id]
    state = world.saved.pause(request.pause_id)
    assert state is not None
    assert state.status is PauseStatus.FAILED
    assert state.reason is not None and "policy changed" in state.reason
    assert world.saved.outcome(request.investigation_id) is None
    assert world.saved.claims() == []
    decisions = world.saved.decisions(request.investigation_id)
    assert [(d.action, d.refusal) for d in decisions] == [("resume", RefusalReason.POLICY_CHANGED)]
    assert after_restart.recovery.recover() == []  # reported once

    # Retrying the recorded approval is refused for the same reason; a new request goes on.
    with pytest.raises(ApprovalRefusedError) as refused:
        after_restart.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    assert refused.value.reason == RefusalReason.POLICY_CHANGED
    fresh = after_restart.intake.investigate_again(request.investigation_id, actor="a")
    assert fresh.policy_version == changed.version
    outcome = after_restart.decisions.confirm(fresh.pause_id, fresh.authorization_identity, BOB)
    assert outcome.summary["policy_version"] == changed.version
    assert world.saved.verify_audit()[1] is None


def test_an_interrupted_approval_is_re_run_when_the_rules_are_the_same(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert request is not None
    _crash_after_claim(world, request)
    restated = _policy_file(tmp_path, "amount_tolerance_minor = 1\n", "restated.toml")
    assert _service_with(world, restated).recovery.recover() == [request.pause_id]
    assert world.saved.pause(request.pause_id).status is PauseStatus.CONSUMED  # type: ignore[union-attr]
    outcome = world.saved.outcome(request.investigation_id)
    assert outcome is not None
    assert outcome.counts == demo.truth["findings"]


def test_after_the_policy_changes_a_new_request_carries_the_new_version(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    first = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert first is not None
    changed = _policy_file(tmp_path, STRICTER, "changed.toml")
    after_restart = _service_with(world, changed)
    second = after_restart.intake.start(
        uploads(demo.orders, demo.payments), requested_by="a"
    ).request
    assert second is not None
    assert second.input_identity == first.input_identity
    assert second.mapping_digest == first.mapping_digest
    assert (first.policy_version, second.policy_version) == (Policy().version, changed.version)
    outcome = after_restart.decisions.confirm(second.pause_id, second.authorization_identity, BOB)
    assert outcome.summary["policy_version"] == changed.version
