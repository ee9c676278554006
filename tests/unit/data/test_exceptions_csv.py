"""The exceptions CSV reads as one CSV whether it holds findings, ignored rows or both.

The header once, on the first line; every finding before every ignored row, whatever their
row numbers; the ignored rows of both files in row order; and nothing but the file written in
its folder.
"""

from __future__ import annotations

import csv
from pathlib import Path

from agent.data.policy import Policy
from agent.data.reconcile import reconcile
from agent.data.schema import Mapping, Role
from tests.unit.data.test_reconcile import _formula_mapping, write

HEADER = [
    "category",
    "reason",
    "order_ids",
    "orders_rows",
    "payment_ids",
    "payments_rows",
    "currency",
    "expected",
    "actual",
    "difference",
]


def _mapping() -> Mapping:
    """The formula tests' mapping, with the payments' status read (failed attempts)."""
    mapping = _formula_mapping()
    payments = mapping.payments.model_copy(
        update={"columns": {**mapping.payments.columns, "payment_status": "status"}}
    )
    return mapping.model_copy(update={"payments": payments})


def _export(
    tmp_path: Path, orders: list[tuple[str, ...]], payments: list[tuple[str, ...]]
) -> tuple[int, list[list[str]]]:
    files = {
        Role.ORDERS: (
            write(tmp_path / "o.csv", ["order_id", "total", "currency"], orders),
            "o.csv",
        ),
        Role.PAYMENTS: (
            write(
                tmp_path / "p.csv",
                ["payment_id", "order_id", "amount", "currency", "status"],
                payments,
            ),
            "p.csv",
        ),
    }
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    written = reconcile(files, _mapping(), Policy()).export_csv(out_dir / "exceptions.csv")
    assert [p.name for p in out_dir.iterdir()] == ["exceptions.csv"], (
        "nothing else is written beside it"
    )
    with (out_dir / "exceptions.csv").open(newline="", encoding="utf-8") as handle:
        return written, list(csv.reader(handle))


def test_only_ignored_rows_still_give_one_header_first(tmp_path: Path) -> None:
    written, lines = _export(
        tmp_path,
        [("1", "10.00", "USD"), ("1", "", ""), ("2", "5.00", "USD")],
        [
            ("ch_1", "1", "10.00", "USD", "succeeded"),
            ("ch_2", "2", "5.00", "USD", "succeeded"),
            ("ch_x", "2", "5.00", "USD", "failed"),
        ],
    )
    assert lines[0] == HEADER
    assert [line[0] for line in lines[1:]] == ["ignored", "ignored"]
    assert [(line[1], line[3], line[5]) for line in lines[1:]] == [
        ("line_item_continuation", "2", ""),
        ("failed_attempt", "", "3"),
    ]
    assert written == len(lines) - 1


def test_only_findings_give_one_header_and_no_ignored_rows(tmp_path: Path) -> None:
    written, lines = _export(
        tmp_path,
        [("1", "10.00", "USD"), ("2", "5.00", "USD")],
        [("ch_1", "1", "9.00", "USD", "succeeded")],
    )
    assert lines[0] == HEADER
    assert sorted(line[0] for line in lines[1:]) == ["amount_mismatch", "order_without_capture"]
    assert written == len(lines) - 1 == 2


def test_findings_come_before_ignored_rows_whatever_their_row_numbers(tmp_path: Path) -> None:
    written, lines = _export(
        tmp_path,
        [("1", "10.00", "USD"), ("1", "", ""), ("2", "5.00", "USD"), ("3", "7.00", "USD")],
        [
            ("ch_x", "1", "10.00", "USD", "failed"),
            ("ch_1", "1", "10.00", "USD", "succeeded"),
            ("ch_2", "2", "5.00", "USD", "succeeded"),
        ],
    )
    categories = [line[0] for line in lines[1:]]
    assert lines[0] == HEADER and HEADER not in lines[1:]
    assert categories == ["order_without_capture", "ignored", "ignored"]
    assert [line[1] for line in lines[2:]] == ["failed_attempt", "line_item_continuation"]
    assert written == 3
