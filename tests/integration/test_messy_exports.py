"""A messy export end to end: preamble, Windows-1252, semicolons, decimal commas, day-first dates
and headers no alias knows, against a Stripe-style file: no question, no finding."""

from __future__ import annotations

from pathlib import Path

from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Role
from agent.data.wording import words_of

N = 40


def test_german_export_against_stripe_style_payments(tmp_path: Path) -> None:
    lines = [
        "Bestellexport",
        "Erstellt am 07.10.2025",
        "",
        "Bestellnummer;Summe;Währung;Datum;Status",
    ]
    lines += [
        f"{5000 + i};{i % 3}.{i * 7:03d},50;EUR;{1 + i % 28:02d}.10.2025 10:00;bezahlt"
        for i in range(1, N + 1)
    ]
    orders = tmp_path / "Bestellungen.csv"
    orders.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp1252"))
    payments = tmp_path / "pay.csv"
    payments.write_text(
        "id,amount,currency,order_ref,created\n"
        + "".join(
            f'p{i},"{i % 3},{i * 7:03d}.50",eur,{5000 + i},2025-10-{1 + i % 28:02d} 11:00:00\n'
            for i in range(1, N + 1)
        )
    )
    proposal = infer_mapping(
        inspect_csv(payments, payments.name, max_bytes=1 << 20),
        inspect_csv(orders, orders.name, max_bytes=1 << 20),
    )
    assert proposal.clarifications == []
    assert proposal.orders.file_name == "Bestellungen.csv"
    mapping = proposal.mapping
    assert mapping is not None
    options = mapping.orders.options
    assert (options.encoding, options.delimiter, options.header_row) == ("cp1252", ";", 4)
    assert options.amounts["order_amount"].decimal == ","
    assert options.timestamps["order_date"].pattern == "%d.%m.%Y %H:%M"
    assert any("Windows-1252" in note for note in words_of(proposal.orders.notes))
    files = {
        Role.ORDERS: (orders, orders.name),
        Role.PAYMENTS: (payments, payments.name),
    }
    assert load_and_validate(connect(), files, mapping, policy=Policy()).ok
    result = run_job(files, mapping, Policy(), tmp_path / "exceptions.csv")
    summary = result.reconciliation.summary()
    assert summary.total_findings == 0
    [eur] = summary.currencies
    assert (eur.orders, eur.matched_orders) == (N, N)


def test_rows_ending_in_a_delimiter_their_header_lacks_are_all_reconciled(tmp_path: Path) -> None:
    # A hand-made orders export: every row ends in a comma, the header does not. The header
    # stays the header, so no order row is read as column names and lost from the count.
    orders = tmp_path / "orders.csv"
    orders.write_text(
        "order_id,created_at,total,currency,status\n"
        + "".join(f"{1000 + i},2025-10-01 10:00:00,{i}.00,USD,paid,\n" for i in range(1, N + 1))
    )
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "payment_id,order_id,amount,currency,status,created_at\n"
        + "".join(
            f"p{i},{1000 + i},{i}.00,USD,succeeded,2025-10-01 10:05:00\n" for i in range(1, N + 1)
        )
    )
    proposal = infer_mapping(
        inspect_csv(orders, orders.name, max_bytes=1 << 20),
        inspect_csv(payments, payments.name, max_bytes=1 << 20),
    )
    assert proposal.clarifications == []
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.orders.columns["order_id"] == "order_id"
    files = {
        Role.ORDERS: (orders, orders.name),
        Role.PAYMENTS: (payments, payments.name),
    }
    result = run_job(files, mapping, Policy(), tmp_path / "exceptions.csv")
    summary = result.reconciliation.summary()
    assert summary.total_findings == 0
    ledger = {line.role: line for line in summary.ledger}
    assert (ledger[Role.ORDERS].records, ledger[Role.ORDERS].matched) == (N, N)
