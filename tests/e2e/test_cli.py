"""The console script as a person runs it: demo data, inspect, reconcile, explain."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.support.cli import reconbot


def test_demo_inspect_reconcile(tmp_path: Path) -> None:
    made = reconbot("demo-data", "--rows", "3000", "--out", "demo", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    truth = json.loads((tmp_path / "demo" / "truth.json").read_text())

    shown = reconbot(
        "inspect", "demo/payments.csv", "demo/orders.csv", "--save-mapping", "m.json", cwd=tmp_path
    )
    assert shown.returncode == 0, shown.stderr
    assert 'order_id         <- "Name"' in shown.stdout
    assert "Every mapped value reads under this mapping." in shown.stdout
    # The counts that need no decision are shown too, as the request shows them.
    assert "checked: orders.csv: 3,000 order ids on" in shown.stdout
    assert "payment references in payments.csv name an order in orders.csv" in shown.stdout

    done = reconbot(
        "reconcile",
        "demo/orders.csv",
        "demo/payments.csv",
        "--mapping",
        "m.json",
        "--export",
        "out.csv",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["summary"]["counts"] == truth["findings"]
    assert document["inputs"]["orders"].startswith("sha256:")
    with (tmp_path / "out.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    findings = [row for row in rows if row["category"] != "ignored"]
    assert len(findings) == sum(truth["findings"].values())
    assert rows[0]["orders_rows"] or rows[0]["payments_rows"]
    ledger = {item["role"]: item for item in document["summary"]["ledger"]}
    assert ledger["orders"]["records"] == truth["order_rows"]
    assert ledger["payments"]["records"] == truth["payment_rows"]
    ignored = [row for row in rows if row["category"] == "ignored"]
    assert ignored and all(row["reason"] for row in ignored)
    assert len(ignored) == sum(
        sum(item["ignored"].values()) for item in document["summary"]["ledger"]
    )


def test_bad_input_is_a_message_and_exit_code_2(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_bytes(b"PK\x03\x04 not really")
    (tmp_path / "b.csv").write_text("id,amount\n1,2\n")
    result = reconbot("inspect", "a.csv", "b.csv", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("reconbot: a.csv: this is an Excel workbook")
    assert "Traceback" not in result.stderr


def test_a_clarification_is_shown_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "o.csv").write_text(
        "order_id,total,currency\n" + "".join(f"{1000 + i},{i}.00,USD\n" for i in range(1, 9))
    )
    (tmp_path / "p.csv").write_text(
        "id,Amount,Amount Captured,Currency,order_id\n"
        # Equal columns would be one reading; a partial capture on row 3 makes them two.
        + "".join(f"py_{i},{i}.00,{1 if i == 3 else i}.00,USD,{1000 + i}\n" for i in range(1, 9))
    )
    result = reconbot("inspect", "o.csv", "p.csv", cwd=tmp_path)
    assert result.returncode == 2
    assert "QUESTION: Which column of p.csv holds the captured_amount" in result.stdout


def test_explain_a_rule(tmp_path: Path) -> None:
    result = reconbot("explain", "duplicate_capture", cwd=tmp_path)
    assert result.returncode == 0
    assert "charged more than once" in result.stdout


def test_reconcile_without_a_saved_mapping_says_how_to_make_one(tmp_path: Path) -> None:
    (tmp_path / "o.csv").write_text("order_id,total,currency\n1,1.00,USD\n")
    (tmp_path / "p.csv").write_text("id,order_id,amount,currency\nch_1,1,1.00,USD\n")
    result = reconbot("reconcile", "o.csv", "p.csv", "--mapping", "missing.json", cwd=tmp_path)
    assert result.returncode == 2
    assert "no mapping file at missing.json" in result.stderr
    assert "Traceback" not in result.stderr


def test_inspect_with_a_warning_does_not_say_every_value_reads(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text(
        "order_id,created_at,total,currency\n"
        + "".join(f"{1000 + i},2025-10-01 10:00:00,{i}.00,USD\n" for i in range(1, 21))
    )
    times = ["2025-10-01 10:05:00"] * 20
    times[2] = "Dec 5th"  # data row 3: not a time
    (tmp_path / "payments.csv").write_text(
        "payment_id,order_id,amount,currency,created_at\n"
        + "".join(f"p{i},{1000 + i},{i}.00,USD,{times[i - 1]}\n" for i in range(1, 21))
    )
    shown = reconbot("inspect", "orders.csv", "payments.csv", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert (
        'values that do not read as timestamps in column "created_at" (captured_at), e.g. rows 3: '
        "reconciling skips the time-window check for those rows" in shown.stdout
    )
    assert "Every mapped value reads" not in shown.stdout
    assert "The mapping can be approved; read the warnings above first." in shown.stdout
