"""Amounts up to what the reader parses (12 integer digits) reconcile exactly, in any currency:
a 123-billion order in USD or a trillion in IDR is converted to minor units, never an overflow
after the person approved."""

from __future__ import annotations

from pathlib import Path

from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.schema import Role


def test_large_amounts_reconcile_exactly(tmp_path: Path) -> None:
    amounts = [
        ("#1", "123456789012.50", "USD"),
        ("#2", "10.00", "USD"),
        ("#3", "999999999999.99", "IDR"),
        ("#4", "99999999.99", "KWD"),
        ("#5", "250000000", "JPY"),
    ]
    orders = tmp_path / "orders.csv"
    payments = tmp_path / "payments.csv"
    orders.write_text(
        "order_id,total,currency\n" + "".join(f"{o},{a},{c}\n" for o, a, c in amounts)
    )
    payments.write_text(
        "payment_id,order_id,amount,currency\n"
        + "".join(f"ch_{i},{o},{a},{c}\n" for i, (o, a, c) in enumerate(amounts))
    )
    proposal = infer_mapping(inspect_csv(orders, orders.name), inspect_csv(payments, payments.name))
    assert proposal.mapping is not None
    files = {Role.ORDERS: (orders, orders.name), Role.PAYMENTS: (payments, payments.name)}
    result = run_job(files, proposal.mapping, Policy(), tmp_path / "exceptions.csv")
    summary = result.reconciliation.summary()
    assert summary.total_findings == 0
    totals = {c.currency: c.matched_total for c in summary.currencies}
    assert totals["USD"] == "123456789022.50"
    assert totals["IDR"] == "999999999999.99"
