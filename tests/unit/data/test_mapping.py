"""Mapping inference on real export header sets, and the clarifications it must ask."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from agent.data.ingest import inspect_csv
from agent.data.mapping import Proposal, header_score, infer_mapping
from agent.data.schema import Role, spec

SHOPIFY = (
    "Name,Email,Financial Status,Paid at,Fulfillment Status,Fulfilled at,Accepts Marketing,"
    "Currency,Subtotal,Shipping,Taxes,Total,Discount Code,Discount Amount,Shipping Method,"
    "Created at,Lineitem quantity,Lineitem name,Lineitem price,Lineitem compare at price,"
    "Lineitem sku,Lineitem requires shipping,Lineitem taxable,Lineitem fulfillment status,"
    "Billing Name,Billing Street,Billing City,Billing Zip,Billing Country,Shipping Name,"
    "Shipping City,Shipping Country,Notes,Cancelled at,Payment Method,Payment Reference,"
    "Refunded Amount,Vendor,Outstanding Balance,Id,Tags,Risk Level,Source,Lineitem discount,"
    "Tax 1 Name,Tax 1 Value,Phone,Receipt Number,Duties,Payment ID,Payment References"
).split(",")
STRIPE_CREATED_UTC = (
    "id,Description,Seller Message,Created (UTC),Amount,Amount Refunded,Currency,"
    "Converted Amount,Converted Amount Refunded,Fee,Tax,Converted Currency,Mode,Status,"
    "Statement Descriptor,Customer ID,Customer Description,Customer Email,Captured,Card ID,"
    "Card Last4,Card Brand,Card Funding,Card Exp Month,Card Exp Year,Card Issue Country,"
    "Disputed Amount,Dispute Status,Dispute Date (UTC),Invoice ID,Client Reference ID,"
    "Transfer,PaymentIntent ID,Refunded date (UTC),order_id (metadata)"
).split(",")
STRIPE_CREATED_DATE_UTC = (
    "id,Created date (UTC),Amount,Amount Refunded,Currency,Captured,Converted Amount,"
    "Converted Amount Refunded,Converted Currency,Decline Reason,Description,Fee,"
    "Refunded date (UTC),Statement Descriptor,Status,Seller Message,Taxes On Fee,Card ID,"
    "Customer ID,Customer Description,Customer Email,Invoice ID,Transfer,order_id (metadata)"
).split(",")
WOOCOMMERCE = (
    "order_id,order_number,order_date,status,shipping_total,shipping_tax_total,fee_total,"
    "tax_total,cart_discount,discount_total,order_total,order_subtotal,order_key,order_currency,"
    "payment_method,payment_method_title,transaction_id,customer_ip_address,customer_id,"
    "customer_email,billing_first_name,billing_last_name,billing_email,customer_note,"
    "line_items,refunds"
).split(",")

N = 12


def _csv(header: list[str], columns: dict[str, list[str]], tmp_path: Path, name: str) -> Path:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for i in range(N):
        writer.writerow([columns[h][i] if h in columns else "" for h in header])
    path = tmp_path / name
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def shopify(tmp_path: Path) -> Path:
    return _csv(
        SHOPIFY,
        {
            "Name": [f"#{1001 + i}" for i in range(N)],
            "Email": [f"c{i}@example.com" for i in range(N)],
            "Financial Status": ["paid"] * (N - 1) + ["refunded"],
            "Paid at": [f"2025-10-{7 + i:02d} 10:00:00 +0200" for i in range(N)],
            "Currency": ["USD"] * N,
            "Subtotal": [f"{90 + i}.00" for i in range(N)],
            "Shipping": ["10.00"] * N,
            "Taxes": ["0.00"] * N,
            "Total": [f"{100 + i}.00" for i in range(N)],
            "Discount Amount": ["0.00"] * N,
            "Created at": [f"2025-10-{7 + i:02d} 09:50:26 +0200" for i in range(N)],
            "Lineitem quantity": ["1"] * N,
            "Lineitem name": ["Mug"] * N,
            "Lineitem price": [f"{90 + i}.00" for i in range(N)],
            "Billing Name": [f"Customer {i}" for i in range(N)],
            "Payment Method": ["Stripe"] * N,
            "Payment Reference": [f"c{25000 + i}.1" for i in range(N)],
            "Refunded Amount": ["0.00"] * N,
            "Outstanding Balance": ["0.00"] * N,
            "Id": [str(5_100_000_000_000 + 7 * i) for i in range(N)],
            "Payment ID": [f"c{25000 + i}.1" for i in range(N)],
        },
        tmp_path,
        "orders_export_1.csv",
    )


def stripe(tmp_path: Path, header: list[str], refs: list[str] | None = None) -> Path:
    created = "Created (UTC)" if "Created (UTC)" in header else "Created date (UTC)"
    return _csv(
        header,
        {
            "id": [f"ch_3Q{i:08d}" for i in range(N)],
            "Description": [f"Order #{1001 + i}" for i in range(N)],
            created: [f"2025-10-{7 + i:02d} 08:02:11" for i in range(N)],
            "Amount": [f"{100 + i}.00" for i in range(N)],
            "Amount Refunded": ["0.00"] * N,
            "Currency": ["usd"] * N,
            "Converted Amount": [f"{92 + i}.17" for i in range(N)],
            "Converted Amount Refunded": ["0.00"] * N,
            "Fee": ["3.20"] * N,
            "Converted Currency": ["eur"] * N,
            "Status": ["Paid"] * N,
            "Customer ID": [f"cus_{i:06d}" for i in range(N)],
            "Customer Email": [f"c{i}@example.com" for i in range(N)],
            "Captured": ["true"] * N,
            "Card ID": [f"card_{i:06d}" for i in range(N)],
            "Card Last4": ["4242"] * N,
            "Card Exp Month": [str(1 + i % 12) for i in range(N)],
            "Card Exp Year": ["2028"] * N,
            "PaymentIntent ID": [f"pi_3Q{i:08d}" for i in range(N)],
            "order_id (metadata)": refs or [f"#{1001 + i}" for i in range(N)],
        },
        tmp_path,
        "unified_payments.csv",
    )


def propose(first: Path, second: Path) -> Proposal:
    limit = 1 << 30
    return infer_mapping(
        inspect_csv(first, first.name, max_bytes=limit),
        inspect_csv(second, second.name, max_bytes=limit),
    )


def columns(proposal: Proposal, role: Role) -> dict[str, str | None]:
    return {c.field: c.column for c in proposal.dataset(role).choices}


@pytest.mark.parametrize("header", [STRIPE_CREATED_UTC, STRIPE_CREATED_DATE_UTC])
def test_shopify_against_stripe_maps_without_clarification(
    tmp_path: Path, header: list[str]
) -> None:
    proposal = propose(stripe(tmp_path, header), shopify(tmp_path))
    assert proposal.clarifications == []
    assert proposal.orders.file_name == "orders_export_1.csv"
    assert columns(proposal, Role.ORDERS) == {
        "order_id": "Name",
        "order_amount": "Total",
        "currency": "Currency",
        "order_date": "Created at",
        "order_status": "Financial Status",
        "customer": "Email",
    }
    created = "Created (UTC)" if "Created (UTC)" in header else "Created date (UTC)"
    assert columns(proposal, Role.PAYMENTS) == {
        "payment_id": "id",
        "order_id": "order_id (metadata)",
        "captured_amount": "Amount",
        "currency": "Currency",
        "captured_at": created,
        "payment_status": "Status",
        "refunded_amount": "Amount Refunded",
    }
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.payments.options.timestamps["captured_at"].timezone == "UTC"
    assert mapping.orders.options.timestamps["order_date"].timezone is None


def test_woocommerce_with_transaction_id_is_the_orders_file(tmp_path: Path) -> None:
    woo = _csv(
        WOOCOMMERCE,
        {
            "order_id": [str(40_000 + 17 * i) for i in range(N)],
            "order_number": [str(2001 + i) for i in range(N)],
            "order_date": [f"2025-10-{7 + i:02d} 09:50:26" for i in range(N)],
            "status": ["completed"] * N,
            "shipping_total": ["5.00"] * N,
            "tax_total": ["0.00"] * N,
            "discount_total": ["0.00"] * N,
            "order_total": [f"{100 + i}.00" for i in range(N)],
            "order_subtotal": [f"{95 + i}.00" for i in range(N)],
            "order_key": [f"wc_order_{i:x}kQ9" for i in range(N)],
            "order_currency": ["EUR"] * N,
            "payment_method": ["stripe"] * N,
            "transaction_id": [f"ch_3Q{i:08d}" for i in range(N)],
            "customer_id": [str(i + 1) for i in range(N)],
            "billing_email": [f"c{i}@example.com" for i in range(N)],
        },
        tmp_path,
        "orders-2025-10.csv",
    )
    payments = stripe(tmp_path, STRIPE_CREATED_UTC, refs=[str(2001 + i) for i in range(N)])
    proposal = propose(payments, woo)
    assert proposal.clarifications == []
    mapped = columns(proposal, Role.ORDERS)
    assert proposal.orders.file_name == "orders-2025-10.csv"
    assert mapped["order_id"] == "order_number"
    assert mapped["order_amount"] == "order_total"
    assert mapped["currency"] == "order_currency"
    assert mapped["order_date"] == "order_date"


def test_amount_and_amount_captured_ask_which_is_the_captured_amount(tmp_path: Path) -> None:
    orders = shopify(tmp_path)
    payments = _csv(
        ["id", "Amount", "Amount Refunded", "Amount Captured", "Currency", "order_id"],
        {
            "id": [f"py_{i:06d}" for i in range(N)],
            "Amount": [f"{100 + i}.00" for i in range(N)],
            "Amount Refunded": ["0.00"] * N,
            "Amount Captured": [f"{100 + i - (i % 3)}.00" for i in range(N)],
            "Currency": ["USD"] * N,
            "order_id": [f"#{1001 + i}" for i in range(N)],
        },
        tmp_path,
        "payments.csv",
    )
    proposal = propose(orders, payments)
    assert proposal.mapping is None
    [question] = proposal.clarifications
    assert question.field == "captured_amount"
    assert question.role is Role.PAYMENTS
    assert set(question.choices) == {"Amount", "Amount Captured"}
    assert "captured_amount" in question.question


def test_unknown_headers_map_from_values(tmp_path: Path) -> None:
    orders = _csv(
        ["Ref", "Betrag", "Waehrung", "Kunde"],
        {
            "Ref": [f"A-{500 + i}" for i in range(N)],
            "Betrag": [f"{100 + i},50" for i in range(N)],
            "Waehrung": ["EUR"] * N,
            "Kunde": [f"Kunde {i}" for i in range(N)],
        },
        tmp_path,
        "auftraege.csv",
    )
    payments = _csv(
        ["payment id", "order reference", "amount", "currency"],
        {
            "payment id": [f"TX{9000 + i}" for i in range(N)],
            "order reference": [f"A-{500 + i}" for i in range(N)],
            "amount": [f"{100 + i}.50" for i in range(N)],
            "currency": ["eur"] * N,
        },
        tmp_path,
        "zahlungen.csv",
    )
    proposal = propose(payments, orders)
    mapped = columns(proposal, Role.ORDERS)
    assert mapped["currency"] == "Waehrung"
    assert mapped["order_id"] == "Ref"
    assert mapped["order_amount"] == "Betrag"
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.orders.options.amounts["order_amount"].decimal == ","


def test_amounts_in_cents_are_detected_against_the_other_file(tmp_path: Path) -> None:
    orders = shopify(tmp_path)
    payments = _csv(
        ["charge_id", "order_ref", "amount", "currency"],
        {
            "charge_id": [f"ch_{i:06d}" for i in range(N)],
            "order_ref": [f"#{1001 + i}" for i in range(N)],
            "amount": [str((100 + i) * 100) for i in range(N)],
            "currency": ["usd"] * N,
        },
        tmp_path,
        "charges.csv",
    )
    proposal = propose(orders, payments)
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.payments.options.amounts["captured_amount"].unit == "minor"
    assert mapping.orders.options.amounts["order_amount"].unit == "major"


def test_a_missing_required_column_is_a_clarification(tmp_path: Path) -> None:
    orders = _csv(
        ["order_id", "currency", "note"],
        {
            "order_id": [str(1001 + i) for i in range(N)],
            "currency": ["USD"] * N,
            "note": ["x"] * N,
        },
        tmp_path,
        "orders.csv",
    )
    payments = stripe(tmp_path, STRIPE_CREATED_UTC, refs=[str(1001 + i) for i in range(N)])
    proposal = propose(orders, payments)
    fields = {q.field for q in proposal.clarifications}
    assert "order_amount" in fields
    assert proposal.mapping is None


def test_header_matching_ignores_case_spacing_and_punctuation() -> None:
    order_id = spec(Role.PAYMENTS, "order_id")
    assert header_score(order_id, "order_id (metadata)") == pytest.approx(1.0)
    assert header_score(order_id, "  Order-ID ") == pytest.approx(1.0)
    assert header_score(order_id, "ORDER ID") == pytest.approx(1.0)
    captured = spec(Role.PAYMENTS, "captured_amount")
    assert header_score(captured, "Amount Refunded") < 0.5
    assert header_score(captured, "Converted Amount") < 0.5


def test_a_currency_column_of_symbols_is_asked_about_with_what_it_holds(tmp_path: Path) -> None:
    orders = tmp_path / "orders.csv"
    orders.write_text(
        "order_id,total,currency\n" + "".join(f"{1000 + i},{10 + i}.00,€\n" for i in range(8))
    )
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "payment_id,order_id,amount,currency\n"
        + "".join(f"ch_{i},{1000 + i},{10 + i}.00,usd\n" for i in range(8))
    )
    proposal = propose(orders, payments)
    [question] = [q for q in proposal.clarifications if q.field == "currency"]
    # Not the other file's USD first: the orders say euros, in a symbol.
    assert '"currency" holds €, a symbol' in question.question
    assert question.choices[0] == "EUR"
