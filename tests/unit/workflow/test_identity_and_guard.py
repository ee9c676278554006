"""Canonical JSON, digests, and the guard's checks in their order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent.approval import check_confirmation, may_approve, who_may_approve
from agent.data.schema import DatasetMapping, Mapping, ReadingOptions, Role
from agent.domain import (
    ApprovalRequest,
    Approver,
    ApproverPolicy,
    DatasetRef,
    PauseKind,
    PauseState,
    PauseStatus,
    RefusalReason,
)
from agent.errors import ApprovalRefusedError, WorkflowError
from agent.identity import (
    authorization_identity,
    canonical_json,
    digest,
    input_identity,
    mapping_digest,
)
from bot.terminal.workflow_cli import parse_edit

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
MAPPING = Mapping(
    orders=DatasetMapping(
        columns={"order_id": "Name", "order_amount": "Total"}, options=ReadingOptions()
    ),
    payments=DatasetMapping(
        columns={"payment_id": "id", "order_id": "ref", "captured_amount": "Amount"},
        options=ReadingOptions(default_currency="USD"),
    ),
)
FILES = {
    Role.ORDERS: DatasetRef(role=Role.ORDERS, name="o.csv", size=1, digest="sha256:" + "a" * 64),
    Role.PAYMENTS: DatasetRef(
        role=Role.PAYMENTS, name="p.csv", size=1, digest="sha256:" + "b" * 64
    ),
}
INPUTS = input_identity({role: ref.digest for role, ref in FILES.items()})


def test_canonical_json_is_sorted_compact_and_refuses_floats() -> None:
    assert canonical_json({"b": 1, "a": ["x", {"d": None, "c": "é"}]}) == (
        '{"a":["x",{"c":"é","d":null}],"b":1}'.encode()
    )
    with pytest.raises(TypeError):
        canonical_json({"amount": 1.5})
    assert digest({"a": 1}) == digest({"a": 1})
    assert digest({"a": 1}).startswith("sha256:")


def test_input_identity_binds_bytes_to_roles() -> None:
    swapped = input_identity(
        {Role.ORDERS: FILES[Role.PAYMENTS].digest, Role.PAYMENTS: FILES[Role.ORDERS].digest}
    )
    assert swapped != INPUTS


def test_mapping_digest_changes_with_a_reading_option() -> None:
    other = MAPPING.model_copy(
        update={"payments": MAPPING.payments.model_copy(update={"options": ReadingOptions()})}
    )
    assert mapping_digest(other) != mapping_digest(MAPPING)


def _state(
    status: PauseStatus = PauseStatus.PENDING,
    policy: ApproverPolicy | None = None,
    mapping_digest_value: str | None = None,
) -> PauseState:
    digest_value = mapping_digest_value or mapping_digest(MAPPING)
    request = ApprovalRequest(
        pause_id="PAUSE-1",
        investigation_id="INV-1",
        kind=PauseKind.CONFIRMATION,
        revision=1,
        files=list(FILES.values()),
        input_identity=INPUTS,
        mapping=MAPPING,
        mapping_digest=digest_value,
        fields=[],
        clarifications=[],
        problems=[],
        warnings=[],
        rows={},
        policy_version="p1",
        authorization_identity=authorization_identity(
            pause_id="PAUSE-1",
            investigation_id="INV-1",
            revision=1,
            input_identity=INPUTS,
            mapping_digest=digest_value,
            policy_version="p1",
        ),
        requested_by="alice",
        channel=None,
        thread_ts=None,
        created_at=NOW,
        expires_at=NOW + timedelta(hours=24),
        approver_policy=policy or ApproverPolicy(),
        answers={},
        message="",
    )
    return PauseState(request=request, status=status, decided_by="bob", decided_at=NOW)


def _check(state: PauseState, **overrides: object) -> None:
    facts: dict[str, object] = {
        "submitted_identity": state.request.authorization_identity,
        "approver": Approver(user="bob"),
        "current_input_identity": INPUTS,
        "current_policy_version": "p1",
        "now": NOW,
    }
    facts.update(overrides)
    check_confirmation(state, **facts)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("state", "overrides", "reason"),
    [
        (_state(PauseStatus.CONSUMED), {}, RefusalReason.ALREADY_CONSUMED),
        (_state(PauseStatus.CLAIMED), {}, RefusalReason.ALREADY_CLAIMED),
        (_state(PauseStatus.REJECTED), {}, RefusalReason.REJECTED),
        (_state(PauseStatus.SUPERSEDED), {}, RefusalReason.SUPERSEDED),
        (_state(PauseStatus.EXPIRED), {}, RefusalReason.EXPIRED),
        (_state(), {"now": NOW + timedelta(hours=24)}, RefusalReason.EXPIRED),
        (_state(), {"submitted_identity": "sha256:x"}, RefusalReason.IDENTITY_MISMATCH),
        (
            _state(policy=ApproverPolicy(approvers=("U1", "S_FIN"))),
            {},
            RefusalReason.NOT_AUTHORIZED,
        ),
        (
            _state(policy=ApproverPolicy(self_approval=False)),
            {"approver": Approver(user="alice")},
            RefusalReason.NOT_AUTHORIZED,
        ),
        (_state(), {"current_policy_version": "p2"}, RefusalReason.POLICY_CHANGED),
        (
            _state(PauseStatus.FAILED),
            {"current_policy_version": "p2"},
            RefusalReason.POLICY_CHANGED,
        ),
        (_state(), {"current_input_identity": "sha256:other"}, RefusalReason.STALE_INPUT),
        (_state(mapping_digest_value="sha256:" + "f" * 64), {}, RefusalReason.MAPPING_MISMATCH),
    ],
)
def test_guard_refuses_with_its_reason(
    state: PauseState, overrides: dict[str, object], reason: RefusalReason
) -> None:
    with pytest.raises(ApprovalRefusedError) as refused:
        _check(state, **overrides)
    assert refused.value.reason == reason


def test_guard_refuses_a_request_made_under_another_policy_in_words_and_in_order() -> None:
    old, new = "sha256:" + "1" * 64, "sha256:" + "2" * 64
    state = _state()
    request = state.request.model_copy(update={"policy_version": old})
    state = state.model_copy(update={"request": request})
    with pytest.raises(ApprovalRefusedError) as refused:
        _check(state, current_policy_version=new)
    assert refused.value.reason == RefusalReason.POLICY_CHANGED
    words = str(refused.value)
    assert "policy changed" in words and "new request" in words
    assert f"sha256:{'1' * 12}" in words and f"sha256:{'2' * 12}" in words
    assert "1" * 13 not in words  # the short forms, not the whole digests
    _check(state, current_policy_version=old)
    # After the identity and the approver (who may not approve learns no more), before inputs.
    with pytest.raises(ApprovalRefusedError) as refused:
        _check(state, current_policy_version=new, submitted_identity="sha256:x")
    assert refused.value.reason == RefusalReason.IDENTITY_MISMATCH
    restricted = request.model_copy(update={"approver_policy": ApproverPolicy(approvers=("U1",))})
    with pytest.raises(ApprovalRefusedError) as refused:
        _check(state.model_copy(update={"request": restricted}), current_policy_version=new)
    assert refused.value.reason == RefusalReason.NOT_AUTHORIZED
    with pytest.raises(ApprovalRefusedError) as refused:
        _check(state, current_policy_version=new, current_input_identity="sha256:other")
    assert refused.value.reason == RefusalReason.POLICY_CHANGED


def test_guard_passes_a_valid_confirmation_and_names_who_may_approve() -> None:
    _check(_state())
    _check(_state(PauseStatus.FAILED))  # a failed resume may be approved again (the retry)
    policy = ApproverPolicy(approvers=("U1", "S_FIN"))
    assert may_approve(policy, Approver(user="U9", groups=("S_FIN",)), "alice")
    with pytest.raises(ApprovalRefusedError, match="U1, S_FIN"):
        _check(_state(policy=policy))


def test_parse_edit_reads_fields_roles_and_columns_with_spaces() -> None:
    assert parse_edit('payments.captured_amount="Amount Captured" order_amount=Total') == {
        Role.PAYMENTS: {"captured_amount": "Amount Captured"},
        Role.ORDERS: {"order_amount": "Total"},
    }
    assert parse_edit("payments.captured_amount=Amount Captured") == {
        Role.PAYMENTS: {"captured_amount": "Amount Captured"}
    }
    with pytest.raises(WorkflowError, match=r"orders\.currency or payments\.currency"):
        parse_edit("currency=EUR")


def test_a_refusal_in_words_names_each_person_once() -> None:
    # Issue 38: a maker who is also an approver was named as allowed and as excluded.
    policy = ApproverPolicy(approvers=("bob", "dana"), self_approval=False)
    assert who_may_approve(policy, ("alice", "bob")) == (
        "dana, except those who made this request (alice, bob)"
    )
    assert who_may_approve(policy, "alice") == "bob, dana, except the requester (alice)"
    assert who_may_approve(ApproverPolicy(self_approval=True), "alice") == "anyone in the channel"
