"""The engine's faster plan gives the results of the plan before it, on the cases it rebuilt.

The engine reads ids, currencies and row kinds from the loaded files by row number instead of
carrying them on every row, builds the row ledger from its per-unit tables (the head row of each
order id, the other rows of ids on several rows, the rows without an id), and writes words as
ENUM types. These tests pin what that must not change: the evidence rows and ids of conflicting
and unreadable ids, refunds, repeated payments, the ledger of every row, and the order of the
findings and of the exceptions CSV, including findings of both files at one row number (the
payments file's first: the order the CSV was written in, now stated).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from agent.data.policy import Policy
from agent.data.reconcile import Reconciliation, connect, reconcile
from agent.data.schema import AmountReading, DatasetMapping, Mapping, ReadingOptions, Role, RowKinds
from tests.unit.data.test_ledger_property import ORDER_COLUMNS, PAYMENT_COLUMNS


def _mapping(kinds: RowKinds | None = None) -> Mapping:
    amounts = {"order_amount": AmountReading(), "captured_amount": AmountReading()}
    return Mapping(
        orders=DatasetMapping(columns=ORDER_COLUMNS, options=ReadingOptions(amounts=amounts)),
        payments=DatasetMapping(
            columns=PAYMENT_COLUMNS, options=ReadingOptions(amounts=amounts, kinds=kinds)
        ),
    )


def _write(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> tuple[Path, str]:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path, path.name


def _reconcile(
    tmp_path: Path,
    orders: list[tuple[str, ...]],
    payments: list[tuple[str, ...]],
    kinds: RowKinds | None = None,
) -> Reconciliation:
    files = {
        Role.ORDERS: _write(
            tmp_path / "orders.csv", ["order_id", "total", "currency", "status"], orders
        ),
        Role.PAYMENTS: _write(
            tmp_path / "payments.csv",
            ["payment_id", "order_id", "amount", "currency", "status"],
            payments,
        ),
    }
    return reconcile(files, _mapping(kinds), Policy(), con=connect())


def _lines(run: Reconciliation, tmp_path: Path) -> list[dict[str, str]]:
    path = tmp_path / "exceptions.csv"
    written = run.export_csv(path)
    with path.open(newline="", encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    assert len(lines) == written
    return lines


def _ledger(run: Reconciliation, role: Role) -> dict[str, object]:
    (ledger,) = [item for item in run.ledger if item.role is role]
    return {
        "matched": ledger.matched,
        "findings": ledger.findings,
        "ignored": dict(ledger.ignored),
        "unreadable": dict(ledger.unreadable),
    }


def test_rows_of_ids_on_several_rows_are_evidence_or_continuations(tmp_path: Path) -> None:
    orders = [
        ("1001", "10.00", "USD", "paid"),  # 1: head of 1001
        ("1001", "", "", ""),  # 2: a further line item of 1001
        ("1001", "12.00", "USD", "paid"),  # 3: another total under 1001: a conflict
        ("1002", "20.00", "USD", "paid"),  # 4: head of 1002
        ("1002", "20.00", "USD", "paid"),  # 5: the same total again: a continuation
        ("1003", "abc", "USD", "paid"),  # 6: head of 1003 does not read
        ("1003", "30.00", "USD", "paid"),  # 7: an amount under an unreadable head
        ("1004", "40.00", "USD", "voided"),  # 8: voided, nobody paid
        ("", "", "", ""),  # 9: no id and no amount: line-item detail
        ("", "5.00", "USD", "paid"),  # 10: an amount without an id
        ("1005", "", "", ""),  # 11: an id whose rows carry no amount
        ("1005", "", "", ""),  # 12
    ]
    payments = [
        ("ch_1", "#1001", "10.00", "usd", "succeeded"),  # 1: names the conflicting id
        ("ch_2", "#1002", "20.00", "usd", "succeeded"),  # 2: matches 1002
        ("ch_3", "#1003", "30.00", "usd", "succeeded"),  # 3: names the unreadable id
    ]
    run = _reconcile(tmp_path, orders, payments)
    found = [(f.category, f.reason, f.evidence[0].rows, f.order_ids) for f in run.findings(None)]
    assert found == [
        ("unreadable_row", "unreadable_amount", [6, 7], ["1003"]),
        ("unreadable_row", "empty_order_id", [10], []),
        ("unreadable_row", "empty_amount", [11], ["1005"]),
        ("conflicting_duplicate_order", None, [1, 3], ["1001"]),
    ]
    conflict = run.findings("conflicting_duplicate_order")[0]
    assert conflict.payment_ids == ["ch_1"]
    assert conflict.evidence[1].rows == [1]
    assert _ledger(run, Role.ORDERS) == {
        "matched": 1,
        "findings": 3,
        "ignored": {"line_item_continuation": 3, "no_order_id": 1, "voided_without_payment": 1},
        "unreadable": {"empty_order_id": 1, "unreadable_amount": 1, "empty_amount": 1},
    }
    assert _ledger(run, Role.PAYMENTS) == {
        "matched": 1,
        "findings": 2,
        "ignored": {},
        "unreadable": {},
    }
    ignored = [
        (line["reason"], line["order_ids"], line["orders_rows"])
        for line in _lines(run, tmp_path)
        if line["category"] == "ignored"
    ]
    assert ignored == [
        ("line_item_continuation", "1001", "2"),
        ("line_item_continuation", "1002", "5"),
        ("voided_without_payment", "1004", "8"),
        ("no_order_id", "", "9"),
        ("line_item_continuation", "1005", "12"),
    ]


def test_findings_of_both_files_at_one_row_number_list_the_payment_row_first(
    tmp_path: Path,
) -> None:
    orders = [
        ("1001", "10.00", "USD", "paid"),
        ("", "5.00", "USD", "paid"),  # 2: an amount without an order id
        ("1003", "30.00", "USD", "paid"),
    ]
    payments = [
        ("ch_1", "#1001", "10.00", "usd", "succeeded"),
        ("", "#1003", "30.00", "usd", "succeeded"),  # 2: no payment id
        ("ch_3", "#1003", "30.00", "usd", "succeeded"),
    ]
    run = _reconcile(tmp_path, orders, payments)
    everything = run.findings(None)
    assert [(f.reason, f.evidence[0].file, f.evidence[0].rows) for f in everything] == [
        ("empty_payment_id", "payments.csv", [2]),
        ("empty_order_id", "orders.csv", [2]),
    ]
    assert run.findings(limit=1) == everything[:1]
    lines = _lines(run, tmp_path)
    assert [(line["reason"], line["orders_rows"], line["payments_rows"]) for line in lines] == [
        ("empty_payment_id", "", "2"),
        ("empty_order_id", "2", ""),
    ]


@pytest.mark.parametrize("kinds", [RowKinds(capture=("paid",), refund=("refunded",))])
def test_refunds_at_an_order_findings_row_number_come_first(
    tmp_path: Path, kinds: RowKinds
) -> None:
    orders = [
        ("1001", "10.00", "USD", "paid"),
        ("1002", "20.00", "USD", "paid"),  # 2: nobody paid it
        ("1003", "30.00", "USD", "paid"),  # 3: refunded, never captured
        ("1004", "40.00", "EUR", "paid"),  # 4: captured in another currency
        ("1005", "50.00", "USD", "paid"),  # 5: paid, refunded in another currency
    ]
    payments = [
        ("ch_1", "#1001", "10.00", "usd", "paid"),
        ("re_2", "#1003", "5.00", "usd", "refunded"),  # 2
        ("ch_4", "#1004", "40.00", "usd", "paid"),  # 3
        ("re_5", "#1005", "1.00", "eur", "refunded"),  # 4
        ("ch_5", "#1005", "50.00", "usd", "paid"),  # 5
    ]
    run = _reconcile(tmp_path, orders, payments, kinds)
    found = [
        (f.category, f.reason, [(e.file, e.rows) for e in f.evidence]) for f in run.findings(None)
    ]
    # Order 1003 is in one finding, its own, with the refund that returned money never taken
    # as its evidence (not a second finding of the same order for the refund row).
    assert found == [
        ("order_without_capture", None, [("orders.csv", [2])]),
        ("order_without_capture", None, [("orders.csv", [3]), ("payments.csv", [2])]),
        ("currency_mismatch", "refund", [("orders.csv", [5]), ("payments.csv", [4])]),
        ("currency_mismatch", None, [("orders.csv", [4]), ("payments.csv", [3])]),
    ]
    lines = _lines(run, tmp_path)
    assert [(line["category"], line["reason"]) for line in lines] == [
        (category, reason or "") for category, reason, _ in found
    ]
    assert _ledger(run, Role.PAYMENTS) == {
        "matched": 2,
        "findings": 3,
        "ignored": {},
        "unreadable": {},
    }


def test_repeated_and_multi_order_payments_keep_their_evidence(tmp_path: Path) -> None:
    orders = [
        ("1001", "10.00", "USD", "paid"),
        ("1002", "20.00", "USD", "paid"),
        ("1003", "5.00", "USD", "paid"),
        ("1004", "7.00", "USD", "paid"),
    ]
    payments = [
        ("ch_1", "#1001", "10.00", "usd", "succeeded"),  # 1
        ("ch_2", "#1002", "20.00", "usd", "succeeded"),  # 2: repeated on rows 2 and 4
        ("ch_x", "#1003 #1004", "12.00", "usd", "succeeded"),  # 3: names two orders
        ("ch_2", "#1002", "20.00", "usd", "succeeded"),  # 4
        ("ch_f", "#1001", "10.00", "usd", "failed"),  # 5: a failed attempt
    ]
    run = _reconcile(tmp_path, orders, payments)
    found = [
        (f.category, f.order_ids, f.payment_ids, [(e.file, e.rows) for e in f.evidence])
        for f in run.findings(None)
    ]
    assert found == [
        (
            "multi_order_payment",
            ["1003", "1004"],
            ["ch_x"],
            [("orders.csv", [3, 4]), ("payments.csv", [3])],
        ),
        ("duplicate_payment_row", [], ["ch_2"], [("payments.csv", [2, 4])]),
    ]
    assert _ledger(run, Role.ORDERS) == {
        "matched": 2,
        "findings": 2,
        "ignored": {},
        "unreadable": {},
    }
    assert _ledger(run, Role.PAYMENTS) == {
        "matched": 1,
        "findings": 3,
        "ignored": {"failed_attempt": 1},
        "unreadable": {},
    }
