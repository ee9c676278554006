"""Each channel reconciles under its own policy, kept in the database (issue 41).

A channel is under the configured policy (the seed) until a version is put in force there; a
request is bound to the version in force in its own channel, and is refused once that version
changes, whatever happens in other channels. On SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.channel_policy import TERMINAL_CHANNEL, record_of
from agent.data.policy import Policy, load_policy
from agent.domain import Approver, RefusalReason
from agent.errors import ApprovalRefusedError, PolicyConflictError
from bot.presentation.request_text import render_request

from .conftest import Demo, World, uploads

BOB = Approver(user="bob")
WIDE_WINDOW = "amount_tolerance_minor = 0\nwindow_days_after = 100\n"


def _policy(folder: Path, text: str) -> Policy:
    path = folder / "team.toml"
    path.write_text(text, encoding="utf-8")
    return load_policy(path)


def _put_in_force(world: World, channel: str, policy: Policy, by: str = "carol") -> None:
    with world.uow() as uow:
        uow.policies.add(
            record_of(channel, policy, since=world.clock.now(), by=by, source="approved change"),
            after=uow.policies.in_force(channel),
        )


def _start(world: World, demo: Demo, channel: str, thread: str):  # type: ignore[no-untyped-def]
    request = world.service.intake.start(
        uploads(demo.orders, demo.payments), requested_by="alice", channel=channel, thread_ts=thread
    ).request
    assert request is not None
    return request


def test_each_channel_reconciles_under_the_policy_in_force_there(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    wide = _policy(tmp_path, WIDE_WINDOW)
    _put_in_force(world, "C-TEAM", wide)

    team = _start(world, demo, "C-TEAM", "1.1")
    other = _start(world, demo, "C-OTHER", "2.1")

    assert team.policy_version == wide.version
    assert other.policy_version == Policy().version
    done = world.service.decisions.confirm(team.pause_id, team.authorization_identity, BOB)
    assert done.summary["policy_version"] == wide.version
    assert done.counts["capture_outside_window"] == 0  # the 100-day window applied
    plain = world.service.decisions.confirm(other.pause_id, other.authorization_identity, BOB)
    assert plain.counts == demo.truth["findings"]
    assert demo.truth["findings"]["capture_outside_window"] > 0


def test_a_change_in_one_channel_refuses_its_pending_requests_and_no_other_channel_s(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    team = _start(world, demo, "C-TEAM", "1.1")
    other = _start(world, demo, "C-OTHER", "2.1")
    wide = _policy(tmp_path, WIDE_WINDOW)

    _put_in_force(world, "C-TEAM", wide)

    with pytest.raises(ApprovalRefusedError) as refused:
        world.service.decisions.confirm(team.pause_id, team.authorization_identity, BOB)
    assert refused.value.reason == RefusalReason.POLICY_CHANGED
    assert wide.version[:19] in str(refused.value)
    outcome = world.service.decisions.confirm(other.pause_id, other.authorization_identity, BOB)
    assert outcome.summary["policy_version"] == Policy().version
    fresh = world.service.intake.investigate_again(team.investigation_id, actor="alice")
    assert fresh.policy_version == wide.version
    assert world.saved.verify_audit()[1] is None


def test_a_channel_s_history_shows_each_version_put_in_force_there(
    world: World, tmp_path: Path
) -> None:
    policies = world.service.policies
    assert policies.of_channel("C-TEAM").seeded
    assert policies.of_channel("C-TEAM").policy.version == Policy().version
    wide = _policy(tmp_path, WIDE_WINDOW)
    before, _ = world.saved.verify_audit()

    _put_in_force(world, "C-TEAM", Policy(), by="seed")
    _put_in_force(world, "C-TEAM", wide, by="dave")

    shown = policies.of_channel("C-TEAM")
    assert not shown.seeded
    assert [r.version for r in shown.history] == [Policy().version, wide.version]
    assert [r.by for r in shown.history] == ["seed", "dave"]
    assert shown.policy.version == wide.version
    assert shown.policy.window_days_after == 100
    assert policies.of_channel("C-OTHER").seeded
    assert policies.of_channel(None).channel == TERMINAL_CHANNEL
    assert world.saved.verify_audit() == (before + 2, None), "each version audited, chained"


def test_a_version_s_rules_read_back_as_the_same_policy(tmp_path: Path) -> None:
    words = (
        'paid_order_statuses = ["Closed", "paid"]\n'
        "window_hours_before = 2\n"
        "[order_status_words]\n"
        '"Erledigt" = "paid"\n'
    )
    policy = _policy(tmp_path, words)
    record = record_of("C", policy, since=_now(), by="x", source="approved change")

    assert record.policy().version == policy.version == record.version
    assert record.policy().rule_values() == policy.rule_values()


def _now() -> datetime:
    return datetime.now(UTC)


def test_a_version_put_in_force_after_a_decision_read_the_policy_makes_it_conflict(
    world: World, tmp_path: Path
) -> None:
    """The interleaving that let two changes of one channel both be approved: a decision reads
    the version in force (its guard compares it), another decision then puts a version in
    force and commits, and the first writes. It must be refused, not stacked on top."""
    if world.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one unit of work at a time: no read-then-write interleaving")
    wide = _policy(tmp_path, WIDE_WINDOW)
    narrow = _policy(tmp_path, "window_days_after = 7\n")
    with world.uow() as first:
        read = first.policies.in_force("C")
        assert read is None, "the channel is under the seed"
        _put_in_force(world, "C", wide)  # the other decision, committed meanwhile
        with pytest.raises(PolicyConflictError):
            first.policies.add(
                record_of("C", narrow, since=_now(), by="bob", source="approved change"),
                after=read,
            )
    with world.uow() as uow:
        assert [r.version for r in uow.policies.history("C")] == [wide.version]
        assert uow.policies.in_force("C").number == 1  # type: ignore[union-attr]


def test_a_channel_s_own_status_words_are_proposed_there_and_asked_elsewhere(
    world: World, demo: Demo, tmp_path: Path
) -> None:
    """Inference reads values by the words of the policy in force in the case's channel: a
    team's word for paid is proposed, shown, in its channel's request, while the same files in
    a channel without that word stop with a question."""
    text = demo.orders.read_text(encoding="utf-8-sig").replace(",paid,", ",Verbucht,")
    orders = tmp_path / "orders.csv"
    orders.write_text(text, encoding="utf-8")
    _put_in_force(world, "C-DE", Policy(order_status_words={"Verbucht": "paid"}))

    own = world.service.intake.start(
        uploads(orders, demo.payments), requested_by="dave", channel="C-DE", thread_ts="1.1"
    ).request
    other = world.service.intake.start(
        uploads(orders, demo.payments), requested_by="dave", channel="C-X", thread_ts="2.1"
    ).request

    assert own is not None and own.approvable, own.problems if own else None
    assert own.mapping is not None and own.mapping.orders.options.statuses is not None
    assert own.mapping.orders.options.statuses.paid == ("verbucht",)
    assert "paid = verbucht" in render_request(own), "the approver sees the meaning"
    assert other is not None and not other.approvable
    assert any("verbucht" in problem for problem in other.problems)
