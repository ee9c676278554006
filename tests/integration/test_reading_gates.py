"""Readings that match nothing are questions with the likely fix, and the fix is answerable.

Each case infers a mapping as the bot would, validates it over the whole files, and checks that
the problem names what it saw and the edit that fixes it; then applies that edit (as answers,
the way `edit` and `validate_mapping` pass them) and checks that the files now meet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.normalize import ValidationReport
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Mapping, Role
from agent.data.wording import words_of

N = 40


def _files(tmp_path: Path, order_ids: list[str], references: list[str]) -> dict[Role, Path]:
    orders = tmp_path / "orders.csv"
    orders.write_text(
        "order_id,total,currency\n"
        + "".join(f"{oid},{10 + i}.00,EUR\n" for i, oid in enumerate(order_ids))
    )
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "payment_id,reference,amount,currency\n"
        + "".join(f'ch_{i},"{ref}",{10 + i}.00,EUR\n' for i, ref in enumerate(references))
    )
    return {Role.ORDERS: orders, Role.PAYMENTS: payments}


def _validate(
    paths: dict[Role, Path], answers: dict[Role, dict[str, str]] | None = None
) -> tuple[Mapping, ValidationReport]:
    proposal = infer_mapping(
        *(inspect_csv(paths[role], paths[role].name, max_bytes=1 << 20) for role in Role),
        answers=answers,
    )
    mapping = proposal.mapping
    assert mapping is not None, proposal.clarifications
    files = {role: (paths[role], paths[role].name) for role in Role}
    return mapping, load_and_validate(connect(), files, mapping, policy=Policy())


@pytest.mark.parametrize(
    ("order_ids", "references", "edit", "answers"),
    [
        (
            [f"WC-{5100 + i}" for i in range(N)],
            [str(5100 + i) for i in range(N)],
            "orders.id_prefix=WC-",
            {Role.ORDERS: {"id_prefix": "WC-"}},
        ),
        (
            [str(1000 + i) for i in range(N)],
            [f"Order #{1000 + i} - {1 + i % 3} items" for i in range(N)],
            "payments.id_pattern='#\\s*(\\d+)'",
            {Role.PAYMENTS: {"id_pattern": r"#\s*(\d+)"}},
        ),
        (
            [str(1000 + i) for i in range(N)],
            [f"00{1000 + i}" for i in range(N)],
            "payments.id_strip_zeros=yes",
            {Role.PAYMENTS: {"id_strip_zeros": "yes"}},
        ),
        (
            [f"00{1000 + i}" for i in range(N)],
            [str(1000 + i) for i in range(N)],
            "edit orders.id_strip_zeros=yes payments.id_strip_zeros=yes)",
            {Role.ORDERS: {"id_strip_zeros": "yes"}},
        ),
        (
            [f"00{1000 + i}" for i in range(N)],
            [f"0{1000 + i}" for i in range(N)],
            "orders.id_strip_zeros=yes payments.id_strip_zeros=yes",
            {Role.ORDERS: {"id_strip_zeros": "yes"}, Role.PAYMENTS: {"id_strip_zeros": "yes"}},
        ),
    ],
    ids=[
        "prefix-on-orders",
        "reference-in-free-text",
        "leading-zeros",
        "leading-zeros-on-orders",
        "leading-zeros-on-both",
    ],
)
def test_a_reading_that_matches_nothing_asks_with_the_likely_fix(
    tmp_path: Path,
    order_ids: list[str],
    references: list[str],
    edit: str,
    answers: dict[Role, dict[str, str]],
) -> None:
    paths = _files(tmp_path, order_ids, references)
    _, report = _validate(paths)
    assert not report.ok
    [problem] = [e for e in words_of(report.errors) if "name an order" in e]
    assert f"of {N} payment references in payments.csv name an order" in problem
    assert edit in problem
    assert f"orders.csv: {N} rows read" in words_of(report.routine)

    # The files show the fix clearly: it is proposed, and it validates (issue 37).
    proposed = {Role(role): options for role, options in report.proposed.items()}
    assert proposed and _validate(paths, proposed)[1].ok
    mapping, fixed = _validate(paths, answers)
    assert fixed.ok, fixed.errors
    assert f"{N} of {N} payment references in payments.csv name an order in orders.csv" in (
        words_of(fixed.routine)
    )
    files = {role: (paths[role], paths[role].name) for role in Role}
    result = run_job(files, mapping, Policy(), tmp_path / "x.csv")
    summary = result.reconciliation.summary()
    assert summary.total_findings == 0
    assert [ledger.matched for ledger in summary.ledger] == [N, N]


def test_the_id_reading_is_part_of_the_mapping_digest(tmp_path: Path) -> None:
    paths = _files(tmp_path, [f"WC-{i}" for i in range(N)], [str(i) for i in range(N)])
    plain, _ = _validate(paths)
    edited, _ = _validate(paths, {Role.ORDERS: {"id_prefix": "WC-"}})
    assert "ids" not in plain.canonical()["orders"]["options"]
    assert edited.canonical()["orders"]["options"]["ids"]["prefix"] == "WC-"
    assert plain.canonical() != edited.canonical()


def test_a_pattern_without_one_capture_group_is_a_clear_error(tmp_path: Path) -> None:
    paths = _files(tmp_path, ["1"], ["1"])
    with pytest.raises(Exception, match="exactly one capture group"):
        _validate(paths, {Role.PAYMENTS: {"id_pattern": r"#\d+"}})


def test_ten_thousand_rows_of_one_order_id_are_not_an_order_id(tmp_path: Path) -> None:
    orders = tmp_path / "orders.csv"
    orders.write_text(
        "store,order_no,total,currency\n"
        + "".join(f"shop1,{7000 + i},{5 + i % 50}.00,USD\n" for i in range(10_000))
    )
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "payment_id,order,amount,currency\n"
        + "".join(f"ch_{i},{7000 + i},{5 + i % 50}.00,USD\n" for i in range(200))
    )
    paths = {Role.ORDERS: orders, Role.PAYMENTS: payments}
    _, report = _validate(paths, {Role.ORDERS: {"order_id": "store"}})
    assert any(
        'column "store" does not look like the order id' in e for e in words_of(report.errors)
    )
    _, fixed = _validate(paths, {Role.ORDERS: {"order_id": "order_no"}})
    assert fixed.ok, fixed.errors


def test_the_same_file_twice_is_said_to_be_identical(tmp_path: Path) -> None:
    paths = _files(tmp_path, [str(i) for i in range(N)], [str(i) for i in range(N)])
    sample = inspect_csv(paths[Role.ORDERS], "a.csv", max_bytes=1 << 20)
    proposal = infer_mapping(sample, sample)
    [question] = [c for c in proposal.clarifications if c.field is None]
    assert "identical" in question.question
    assert "look alike" not in question.question


def test_an_id_column_whose_ids_carry_different_totals_is_not_an_order_id(
    tmp_path: Path,
) -> None:
    # Each "batch" names two rows with different totals (ten orders per batch of twenty rows);
    # each order_no names one row. A repeated id with the same total is a line-item export.
    orders = tmp_path / "orders.csv"
    orders.write_text(
        "batch,order_no,total,currency\n"
        + "".join(f"B{i // 2},{7000 + i},{5 + i}.00,USD\n" for i in range(200))
    )
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "payment_id,order,amount,currency\n"
        + "".join(f"ch_{i},{7000 + i},{5 + i}.00,USD\n" for i in range(200))
    )
    paths = {Role.ORDERS: orders, Role.PAYMENTS: payments}
    _, report = _validate(paths, {Role.ORDERS: {"order_id": "batch"}})
    assert any("100 of its 100 ids carry different totals" in e for e in words_of(report.errors)), (
        report.errors
    )
    _, fixed = _validate(paths, {Role.ORDERS: {"order_id": "order_no"}})
    assert fixed.ok, fixed.errors
    same = tmp_path / "same.csv"
    same.write_text(
        "batch,total,currency\n"
        + "".join(f"{7000 + i // 2},{5 + i // 2}.00,USD\n" for i in range(200))
    )
    _, lines = _validate(
        {Role.ORDERS: same, Role.PAYMENTS: payments}, {Role.ORDERS: {"order_id": "batch"}}
    )
    assert not any("carry different totals" in e for e in words_of(lines.errors)), lines.errors


def test_references_that_each_name_several_orders_are_warned_about(tmp_path: Path) -> None:
    # Small order ids, and an item count in each payment's reference: every reference would
    # name two orders (its own and the count's), and every payment be a multi_order_payment.
    paths = _files(
        tmp_path,
        [str(i) for i in range(1, N + 1)],
        [f"Order {i} - {1 + i % 3} items" for i in range(1, N + 1)],
    )
    _, report = _validate(paths)
    # A warning, not a question: a file whose payments do pay several orders each must stay
    # approvable, and no id pattern could make its references name one order.
    assert report.ok
    [problem] = [w for w in words_of(report.warnings) if "name several orders" in w]
    assert "reconciling reports most payments as multi_order_payment" in problem
    assert "payments.id_pattern=" in problem

    mapping, fixed = _validate(paths, {Role.PAYMENTS: {"id_pattern": r"Order (\d+)"}})
    assert fixed.ok, fixed.errors
    files = {role: (paths[role], paths[role].name) for role in Role}
    summary = run_job(files, mapping, Policy(), tmp_path / "x.csv").reconciliation.summary()
    assert summary.total_findings == 0
