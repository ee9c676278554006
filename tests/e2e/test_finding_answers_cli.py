"""In the terminal, "which orders were never paid?" lists them: before the approval it says there
is nothing to list yet; after it, the orders of the exceptions CSV with their rows and how many
there are in all."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from tests.support.cli import documents, reconbot

QUESTION = "which orders were never paid?"
LINE = re.compile(r"^- orders (\S+) \(orders\.csv row (\d+)\); expected ")


def test_which_orders_were_never_paid_in_the_terminal(tmp_path: Path) -> None:
    made = reconbot("demo-data", "--rows", "2000", "--out", "demo", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    truth = json.loads((tmp_path / "demo" / "truth.json").read_text())
    done = reconbot(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--export",
        "out.csv",
        "--json",
        cwd=tmp_path,
        stdin=f"ask {QUESTION}\napprove\nask {QUESTION}\nask which EUR orders were never paid?\n",
    )
    assert done.returncode == 0, done.stderr
    said = documents(done.stdout)
    assert [d["type"] for d in said] == ["request", "answer", "outcome", "answer", "answer"]
    assert said[1]["text"].startswith("This investigation has not been reconciled yet;")

    with (tmp_path / "out.csv").open(newline="", encoding="utf-8") as handle:
        unpaid = [r for r in csv.DictReader(handle) if r["category"] == "order_without_capture"]
    total = truth["findings"]["order_without_capture"]
    assert len(unpaid) == total > 20
    rows = {r["order_ids"]: r["orders_rows"] for r in unpaid}
    lines = said[3]["text"].splitlines()
    assert lines[0].startswith(f"{total} order_without_capture findings; 20 of {total} listed")
    assert re.search(r"every one is in the exceptions file exceptions-INV-\S+-r1\.csv", lines[0])
    listed = [LINE.match(line) for line in lines[1:]]
    assert len(listed) == 20 and all(listed), lines
    assert all(rows[m.group(1)] == m.group(2) for m in listed if m)

    euro = [r for r in unpaid if r["currency"] == "EUR"]
    first = said[4]["text"].splitlines()[0]
    assert first.startswith(f"{len(euro)} order_without_capture finding")
    assert " in EUR" in first
    assert all(line.endswith(" EUR.") for line in said[4]["text"].splitlines()[1:])
