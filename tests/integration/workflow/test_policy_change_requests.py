"""A change to a channel's policy is a request a person approves, through the one guard
(issue 41): proposed with each change in words, approved by someone other than its proposer,
refused once another change is in force, rejected with a reason, edited into a new proposal,
expired; approving it puts the version in force in its channel and makes the channel's pending
requests again under it. On SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from agent.channel_policy import channel_key
from agent.data.policy import Policy
from agent.data.schema import Role
from agent.domain import ApprovalRequest, Approver, PauseKind, PauseStatus, RefusalReason
from agent.errors import ApprovalRefusedError, PolicyProposalError
from agent.identity import policy_change_identity

from .conftest import Demo, World, uploads

ALICE, BOB, CAROL = Approver(user="alice"), Approver(user="bob"), Approver(user="carol")
TEAM = "C-TEAM"


def test_a_proposal_says_each_change_in_words_and_binds_channel_and_versions(
    world: World,
) -> None:
    request = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user
    )

    assert request.kind is PauseKind.POLICY_CHANGE
    change = request.policy_change
    assert change is not None
    assert [c.words for c in change.changes] == [
        "a capture may be up to 7 days after its order (was 30)"
    ]
    assert change.before_version == Policy().version == request.policy_version
    assert change.after_version == Policy(window_days_after=7).version
    assert request.authorization_identity == policy_change_identity(
        pause_id=request.pause_id,
        investigation_id=request.investigation_id,
        channel=TEAM,
        policy_version=change.before_version,
        proposed_version=change.after_version,
    )
    assert not request.approver_policy.self_approval, "four-eyes whatever the bot's setting"


def test_the_proposer_may_not_approve_and_someone_else_puts_it_in_force(world: World) -> None:
    request = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user
    )
    with pytest.raises(ApprovalRefusedError) as refused:
        world.service.policy_changes.approve(
            request.pause_id, request.authorization_identity, ALICE
        )
    assert refused.value.reason == RefusalReason.NOT_AUTHORIZED
    before, _ = world.saved.verify_audit()

    approved = world.service.policy_changes.approve(
        request.pause_id, request.authorization_identity, BOB
    )

    assert approved.superseded == [] and approved.reissued == []
    shown = world.service.policies.of_channel(TEAM)
    assert shown.policy.window_days_after == 7
    assert [(r.by, r.pause_id) for r in shown.history] == [
        ("seed", None),
        (BOB.user, request.pause_id),
    ]
    assert world.service.policies.of_channel("C-OTHER").policy.window_days_after == 30
    assert world.saved.pause(request.pause_id).status is PauseStatus.CONSUMED  # type: ignore[union-attr]
    count, broken = world.saved.verify_audit()
    assert broken is None and count > before
    with pytest.raises(ApprovalRefusedError) as again:
        world.service.policy_changes.approve(
            request.pause_id, request.authorization_identity, CAROL
        )
    assert again.value.reason == RefusalReason.ALREADY_CONSUMED


def test_a_change_made_under_a_version_no_longer_in_force_is_refused(world: World) -> None:
    changes = world.service.policy_changes
    first = changes.propose(TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user)
    second = changes.propose(TEAM, {"amount_tolerance_minor": "0"}, proposed_by=ALICE.user)
    changes.approve(first.pause_id, first.authorization_identity, BOB)

    with pytest.raises(ApprovalRefusedError) as refused:
        changes.approve(second.pause_id, second.authorization_identity, BOB)

    assert refused.value.reason == RefusalReason.POLICY_CHANGED
    assert world.service.policies.of_channel(TEAM).policy.amount_tolerance_minor == 1


def test_concurrent_approvals_put_one_version_in_force_once(world: World) -> None:
    request = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user
    )
    results: list[object] = []

    def approve(approver: Approver) -> None:
        try:
            results.append(
                world.service.policy_changes.approve(
                    request.pause_id, request.authorization_identity, approver
                )
            )
        except ApprovalRefusedError as error:
            results.append(error.reason)

    threads = [threading.Thread(target=approve, args=(a,)) for a in (BOB, CAROL) * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sum(1 for r in results if not isinstance(r, RefusalReason)) == 1
    assert len(results) == 4
    history = world.service.policies.of_channel(TEAM).history
    assert len(history) == 2 and history[0].by == "seed"


def test_a_rejection_needs_a_reason_and_an_edit_is_a_new_proposal(world: World) -> None:
    changes = world.service.policy_changes
    first = changes.propose(TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user)

    edited = changes.edit(
        first.pause_id, first.authorization_identity, BOB, {"amount_tolerance_minor": "0"}
    )

    assert world.saved.pause(first.pause_id).status is PauseStatus.SUPERSEDED  # type: ignore[union-attr]
    assert edited.investigation_id == first.investigation_id
    assert {c.key for c in edited.policy_change.changes} == {  # type: ignore[union-attr]
        "window_days_after",
        "amount_tolerance_minor",
    }
    assert set(edited.requesters) == {ALICE.user, BOB.user}
    with pytest.raises(ApprovalRefusedError) as by_editor:
        changes.approve(edited.pause_id, edited.authorization_identity, BOB)
    assert by_editor.value.reason == RefusalReason.NOT_AUTHORIZED
    with pytest.raises(Exception, match="reason"):
        world.service.decisions.reject(edited.pause_id, edited.authorization_identity, CAROL, "  ")
    world.service.decisions.reject(
        edited.pause_id, edited.authorization_identity, CAROL, "a week is too short"
    )
    with pytest.raises(ApprovalRefusedError) as rejected:
        changes.approve(edited.pause_id, edited.authorization_identity, CAROL)
    assert rejected.value.reason == RefusalReason.REJECTED
    assert world.service.policies.of_channel(TEAM).seeded


def test_a_proposal_expires(world: World) -> None:
    request = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user
    )
    world.clock.advance(world.service.deps.settings.approval_ttl + timedelta(seconds=1))

    with pytest.raises(ApprovalRefusedError) as refused:
        world.service.policy_changes.approve(request.pause_id, request.authorization_identity, BOB)

    assert refused.value.reason == RefusalReason.EXPIRED
    assert world.service.policies.of_channel(TEAM).seeded


def test_approving_supersedes_the_channel_s_pending_requests_and_makes_them_again(
    world: World, demo: Demo
) -> None:
    pending = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="dave", channel=TEAM, thread_ts="1.1"
    ).request
    elsewhere = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="dave", channel="C-X", thread_ts="2.1"
    ).request
    assert pending is not None and elsewhere is not None
    change = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "100"}, proposed_by=ALICE.user
    )

    approved = world.service.policy_changes.approve(
        change.pause_id, change.authorization_identity, BOB
    )

    old = world.saved.pause(pending.pause_id)
    assert old is not None and old.status is PauseStatus.SUPERSEDED
    assert old.reason is not None and "policy of this channel changed" in old.reason
    assert change.pause_id in old.reason
    assert approved.superseded == [pending.investigation_id]
    [again] = approved.reissued
    assert again.investigation_id == pending.investigation_id
    assert again.policy_version == Policy(window_days_after=100).version
    assert world.saved.pause(elsewhere.pause_id).status is PauseStatus.PENDING  # type: ignore[union-attr]
    outcome = world.service.decisions.confirm(again.pause_id, again.authorization_identity, BOB)
    assert outcome.counts["capture_outside_window"] == 0


def test_a_proposal_that_cannot_be_made_names_the_rule(world: World) -> None:
    changes = world.service.policy_changes
    with pytest.raises(PolicyProposalError, match="did you mean window_days_after"):
        changes.propose(TEAM, {"window_days": "7"}, proposed_by=ALICE.user)
    with pytest.raises(PolicyProposalError, match="whole number"):
        changes.propose(TEAM, {"window_days_after": "a week"}, proposed_by=ALICE.user)
    with pytest.raises(PolicyProposalError, match="in force already"):
        changes.propose(TEAM, {"window_days_after": "30"}, proposed_by=ALICE.user)
    with pytest.raises(PolicyProposalError, match="also in"):
        changes.propose(TEAM, {"paid_order_statuses": "paid,voided"}, proposed_by=ALICE.user)
    assert channel_key(None) == "(terminal)"


def test_a_proposal_shows_what_it_would_have_changed_on_the_channel_s_last_reconciliation(
    world: World, demo: Demo
) -> None:
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="dave", channel=TEAM, thread_ts="1.1"
    ).request
    assert request is not None
    done = world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)

    change = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "100"}, proposed_by=ALICE.user
    ).policy_change

    assert change is not None and change.effect is not None
    effect = change.effect
    assert effect.investigation_id == request.investigation_id
    assert effect.before == done.counts
    assert effect.before["capture_outside_window"] > 0
    assert effect.after["capture_outside_window"] == 0
    other = world.service.policy_changes.propose(
        "C-EMPTY", {"window_days_after": "100"}, proposed_by=ALICE.user
    ).policy_change
    assert other is not None and other.effect is None and other.effect_missing is None
    terminal = world.service.policy_changes.propose(
        None, {"window_days_after": "100"}, proposed_by=ALICE.user
    ).policy_change
    assert terminal is not None and terminal.effect is None, "another channel's is not its"


def test_two_changes_of_one_channel_approved_at_once_put_one_in_force(world: World) -> None:
    changes = world.service.policy_changes
    first = changes.propose(TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user)
    second = changes.propose(TEAM, {"amount_tolerance_minor": "0"}, proposed_by=ALICE.user)
    results: dict[str, object] = {}
    start = threading.Barrier(2)

    def approve(request: ApprovalRequest, approver: Approver) -> None:
        start.wait(timeout=30)
        try:
            changes.approve(request.pause_id, request.authorization_identity, approver)
            results[request.pause_id] = "approved"
        except ApprovalRefusedError as error:
            results[request.pause_id] = error.reason

    threads = [
        threading.Thread(target=approve, args=(first, BOB)),
        threading.Thread(target=approve, args=(second, CAROL)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(map(str, results.values())) == ["POLICY_CHANGED", "approved"]
    history = world.service.policies.of_channel(TEAM).history
    assert [r.by for r in history].count("seed") == 1 and len(history) == 2
    policy = world.service.policies.of_channel(TEAM).policy
    assert (policy.window_days_after, policy.amount_tolerance_minor) in ((7, 1), (30, 0))


def test_an_edit_that_cannot_be_made_changes_nothing(world: World) -> None:
    changes = world.service.policy_changes
    request = changes.propose(TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user)

    with pytest.raises(PolicyProposalError, match="window_dayz"):
        changes.edit(request.pause_id, request.authorization_identity, BOB, {"window_dayz": "5"})
    with pytest.raises(PolicyProposalError, match="in force already"):
        changes.edit(
            request.pause_id, request.authorization_identity, BOB, {"window_days_after": "30"}
        )

    assert world.saved.pause(request.pause_id).status is PauseStatus.PENDING  # type: ignore[union-attr]
    assert world.saved.decisions(request.investigation_id) == []
    changes.approve(request.pause_id, request.authorization_identity, BOB)
    assert world.service.policies.of_channel(TEAM).policy.window_days_after == 7


def test_a_proposal_made_under_rules_no_longer_in_force_cannot_be_edited_back(
    world: World,
) -> None:
    changes = world.service.policy_changes
    older = changes.propose(TEAM, {"window_days_after": "7"}, proposed_by=ALICE.user)
    newer = changes.propose(TEAM, {"amount_tolerance_minor": "0"}, proposed_by=ALICE.user)
    changes.approve(newer.pause_id, newer.authorization_identity, BOB)

    with pytest.raises(ApprovalRefusedError) as refused:
        changes.edit(
            older.pause_id, older.authorization_identity, CAROL, {"window_hours_before": "2"}
        )

    assert refused.value.reason == RefusalReason.POLICY_CHANGED
    assert world.service.policies.of_channel(TEAM).policy.amount_tolerance_minor == 0
    with pytest.raises(Exception, match="policy change"):
        world.service.decisions.edit(older.pause_id, older.authorization_identity, CAROL, {})
    assert world.saved.pause(older.pause_id).status is PauseStatus.PENDING  # type: ignore[union-attr]


def test_a_request_made_again_keeps_the_people_s_edits_and_four_eyes_over_them(
    world: World, demo: Demo
) -> None:
    pending = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="dave", channel=TEAM, thread_ts="1.1"
    ).request
    assert pending is not None
    answers = {Role.ORDERS: {"customer": "Lineitem name"}}
    edited = world.service.decisions.edit(
        pending.pause_id, pending.authorization_identity, BOB, answers
    )
    change = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "100"}, proposed_by=ALICE.user
    )

    approved = world.service.policy_changes.approve(
        change.pause_id, change.authorization_identity, CAROL
    )

    [again] = approved.reissued
    assert again.answers == edited.answers
    assert again.mapping is not None and again.mapping.orders.columns["customer"] == "Lineitem name"
    assert BOB.user in again.requesters
    assert approved.superseded_pauses == [edited.pause_id]


def test_what_people_typed_is_shown_whole_and_never_as_a_mention_or_a_link(world: World) -> None:
    from bot.slack.blocks.policy import policy_change_message

    changes = world.service.policy_changes
    request = changes.propose(
        TEAM, {"paid_order_statuses": "paid, <!channel>"}, proposed_by=ALICE.user
    )
    rendered = policy_change_message(request)

    assert "<!channel>" not in rendered.text and "&lt;!channel&gt;" in rendered.text
    assert "<!channel>" not in str(rendered.blocks)
    with pytest.raises(PolicyProposalError, match="may have 1,000"):
        changes.propose(
            TEAM, {"failed_payment_statuses": ", ".join(["declined"] * 200)}, proposed_by="x"
        )


def test_a_case_whose_new_request_cannot_be_made_is_named_to_the_approver(
    world: World, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    pending = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="dave", channel=TEAM, thread_ts="1.1"
    ).request
    assert pending is not None
    change = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "100"}, proposed_by=ALICE.user
    )

    def busy(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the model is busy")

    monkeypatch.setattr(world.service.policy_changes.intake, "investigate_again", busy)
    approved = world.service.policy_changes.approve(
        change.pause_id, change.authorization_identity, BOB
    )

    assert approved.reissued == []
    assert approved.not_reissued == [pending.investigation_id]


def test_a_reconciliation_claimed_before_a_change_is_approved_finishes_under_its_rules(
    world: World, demo: Demo
) -> None:
    """Red team 5a: the approval was decided under the version in force at its claim; a change
    approved while it reconciles does not undo it, nor make it fail."""
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="dave", channel=TEAM, thread_ts="1.1"
    ).request
    assert request is not None
    change = world.service.policy_changes.propose(
        TEAM, {"window_days_after": "100"}, proposed_by=ALICE.user
    )
    during: list[object] = []

    def meanwhile(_claimed: object) -> None:  # the claim is taken; the change goes in force
        during.append(
            world.service.policy_changes.approve(
                change.pause_id, change.authorization_identity, CAROL
            )
        )

    outcome = world.service.decisions.confirm(
        request.pause_id, request.authorization_identity, BOB, on_claimed=meanwhile
    )

    assert during and during[0].superseded == []  # type: ignore[attr-defined]
    assert world.service.policies.of_channel(TEAM).policy.window_days_after == 100
    assert outcome.summary["policy_version"] == request.policy_version == Policy().version
    assert outcome.counts["capture_outside_window"] > 0, "the 30 days it was approved under"
    assert world.saved.pause(request.pause_id).status is PauseStatus.CONSUMED  # type: ignore[union-attr]
