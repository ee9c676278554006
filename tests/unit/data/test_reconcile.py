"""The reconciliation engine: each category, each legitimate case, evidence and export."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import pytest

from agent.data.evidence import findings_for
from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.policy import CATEGORY_ORDER, Policy
from agent.data.reconcile import (
    FINDING_CATEGORIES,
    Reconciliation,
    connect,
    load_and_validate,
    reconcile,
)
from agent.data.reconcile.engine import engine_parameters
from agent.data.reconcile.runner import run_sql
from agent.data.reconcile.values import Finding
from agent.data.schema import AmountReading, DatasetMapping, Mapping, ReadingOptions, Role

ORDERS = [
    # order_id, total, currency, created_at, status  (the comment is what must come out)
    ("1001", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # ok: single
    ("1002", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # ok: split 60 + 40
    ("1003", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # ok: within tolerance
    ("1004", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # ok: failed, then paid
    ("1005", "100.00", "USD", "2025-10-01 10:00:00 +0000", "refunded"),  # ok: normal refund
    ("1006", "100.00", "USD", "2025-10-01 10:00:00 +0000", "voided"),  # ok: voided, unpaid
    ("1007", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # order_without_capture
    ("1008", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # amount_mismatch
    ("1009", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # partial_capture
    ("1010", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # over_capture
    ("1011", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # duplicate_capture
    ("1012", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # currency_mismatch
    ("1013", "100.00", "USD", "2025-10-01 10:00:00 +0000", "voided"),  # status_mismatch
    ("1014", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # capture_outside_window
    ("1015", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # in multi_order_payment
    ("1016", "50.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # in multi_order_payment
    ("1017", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # ok (row repeated)
    ("1018", "1500", "JPY", "2025-10-01 10:00:00 +0900", "paid"),  # ok: zero-decimal
    ("1019", "12.345", "KWD", "2025-10-01 10:00:00 +0300", "paid"),  # ok: three decimals
    ("1020", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # ok: line items
    ("1020", "", "", "", ""),  # its second line item
    ("1021", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),  # duplicate (3 captures)
    ("1022", "100.00", "USD", "2025-10-01 10:00:00 +0000", "refunded"),  # status_mismatch
]
PAYMENTS = [
    # payment_id, order_id, amount, currency, captured_at, status, amount_refunded
    ("ch_1", "#1001", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_2a", "#1002", "60.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_2b", " 1002 ", "40.00", "usd", "2025-10-02 10:05:00", "succeeded", "0.00"),
    ("ch_3", "1003", "100.01", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_4a", "#1004", "100.00", "usd", "2025-10-01 10:01:00", "failed", "0.00"),
    ("ch_4b", "#1004", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_5", "#1005", "100.00", "usd", "2025-10-01 10:05:00", "refunded", "100.00"),
    ("ch_8", "#1008", "90.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_9a", "#1009", "30.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_9b", "#1009", "30.00", "usd", "2025-10-02 10:05:00", "succeeded", "0.00"),
    ("ch_10a", "#1010", "60.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_10b", "#1010", "60.00", "usd", "2025-10-01 11:05:00", "succeeded", "0.00"),
    ("ch_11a", "#1011", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_11b", "#1011", "100.00", "usd", "2025-10-01 10:35:00", "succeeded", "0.00"),
    ("ch_12", "#1012", "100.00", "eur", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_13", "#1013", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_14", "#1014", "100.00", "usd", "2025-11-15 10:05:00", "succeeded", "0.00"),
    ("ch_15", "#1015, #1016", "150.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_stray", "#9999", "75.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_blank", "", "20.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_17", "#1017", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_17", "#1017", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_18", "#1018", "1,500", "jpy", "2025-10-01 01:05:00", "succeeded", "0"),
    ("ch_19", "#1019", "12.345", "kwd", "2025-10-01 07:05:00", "succeeded", "0.000"),
    ("ch_20", "#1020", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_21a", "#1021", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
    ("ch_21b", "#1021", "100.00", "usd", "2025-10-01 10:06:00", "succeeded", "0.00"),
    ("ch_21c", "#1021", "5.00", "usd", "2025-10-01 10:07:00", "succeeded", "0.00"),
    ("ch_22", "#1022", "100.00", "usd", "2025-10-01 10:05:00", "succeeded", "0.00"),
]
EXPECTED = {
    "order_without_capture": ["1007"],
    "amount_mismatch": ["1008"],
    "partial_capture": ["1009"],
    "over_capture": ["1010"],
    "duplicate_capture": ["1011", "1021"],
    "currency_mismatch": ["1012"],
    "status_mismatch": ["1013", "1022"],
    "capture_outside_window": ["1014"],
    "multi_order_payment": ["ch_15"],
    "capture_without_order": ["ch_stray", "ch_blank"],
    "duplicate_payment_row": ["ch_17"],
}


def write(path: Path, header: list[str], rows: Sequence[tuple[str, ...]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(header)
        out.writerows(rows)
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[Role, tuple[Path, str]]:
    orders = write(
        tmp_path / "orders.csv",
        ["order_id", "total", "currency", "created_at", "status"],
        ORDERS,
    )
    payments = write(
        tmp_path / "payments.csv",
        [
            "payment_id",
            "order_id",
            "amount",
            "currency",
            "captured_at",
            "status",
            "amount_refunded",
        ],
        PAYMENTS,
    )
    return {Role.ORDERS: (orders, "orders.csv"), Role.PAYMENTS: (payments, "payments.csv")}


@pytest.fixture
def run(files: dict[Role, tuple[Path, str]]) -> Reconciliation:
    samples = [inspect_csv(p, n, max_bytes=1 << 20) for p, n in files.values()]
    proposal = infer_mapping(*samples)
    assert proposal.clarifications == []
    assert proposal.mapping is not None
    report = load_and_validate(connect(), files, proposal.mapping, policy=Policy())
    assert report.ok, report.errors
    return reconcile(files, proposal.mapping, Policy())


def test_every_category_and_nothing_else(run: Reconciliation) -> None:
    found: dict[str, list[str]] = {}
    payment_units = ("multi_order_payment", "capture_without_order", "duplicate_payment_row")
    for finding in run.findings(limit=None):
        ids = finding.payment_ids if finding.category in payment_units else finding.order_ids
        found.setdefault(finding.category, []).append(ids[0])
    assert found == EXPECTED
    assert set(run.summary().counts) == set(FINDING_CATEGORIES)
    assert run.summary().counts == {c: len(EXPECTED.get(c, [])) for c in FINDING_CATEGORIES}


def test_evidence_names_files_rows_and_ids(run: Reconciliation) -> None:
    [mismatch] = run.findings("amount_mismatch")
    assert mismatch.expected == "100.00"
    assert mismatch.actual == "90.00"
    assert mismatch.currency == "USD"
    orders, payments = mismatch.evidence
    assert (orders.file, orders.rows, orders.ids) == ("orders.csv", [8], ["1008"])
    assert (payments.file, payments.rows, payments.ids) == ("payments.csv", [8], ["ch_8"])
    [repeated] = run.findings("duplicate_payment_row")
    assert repeated.evidence[-1].rows == [21, 22]
    [multi] = run.findings("multi_order_payment")
    assert multi.order_ids == ["1015", "1016"]
    assert multi.expected == multi.actual == "150.00"
    assert multi.evidence[0].rows == [15, 16]


def test_evidence_lookup_by_order_or_payment_id(run: Reconciliation) -> None:
    assert [f.category for f in run.evidence("#1009")] == ["partial_capture"]
    assert [f.category for f in run.evidence("CH_STRAY")] == ["capture_without_order"]
    assert run.evidence("1001") == []


def test_a_typed_id_pasted_with_whitespace_around_it_is_found(
    run: Reconciliation, tmp_path: Path
) -> None:
    # Copied from a spreadsheet: a no-break space or a tab around the id.
    for typed in ("1009\u00a0", "\t#1009 ", "\u00a0CH_STRAY"):
        assert len(run.evidence(typed)) == 1, typed
    export = tmp_path / "exceptions.csv"
    run.export_csv(export)
    assert [f["category"] for f in findings_for(export, "\u00a0#1009\t")] == ["partial_capture"]


def test_money_is_exact_in_each_currency_minor_unit(run: Reconciliation) -> None:
    totals = {c.currency: c for c in run.summary().currencies}
    assert totals["JPY"].order_total == "1500"
    assert totals["JPY"].matched_orders == 1
    assert totals["KWD"].order_total == "12.345"
    assert totals["KWD"].matched_total == "12.345"


def test_failed_attempts_are_not_captures(run: Reconciliation) -> None:
    summary = run.summary()
    assert summary.failed_attempts == 1
    assert run.evidence("ch_4a") == []


def test_line_items_collapse_to_their_first_row(run: Reconciliation) -> None:
    summary = run.summary()
    assert summary.order_rows == len(ORDERS)
    assert summary.orders == len(ORDERS) - 1


def _formula_mapping() -> Mapping:
    """The files of the formula tests: an order id, total and currency; a payment id, its
    order reference, amount and currency."""
    options = ReadingOptions(
        amounts={"order_amount": AmountReading(), "captured_amount": AmountReading()}
    )
    return Mapping(
        orders=DatasetMapping(
            columns={"order_id": "order_id", "order_amount": "total", "currency": "currency"},
            options=options,
        ),
        payments=DatasetMapping(
            columns={
                "payment_id": "payment_id",
                "order_id": "order_id",
                "captured_amount": "amount",
                "currency": "currency",
            },
            options=options,
        ),
    )


def test_export_neutralises_formulas(tmp_path: Path) -> None:
    orders = write(
        tmp_path / "o.csv",
        ["order_id", "total", "currency"],
        [("=HYPERLINK(1)", "10.00", "USD"), ("+2", "5.00", "USD"), ("3", "1.00", "USD")],
    )
    payments = write(
        tmp_path / "p.csv",
        ["payment_id", "order_id", "amount", "currency"],
        [("@SUM(A1)", "#777", "4.00", "USD"), ("ch_1", "3", "1.00", "USD")],
    )
    files = {Role.ORDERS: (orders, "o.csv"), Role.PAYMENTS: (payments, "p.csv")}
    run = reconcile(files, _formula_mapping(), Policy())
    out = tmp_path / "exceptions.csv"
    assert run.export_csv(out) == 3
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    order_ids = sorted(r["order_ids"] for r in rows if r["order_ids"])
    assert order_ids == ["'+2", "'=HYPERLINK(1)"]
    assert [r["payment_ids"] for r in rows if r["category"] == "capture_without_order"] == [
        "'@SUM(A1)"
    ]
    assert {r["difference"] for r in rows if r["category"] == "order_without_capture"} == {
        "-10.00",
        "-5.00",
    }


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+31 6", "'+31 6"),
        ("-2", "'-2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=b", "a=b"),
        ("", ""),
        ("é=1", "é=1"),
        ("\u22121", "\u22121"),  # a minus sign that is not the ASCII hyphen: text to a spreadsheet
        (None, None),
    ],
)
def test_a_cell_a_spreadsheet_would_run_as_a_formula_gets_a_quote(
    cell: str | None, written: str | None
) -> None:
    """The exceptions CSV's `spreadsheet_safe`: a cell from an uploaded file that starts with
    `= + - @`, a tab or a carriage return is written with a leading `'`; no other cell changes."""
    con = connect()
    run_sql(con, "setup", engine_parameters(_formula_mapping(), Policy()))
    assert con.execute("SELECT spreadsheet_safe(?::VARCHAR)", [cell]).fetchone() == (written,)


def test_every_category_is_explained_in_words() -> None:
    explanations = Policy().explanations()
    for category in CATEGORY_ORDER:
        assert len(explanations[category]) > 40
    assert "failed" in explanations["legitimate"]


def test_the_summary_gives_the_money_each_category_concerns(run: Reconciliation) -> None:
    money = {c.category: c.difference_by_currency for c in run.summary().categories}
    assert money["amount_mismatch"] == {"USD": "10.00"}
    assert money["order_without_capture"] == {"USD": "100.00"}
    assert money["partial_capture"] == {"USD": "40.00"}
    assert money["currency_mismatch"] == {}
    assert money["capture_outside_window"] == {}


def reconciled(
    tmp_path: Path,
    orders: list[tuple[str, ...]],
    payments_header: list[str],
    payments: list[tuple[str, ...]],
) -> Reconciliation:
    """These rows written as two files, read as inference proposes, and reconciled."""
    header = ["order_id", "total", "currency", "created_at", "status"]
    files = {
        Role.ORDERS: (write(tmp_path / "orders.csv", header, orders), "orders.csv"),
        Role.PAYMENTS: (
            write(tmp_path / "payments.csv", payments_header, payments),
            "payments.csv",
        ),
    }
    samples = [inspect_csv(p, n, max_bytes=1 << 20) for p, n in files.values()]
    mapping = infer_mapping(*samples).mapping
    assert mapping is not None
    return reconcile(files, mapping, Policy())


def test_rows_of_one_payment_id_that_differ_each_count(tmp_path: Path) -> None:
    run = reconciled(
        tmp_path,
        [
            ("1001", "20.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),
            ("1002", "30.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),
            ("1003", "40.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),
            ("1004", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),
        ],
        ["payment_id", "order_id", "amount", "currency", "captured_at", "status"],
        [
            # One id, two amounts: not the same payment twice; the 500.00 must not vanish.
            ("p1", "1001", "20.00", "usd", "2025-10-01 10:05:00", "succeeded"),
            ("p1", "1001", "500.00", "usd", "2025-10-01 10:06:00", "succeeded"),
            # One id, the same payment written twice (its reference written two ways, and
            # once not at all): counted once.
            ("p2", "#1002", "30.00", "usd", "2025-10-01 10:05:00", "succeeded"),
            ("p2", "1002", "30.00", "usd", "2025-10-01 10:06:00", "succeeded"),
            ("p2", "", "30.00", "usd", "2025-10-01 10:07:00", "succeeded"),
            ("p3", "1003", "40.00", "usd", "2025-10-01 10:05:00", "succeeded"),
            # A repeated row among differing ones counts once: 30 + 70 pay the order of 100.
            ("p4", "1004", "30.00", "usd", "2025-10-01 10:05:00", "succeeded"),
            ("p4", "1004", "30.00", "usd", "2025-10-01 10:05:00", "succeeded"),
            ("p4", "1004", "70.00", "usd", "2025-10-01 10:06:00", "succeeded"),
        ],
    )

    def unit(finding: Finding) -> str:
        ids = finding.payment_ids if finding.category == "duplicate_payment_row" else None
        return (ids or finding.order_ids)[0]

    by_id = {(f.category, unit(f)): f for f in run.findings(limit=None)}
    differ = by_id["duplicate_payment_row", "p1"]
    assert (differ.reason, differ.actual, differ.evidence[-1].rows) == (
        "rows_differ",
        "520.00",
        [1, 2],
    )
    # Order 1001 is not matched on the first row alone: both captures count.
    assert by_id["duplicate_capture", "1001"].actual == "520.00"
    again = by_id["duplicate_payment_row", "p2"]
    assert (again.reason, again.actual) == (None, "30.00")
    assert again.evidence[-1].rows == [3, 4, 5]
    repeated = by_id["duplicate_payment_row", "p4"]
    assert (repeated.reason, repeated.actual) == ("rows_differ", "100.00")
    assert set(by_id) == {
        ("duplicate_payment_row", "p1"),
        ("duplicate_capture", "1001"),
        ("duplicate_payment_row", "p2"),
        ("duplicate_payment_row", "p4"),
    }


def test_a_refund_of_a_payment_naming_several_orders_is_reviewed_with_that_payment(
    tmp_path: Path,
) -> None:
    run = reconciled(
        tmp_path,
        [
            ("1001", "100.00", "USD", "2025-10-01 10:00:00 +0000", "paid"),
            ("1002", "50.00", "USD", "2025-10-01 11:00:00 +0000", "paid"),
            ("1003", "75.50", "USD", "2025-10-02 09:00:00 +0000", "paid"),
        ],
        ["payment_id", "order_id", "amount", "currency", "type", "created_at"],
        [
            ("p1", "1001 1002", "150.00", "USD", "charge", "2025-10-01 10:05:00"),
            ("p1", "1001 1002", "-50.00", "USD", "refund", "2025-10-03 10:05:00"),
            ("p3", "1003", "75.50", "USD", "charge", "2025-10-02 09:05:00"),
        ],
    )
    findings = run.findings(limit=None)
    # Not money for orders neither file has: the refund's capture and orders are both there.
    [multi] = findings
    assert multi.category == "multi_order_payment"
    assert multi.order_ids == ["1001", "1002"]
    assert multi.evidence[-1].rows == [1, 2]
    # What the refund returned is taken from what the payment captured.
    assert (multi.expected, multi.actual) == ("150.00", "100.00")


def test_more_refunded_than_captured_is_a_finding_and_the_totals_agree_with_the_ledger(
    tmp_path: Path,
) -> None:
    paid = "2025-10-01 10:00:00 +0000"
    run = reconciled(
        tmp_path,
        [
            ("1001", "100.00", "USD", paid, "paid"),
            ("1002", "100.00", "USD", paid, "refunded"),
            ("1003", "100.00", "USD", paid, "refunded"),
            ("1004", "100.00", "USD", paid, "paid"),
            ("1005", "40.00", "USD", paid, "paid"),
        ],
        ["payment_id", "order_id", "amount", "currency", "type", "created_at"],
        [
            # 150 returned of a 100 capture: money went back that was never taken.
            ("p1", "1001", "100.00", "USD", "charge", "2025-10-01 10:05:00"),
            ("r1", "1001", "-150.00", "USD", "refund", "2025-10-02 10:05:00"),
            # The order says refunded; one cent of 100 was: 99.99 kept.
            ("p2", "1002", "100.00", "USD", "charge", "2025-10-01 10:05:00"),
            ("r2", "1002", "-0.01", "USD", "refund", "2025-10-02 10:05:00"),
            # The order says refunded and all of it was: as it should be.
            ("p3", "1003", "100.00", "USD", "charge", "2025-10-01 10:05:00"),
            ("r3", "1003", "-100.00", "USD", "refund", "2025-10-02 10:05:00"),
            # A refund in another currency than its order: a finding of its own.
            ("p4", "1004", "100.00", "USD", "charge", "2025-10-01 10:05:00"),
            ("r4", "1004", "-10.00", "EUR", "refund", "2025-10-02 10:05:00"),
            ("p5", "1005", "40.00", "USD", "charge", "2025-10-01 10:05:00"),
        ],
    )
    by_order = {(f.category, f.order_ids[0]): f for f in run.findings(limit=None) if f.order_ids}
    assert by_order["status_mismatch", "1001"].reason == "refunded_more_than_captured"
    assert by_order["status_mismatch", "1002"].reason == "refunded_in_part"
    assert ("currency_mismatch", "1004") in by_order
    assert {order for _, order in by_order} == {"1001", "1002", "1004"}
    # The matched totals count the orders the ledger calls matched, and nothing else.
    summary = run.summary()
    [usd] = [c for c in summary.currencies if c.currency == "USD"]
    orders = summary.ledger[0]
    assert (usd.matched_orders, orders.matched) == (2, 2)
    assert usd.matched_total == "140.00"


def test_an_order_paid_alone_and_in_a_multi_order_payment_is_paid_twice(
    tmp_path: Path,
) -> None:
    paid = "2025-10-01 10:00:00 +0000"
    orders = [
        ("1001", "10.00", "USD", paid, "paid"),
        ("1002", "20.00", "USD", paid, "paid"),
        ("1004", "40.00", "USD", paid, "paid"),
    ]
    header = ["payment_id", "order_id", "amount", "currency", "created_at"]
    twice = reconciled(
        tmp_path,
        orders,
        header,
        [
            ("p1", "1001", "10.00", "USD", "2025-10-01 10:05:00"),
            ("p2", "1002", "20.00", "USD", "2025-10-01 10:05:00"),
            ("p4", "1002, 1004", "60.00", "USD", "2025-10-01 10:06:00"),
        ],
    )
    [multi] = twice.findings(limit=None)
    # 80.00 taken for 60.00 of orders: p2 is reviewed with p4, not matched on its own.
    assert (multi.category, multi.expected, multi.actual) == (
        "multi_order_payment",
        "60.00",
        "80.00",
    )
    assert multi.payment_ids == ["p4", "p2"]
    assert multi.evidence[-1].rows == [2, 3]
    payments = twice.summary().ledger[1]
    assert (payments.matched, payments.findings) == (1, 2)
    # Paid once in all, in two payments: what they took adds up to the orders.
    once = reconciled(
        tmp_path,
        orders,
        header,
        [
            ("p1", "1001", "10.00", "USD", "2025-10-01 10:05:00"),
            ("p2", "1002", "20.00", "USD", "2025-10-01 10:05:00"),
            ("p4", "1004 ref 1002", "40.00", "USD", "2025-10-01 10:06:00"),
        ],
    )
    [multi] = once.findings(limit=None)
    assert (multi.expected, multi.actual) == ("60.00", "60.00")


def test_a_refunded_amount_written_negative_counts_by_its_size(tmp_path: Path) -> None:
    paid = "2025-10-01 10:00:00 +0000"
    run = reconciled(
        tmp_path,
        [
            ("1002", "100.00", "USD", paid, "refunded"),
            ("1003", "100.00", "USD", paid, "refunded"),
            ("1004", "100.00", "USD", paid, "paid"),
            ("1005", "80.00", "USD", paid, "paid"),
        ],
        ["payment_id", "order_id", "amount", "amount_refunded", "currency", "status"],
        [
            ("ch_2", "1002", "100.00", "-100.00", "USD", "succeeded"),
            ("ch_3", "1003", "100.00", "-40.00", "USD", "succeeded"),
            ("ch_4", "1004", "100.00", "-100.00", "USD", "succeeded"),
            ("ch_5", "1005", "80.00", "-120.00", "USD", "succeeded"),
        ],
    )
    found = {f.order_ids[0]: (f.category, f.reason) for f in run.findings(limit=None)}
    assert found == {
        "1003": ("status_mismatch", "refunded_in_part"),
        "1004": ("status_mismatch", None),
        "1005": ("status_mismatch", "refunded_more_than_captured"),
    }


def test_the_same_total_under_a_reused_order_id_on_another_day_is_not_a_line_item(
    tmp_path: Path,
) -> None:
    run = reconciled(
        tmp_path,
        [
            ("1001", "10.00", "USD", "2025-03-01 10:00:00 +0000", "paid"),
            ("1002", "25.00", "USD", "2025-03-02 10:00:00 +0000", "paid"),
            # A line item of 1002: the total and the time repeated.
            ("1002", "25.00", "USD", "2025-03-02 10:00:00 +0000", "paid"),
            # Six weeks later, another customer's order under the id 1001.
            ("1001", "10.00", "USD", "2025-04-15 10:00:00 +0000", "pending"),
        ],
        ["payment_id", "order_id", "amount", "currency", "created_at"],
        [
            ("ch_1", "1001", "10.00", "USD", "2025-03-01 10:05:00"),
            ("ch_2", "1002", "25.00", "USD", "2025-03-02 10:05:00"),
        ],
    )
    [conflict] = run.findings(limit=None)
    assert (conflict.category, conflict.order_ids) == ("conflicting_duplicate_order", ["1001"])
    assert conflict.evidence[0].rows == [1, 4]
    orders = run.summary().ledger[0]
    assert orders.ignored == {"line_item_continuation": 1}


def test_an_order_of_nothing_that_nobody_paid_is_not_a_finding(tmp_path: Path) -> None:
    paid = "2025-03-01 10:00:00 +0000"
    run = reconciled(
        tmp_path,
        [
            ("1001", "10.00", "USD", paid, "paid"),
            ("1002", "0.00", "USD", paid, "paid"),
            ("1003", "0.00", "USD", paid, "paid"),
        ],
        ["payment_id", "order_id", "amount", "currency", "created_at"],
        [
            ("ch_1", "1001", "10.00", "USD", "2025-03-01 10:05:00"),
            ("ch_3", "1003", "0.00", "USD", "2025-03-01 10:05:00"),  # captured nothing
        ],
    )
    assert run.findings(limit=None) == []
    orders, payments = run.summary().ledger
    assert (orders.matched, orders.ignored) == (1, {"nothing_to_pay": 2})
    assert payments.ignored == {"zero_capture": 1}


def test_a_partly_refunded_capture_of_a_paid_order_is_not_all_refunded(tmp_path: Path) -> None:
    paid = "2025-03-01 10:00:00 +0000"
    run = reconciled(
        tmp_path,
        [("1001", "100.00", "USD", paid, "paid"), ("1002", "50.00", "USD", paid, "paid")],
        ["payment_id", "order_id", "amount", "currency", "status", "type"],
        [
            # PayPal: the capture's status says partly refunded, a refund row says how much.
            ("T1", "1001", "100.00", "USD", "Partially Refunded", "charge"),
            ("R1", "1001", "-30.00", "USD", "Completed", "refund"),
            # Refunded whole while the order still counts as paid: a finding, as before.
            ("T2", "1002", "50.00", "USD", "Refunded", "charge"),
            ("R2", "1002", "-50.00", "USD", "Completed", "refund"),
        ],
    )
    found = {f.order_ids[0]: f.category for f in run.findings(limit=None)}
    assert found == {"1002": "status_mismatch"}


def test_an_order_two_multi_order_payments_name_is_said_in_both(tmp_path: Path) -> None:
    paid = "2025-03-01 10:00:00 +0000"
    run = reconciled(
        tmp_path,
        [
            ("1001", "50.00", "USD", paid, "paid"),
            ("1002", "30.00", "USD", paid, "paid"),
            ("1003", "20.00", "USD", paid, "paid"),
        ],
        ["payment_id", "order_id", "amount", "currency", "created_at"],
        [
            # Each adds up to its orders, and 1001 is paid in both: 50.00 too much in all.
            ("P1", "1001, 1002", "80.00", "USD", "2025-03-01 10:05:00"),
            ("P3", "1001, 1003", "70.00", "USD", "2025-03-01 10:06:00"),
        ],
    )
    reasons = {f.payment_ids[0]: f.reason for f in run.findings(limit=None)}
    assert reasons == {
        "P1": "order_in_another_multi_order_payment",
        "P3": "order_in_another_multi_order_payment",
    }
