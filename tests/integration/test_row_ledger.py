"""Every row accounted for: each loss reproduced on real-looking exports ends in the ledger.

Each test builds an orders file and a payments file, infers the mapping as the bot would, reads
and reconciles them, and checks that the row in question is where a person would look for it
(the right category, the right row number, the exceptions CSV) and that the ledger adds up.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from agent.data.ingest import inspect_csv
from agent.data.ledger import FileLedger
from agent.data.mapping import infer_mapping
from agent.data.pipeline import JobResult, run_job
from agent.data.policy import Policy
from agent.data.schema import Mapping, Role

PAYMENTS_HEADER = "payment_id,order_id,amount,currency,status\n"


def _write(path: Path, text: str, *, newline: str = "\n") -> Path:
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def _payments(tmp_path: Path, rows: list[tuple[str, str, str]]) -> Path:
    body = "".join(
        f"ch_{i},{ref},{amount},{ccy},succeeded\n" for i, (ref, amount, ccy) in enumerate(rows, 1)
    )
    return _write(tmp_path / "payments.csv", PAYMENTS_HEADER + body)


def _mapping(orders: Path, payments: Path) -> Mapping:
    proposal = infer_mapping(
        inspect_csv(orders, orders.name, max_bytes=1 << 30),
        inspect_csv(payments, payments.name, max_bytes=1 << 30),
    )
    assert proposal.orders.file_name == orders.name
    mapping = proposal.mapping
    assert mapping is not None, proposal.clarifications
    return mapping


def _run(tmp_path: Path, orders: Path, payments: Path, mapping: Mapping | None = None) -> JobResult:
    files = {Role.ORDERS: (orders, orders.name), Role.PAYMENTS: (payments, payments.name)}
    return run_job(
        files, mapping or _mapping(orders, payments), Policy(), tmp_path / "exceptions.csv"
    )


def _exceptions(tmp_path: Path) -> list[dict[str, str]]:
    with (tmp_path / "exceptions.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def _ledgers(result: JobResult) -> tuple[FileLedger, FileLedger]:
    orders, payments = result.reconciliation.summary().ledger
    assert orders.accounted == orders.records
    assert payments.accounted == payments.records
    return orders, payments


def _orders(n: int, *, start: int = 1001) -> list[str]:
    return [f"{start + i},{10 + i}.00,USD" for i in range(n)]


def test_a_two_line_quoted_title_keeps_the_first_order_and_the_row_numbers(
    tmp_path: Path,
) -> None:
    rows = _orders(8)
    orders = _write(
        tmp_path / "orders.csv",
        '"Orders export\nStore: Example Shop"\norder_id,total,currency\n' + "\n".join(rows) + "\n",
    )
    # Every order paid except the first one, which must still be there as row 1.
    payments = _payments(tmp_path, [(r.split(",")[0], r.split(",")[1], "USD") for r in rows[1:]])
    result = _run(tmp_path, orders, payments)
    [finding] = result.reconciliation.findings()
    assert finding.category == "order_without_capture"
    assert finding.order_ids == ["1001"]
    assert finding.evidence[0].rows == [1]
    orders_ledger, payments_ledger = _ledgers(result)
    assert (orders_ledger.records, orders_ledger.matched, orders_ledger.findings) == (8, 7, 1)
    assert payments_ledger.matched == 7


def test_a_header_cell_with_a_line_break_in_a_crlf_file_reads_its_rows(tmp_path: Path) -> None:
    rows = _orders(6)
    orders = _write(
        tmp_path / "orders.csv",
        'order_id,"total\namount",currency\n' + "\n".join(rows) + "\n",
        newline="\r\n",
    )
    payments = _payments(tmp_path, [(r.split(",")[0], r.split(",")[1], "USD") for r in rows])
    files = {Role.ORDERS: (orders, orders.name), Role.PAYMENTS: (payments, payments.name)}
    sample = inspect_csv(orders, orders.name, max_bytes=1 << 20)
    assert sample.layout.columns == ("order_id", "total\r\namount", "currency")
    result = run_job(files, _mapping(orders, payments), Policy(), tmp_path / "x.csv")
    orders_ledger, _ = _ledgers(result)
    assert orders_ledger.records == orders_ledger.matched == 6


def test_an_unpaid_order_whose_amount_does_not_read_is_a_finding_with_its_row(
    tmp_path: Path,
) -> None:
    rows = _orders(10)
    rows[4] = '1005,"1.234,50",USD'
    orders = _write(tmp_path / "orders.csv", "order_id,total,currency\n" + "\n".join(rows) + "\n")
    paid = [r for i, r in enumerate(rows) if i != 4]
    payments = _payments(tmp_path, [(r.split(",")[0], r.split(",")[1], "USD") for r in paid])
    result = _run(tmp_path, orders, payments)
    summary = result.reconciliation.summary()
    assert summary.counts["unreadable_row"] == 1
    assert summary.total_findings == 1
    [finding] = result.reconciliation.findings()
    assert (finding.category, finding.reason, finding.order_ids) == (
        "unreadable_row",
        "unreadable_amount",
        ["1005"],
    )
    assert finding.evidence[0].rows == [5]
    orders_ledger, _ = _ledgers(result)
    assert orders_ledger.unreadable == {"unreadable_amount": 1}
    [line] = [e for e in _exceptions(tmp_path) if e["category"] == "unreadable_row"]
    assert (line["reason"], line["orders_rows"], line["order_ids"]) == (
        "unreadable_amount",
        "5",
        "1005",
    )


def test_orders_whose_currency_does_not_read_are_findings(tmp_path: Path) -> None:
    rows = _orders(10)
    rows[2] = "1003,12.00,US Dollars"
    rows[6] = "1007,16.00,"
    orders = _write(tmp_path / "orders.csv", "order_id,total,currency\n" + "\n".join(rows) + "\n")
    payments = _payments(tmp_path, [(r.split(",")[0], r.split(",")[1], "USD") for r in rows])
    result = _run(tmp_path, orders, payments)
    found = {
        f.order_ids[0]: (f.category, f.reason, f.payment_ids)
        for f in result.reconciliation.findings()
    }
    assert found == {
        "1003": ("unreadable_row", "unreadable_currency", ["ch_3"]),
        "1007": ("unreadable_row", "missing_currency", ["ch_7"]),
    }
    orders_ledger, payments_ledger = _ledgers(result)
    assert orders_ledger.unreadable == {"unreadable_currency": 1, "missing_currency": 1}
    # The payments of an order that does not read are evidence of its finding, not matches.
    assert (payments_ledger.matched, payments_ledger.findings) == (8, 2)


def test_ids_that_differ_inside_stay_two_orders(tmp_path: Path) -> None:
    orders = _write(
        tmp_path / "orders.csv",
        "order_id,total,currency\n"
        + "\n".join(["#10#07,50.00,USD", "1007,70.00,USD", "AB-9,20.00,USD", "ab-9,30.00,USD"])
        + "\n"
        + "\n".join(_orders(6, start=2001))
        + "\n",
    )
    refs = [("#1007", "70.00", "USD"), ("10#07", "50.00", "USD"), ("AB-9", "20.00", "USD")]
    refs += [("ab-9", "30.00", "USD")]
    refs += [(str(2001 + i), f"{10 + i}.00", "USD") for i in range(6)]
    payments = _payments(tmp_path, refs)
    result = _run(tmp_path, orders, payments)
    assert result.reconciliation.summary().total_findings == 0
    orders_ledger, payments_ledger = _ledgers(result)
    assert orders_ledger.matched == 10
    assert payments_ledger.matched == 10


def test_a_repeated_order_id_with_another_total_is_a_conflicting_duplicate(
    tmp_path: Path,
) -> None:
    rows = _orders(8)
    rows.insert(3, "1002,99.00,USD")  # row 4 repeats order 1002 with another total
    rows.insert(5, "1003,12.00,USD")  # row 6 repeats order 1003 with the same total
    orders = _write(tmp_path / "orders.csv", "order_id,total,currency\n" + "\n".join(rows) + "\n")
    payments = _payments(tmp_path, [(str(1001 + i), f"{10 + i}.00", "USD") for i in range(8)])
    result = _run(tmp_path, orders, payments)
    [finding] = result.reconciliation.findings()
    assert finding.category == "conflicting_duplicate_order"
    assert finding.order_ids == ["1002"]
    assert finding.evidence[0].rows == [2, 4]
    assert finding.payment_ids == ["ch_2"]
    orders_ledger, payments_ledger = _ledgers(result)
    assert orders_ledger.ignored == {"line_item_continuation": 1}
    assert (orders_ledger.matched, orders_ledger.findings) == (7, 2)
    assert (payments_ledger.matched, payments_ledger.findings) == (7, 1)
    ignored = [e for e in _exceptions(tmp_path) if e["category"] == "ignored"]
    assert [(e["reason"], e["orders_rows"]) for e in ignored] == [("line_item_continuation", "6")]


def test_unreadable_payments_zero_captures_and_failed_attempts_are_listed(
    tmp_path: Path,
) -> None:
    rows = _orders(6)
    orders = _write(tmp_path / "orders.csv", "order_id,total,currency\n" + "\n".join(rows) + "\n")
    body = "".join(f"ch_{i},{1000 + i},{9 + i}.00,USD,succeeded\n" for i in range(1, 7))
    body += "ch_7,1001,abc,USD,succeeded\n"  # unreadable amount
    body += "ch_8,1002,0.00,USD,succeeded\n"  # captured nothing
    body += "ch_9,1003,13.00,USD,failed\n"  # a failed attempt
    body += ",1004,14.00,USD,succeeded\n"  # no payment id
    payments = _write(tmp_path / "payments.csv", PAYMENTS_HEADER + body)
    result = _run(tmp_path, orders, payments)
    summary = result.reconciliation.summary()
    assert summary.counts["unreadable_row"] == 2
    _, payments_ledger = _ledgers(result)
    assert payments_ledger.matched == 6
    assert payments_ledger.ignored == {"zero_capture": 1, "failed_attempt": 1}
    assert payments_ledger.unreadable == {"unreadable_amount": 1, "empty_payment_id": 1}
    listed = {(e["category"], e["reason"], e["payments_rows"]) for e in _exceptions(tmp_path)}
    assert listed == {
        ("unreadable_row", "unreadable_amount", "7"),
        ("unreadable_row", "empty_payment_id", "10"),
        ("ignored", "zero_capture", "8"),
        ("ignored", "failed_attempt", "9"),
    }


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_line_item_exports_count_every_row(tmp_path: Path, newline: str) -> None:
    lines = ["Name,Total,Currency,Lineitem name"]
    for i in range(1, 9):
        lines.append(f"#{1000 + i},{20 + i}.00,EUR,Mug")
        lines.append(f'#{1000 + i},,,"Tea, green"')
    orders = _write(tmp_path / "orders.csv", "\n".join(lines) + "\n", newline=newline)
    payments = _payments(tmp_path, [(f"#{1000 + i}", f"{20 + i}.00", "EUR") for i in range(1, 9)])
    result = _run(tmp_path, orders, payments)
    orders_ledger, _ = _ledgers(result)
    assert orders_ledger.records == 16
    assert orders_ledger.matched == 8
    assert orders_ledger.ignored == {"line_item_continuation": 8}
