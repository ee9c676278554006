"""Real exports without a question: a fixture per export format maps and reconciles.

Each payments format is paired with an orders fixture whose ids it names (and each orders format
with a payments fixture); the fixtures in tests/fixtures/formats/ follow the vendors' published
column lists, with rows written for these tests and a few exceptions built in (README.md there
lists them). For every pair, inference must need no clarification, choose the expected column
for every required field and the expected reading options, and the reconciliation must give the
counts per category that a finance person expects from the rows.

Some payment exports mix row kinds (fees, payouts, refunds, authorisation memos and failed
attempts next to captures): inference proposes which values of a status or type column are
captures, refunds and rows to ignore, and the engine reads them so (`ROW_KINDS` below).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent.data.ingest import inspect_csv
from agent.data.mapping import Proposal, infer_mapping, normalize_header
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import SCHEMA, Role, RowKinds

FORMATS = Path(__file__).parents[2] / "fixtures" / "formats"
LIMIT = 1 << 30


@dataclass(frozen=True)
class Side:
    """What inference must propose for one file of a pair."""

    file: str
    columns: dict[str, str | None]
    delimiter: str = ","
    encoding: str = "utf-8"
    decimal: str = "."
    thousands: str = ""
    unit: str = "major"
    timestamps: dict[str, str] = field(default_factory=dict)
    default_currency: str | None = None


@dataclass(frozen=True)
class Pair:
    """An orders fixture, a payments fixture, and the findings a person expects of them."""

    name: str
    orders: Side
    payments: Side
    counts: dict[str, int]


SHOPIFY = Side(
    "shopify_orders.csv",
    {
        "order_id": "Name",
        "order_amount": "Total",
        "currency": "Currency",
        "order_date": "Created at",
        "order_status": "Financial Status",
    },
    timestamps={"order_date": "%Y-%m-%d %H:%M:%S %z"},
)
BIGCOMMERCE = Side(
    "bigcommerce_orders.csv",
    {
        "order_id": "Order ID",
        "order_amount": "Order Total (inc tax)",
        "currency": "Order Currency Code",
        "order_date": "Order Date",
        "order_status": "Order Status",
    },
    timestamps={"order_date": "%d/%m/%Y"},
)
# A `$` amount says its currency only with the other file: every BigCommerce order is in USD.
SQUARE = Side(
    "square_payments.csv",
    {
        "payment_id": "Transaction ID",
        "order_id": "Order Reference ID",
        "captured_amount": "Total Collected",
        "currency": None,
        "captured_at": "Date",
        "payment_status": "Transaction Status",
    },
    thousands=",",
    timestamps={"captured_at": "%m/%d/%Y %H:%M:%S"},
    default_currency="USD",
)


def _language(
    name: str,
    files: tuple[str, str],
    orders: dict[str, str | None],
    payments: dict[str, str | None],
    patterns: tuple[str, str],
    counts: dict[str, int],
    *,
    thousands: str = ".",
    encoding: str = "utf-8",
) -> Pair:
    """A pair of exports written in one language: semicolons, decimal commas, day first."""
    sides = [
        Side(
            file,
            columns,
            delimiter=";",
            encoding=encoding,
            decimal=",",
            thousands=thousands,
            timestamps={field: pattern},
        )
        for file, columns, field, pattern in zip(
            files, (orders, payments), ("order_date", "captured_at"), patterns, strict=True
        )
    ]
    return Pair(name, sides[0], sides[1], counts)


PAIRS = [
    Pair(
        "shopify+stripe",
        SHOPIFY,
        Side(
            "stripe_payments.csv",
            {
                "payment_id": "id",
                "order_id": "order_id (metadata)",
                "captured_amount": "Amount",
                "currency": "Currency",
                "captured_at": "Created date (UTC)",
                "payment_status": "Status",
                "refunded_amount": "Amount Refunded",
            },
            timestamps={"captured_at": "%Y-%m-%d %H:%M:%S"},
        ),
        {
            "amount_mismatch": 1,
            "duplicate_capture": 1,
            "capture_without_order": 1,
            "duplicate_payment_row": 1,
        },
    ),
    Pair(
        "shopify+klarna",
        SHOPIFY,
        Side(
            "klarna_payments.csv",
            {
                "payment_id": "capture_id",
                "order_id": "merchant_reference1",
                "captured_amount": "amount",
                "currency": "currency_code",
                "captured_at": "capture_date",
                "payment_status": "type",
            },
            delimiter=";",
            timestamps={"captured_at": "%Y-%m-%dT%H:%M:%S%z"},
        ),
        {"amount_mismatch": 1},
    ),
    Pair(
        "woocommerce+mollie",
        Side(
            "woocommerce_orders.csv",
            {
                "order_id": "order_number",
                "order_amount": "order_total",
                "currency": "order_currency",
                "order_date": "order_date",
                "order_status": "status",
            },
            timestamps={"order_date": "%Y-%m-%d %H:%M:%S"},
        ),
        Side(
            "mollie_payments.csv",
            {
                "payment_id": "ID",
                "order_id": "Description",
                "captured_amount": "Amount",
                "currency": "Currency",
                "captured_at": "Date",
                "payment_status": "Status",
                "refunded_amount": "Amount refunded",
            },
            timestamps={"captured_at": "%Y-%m-%d %H:%M:%S"},
        ),
        {"amount_mismatch": 1, "capture_without_order": 1, "order_without_capture": 1},
    ),
    Pair(
        "bigcommerce+braintree",
        BIGCOMMERCE,
        Side(
            "braintree_payments.csv",
            {
                "payment_id": "Transaction ID",
                "order_id": "Order ID",
                "captured_amount": "Amount Submitted For Settlement",
                "currency": "Currency ISO Code",
                "captured_at": "Created Datetime",
                "payment_status": "Transaction Status",
            },
            timestamps={"captured_at": "%m/%d/%Y %H:%M:%S"},
        ),
        {"amount_mismatch": 1, "order_without_capture": 1, "capture_without_order": 1},
    ),
    Pair(
        "bigcommerce+square",
        BIGCOMMERCE,
        SQUARE,
        {"amount_mismatch": 1, "order_without_capture": 1, "capture_without_order": 1},
    ),
    Pair(
        "magento+adyen",
        Side(
            "magento_orders.csv",
            {
                "order_id": "ID",
                "order_amount": "Grand Total (Base)",
                "currency": None,
                "order_status": "Status",
            },
            thousands=",",
            default_currency="EUR",
        ),
        Side(
            "adyen_payments.csv",
            {
                "payment_id": "Psp Reference",
                "order_id": "Merchant Reference",
                "captured_amount": "Gross Credit (GC)",
                "currency": "Gross Currency",
                "captured_at": "Creation Date",
                "payment_status": "Type",
            },
            timestamps={"captured_at": "%Y-%m-%d %H:%M:%S"},
        ),
        {"amount_mismatch": 1, "order_without_capture": 1, "capture_without_order": 1},
    ),
    Pair(
        "squarespace+stripe-api",
        Side(
            "squarespace_orders.csv",
            {
                "order_id": "Order ID",
                "order_amount": "Total",
                "currency": "Currency",
                "order_date": "Created at",
                "order_status": "Financial Status",
            },
            timestamps={"order_date": "%Y-%m-%d %H:%M:%S %z"},
        ),
        Side(
            "stripe_api_payments.csv",
            {
                "payment_id": "id",
                "order_id": "metadata.order_id",
                "captured_amount": "amount_captured",
                "currency": "currency",
                "payment_status": "status",
                "refunded_amount": "amount_refunded",
            },
            unit="minor",
        ),
        {
            "amount_mismatch": 1,
            "partial_capture": 1,
            "order_without_capture": 1,
            "capture_without_order": 1,
        },
    ),
    Pair(
        "etsy+paypal",
        Side(
            "etsy_orders.csv",
            {"order_id": "Order ID", "order_amount": "Order Total", "currency": "Currency"},
        ),
        Side(
            "paypal_payments.csv",
            {
                "payment_id": "Transaction ID",
                "order_id": "Invoice Number",
                "captured_amount": "Gross",
                "currency": "Currency",
                "captured_at": "Date",
                "payment_status": "Status",
            },
            timestamps={"captured_at": "%m/%d/%Y %H:%M:%S"},
        ),
        {"amount_mismatch": 1, "order_without_capture": 2, "capture_without_order": 1},
    ),
    _language(
        "german",
        ("de_bestellungen.csv", "de_zahlungen.csv"),
        {
            "order_id": "Bestellnummer",
            "order_amount": "Gesamtbetrag",
            "currency": "Währung",
            "order_date": "Bestelldatum",
            "order_status": "Zahlungsstatus",
        },
        {
            "payment_id": "Transaktions-ID",
            "order_id": "Bestellnummer",
            "captured_amount": "Betrag",
            "currency": "Währung",
            "captured_at": "Buchungsdatum",
        },
        ("%d.%m.%Y %H:%M", "%d.%m.%Y %H:%M:%S"),
        {
            "amount_mismatch": 1,
            "order_without_capture": 1,
            "capture_without_order": 1,
            "duplicate_payment_row": 1,
        },
        encoding="cp1252",
    ),
    _language(
        "french",
        ("fr_commandes.csv", "fr_paiements.csv"),
        {
            "order_id": "N° de commande",
            "order_amount": "Montant TTC",
            "currency": "Devise",
            "order_date": "Date de commande",
            "order_status": "Statut",
        },
        {
            "payment_id": "Identifiant de transaction",
            "order_id": "Référence de commande",
            "captured_amount": "Montant",
            "currency": "Devise",
            "captured_at": "Date de paiement",
        },
        ("%d/%m/%Y %H:%M", "%d/%m/%Y %H:%M:%S"),
        {
            "amount_mismatch": 1,
            "order_without_capture": 1,
            "capture_without_order": 1,
            "duplicate_capture": 1,
        },
        thousands="",  # `1 249,50`: the (narrow) spaces are dropped before reading
    ),
    _language(
        "spanish",
        ("es_pedidos.csv", "es_pagos.csv"),
        {
            "order_id": "Nº de pedido",
            "order_amount": "Importe total",
            "currency": "Moneda",
            "order_date": "Fecha",
            "order_status": "Estado",
        },
        {
            "payment_id": "ID de transacción",
            "order_id": "Nº de pedido",
            "captured_amount": "Importe",
            "currency": "Moneda",
            "captured_at": "Fecha de pago",
        },
        ("%d/%m/%Y %H:%M", "%d/%m/%Y %H:%M:%S"),
        {
            "amount_mismatch": 1,
            "order_without_capture": 1,
            "capture_without_order": 1,
            "partial_capture": 1,
        },
    ),
    _language(
        "dutch",
        ("nl_bestellingen.csv", "nl_betalingen.csv"),
        {
            "order_id": "Bestelnummer",
            "order_amount": "Totaalbedrag",
            "currency": "Valuta",
            "order_date": "Besteldatum",
            "order_status": "Betaalstatus",
        },
        {
            "payment_id": "Transactie-ID",
            "order_id": "Omschrijving",
            "captured_amount": "Bedrag",
            "currency": "Valuta",
            "captured_at": "Datum",
        },
        ("%d-%m-%Y %H:%M", "%d-%m-%Y %H:%M"),
        {
            "amount_mismatch": 1,
            "order_without_capture": 1,
            "capture_without_order": 1,
            "duplicate_capture": 1,
        },
    ),
    _language(
        "italian",
        ("it_ordini.csv", "it_pagamenti.csv"),
        {
            "order_id": "Numero ordine",
            "order_amount": "Totale",
            "currency": "Valuta",
            "order_date": "Data ordine",
            "order_status": "Stato pagamento",
        },
        {
            "payment_id": "ID transazione",
            "order_id": "Numero ordine",
            "captured_amount": "Importo",
            "currency": "Valuta",
            "captured_at": "Data",
        },
        ("%d/%m/%Y %H:%M", "%d/%m/%Y %H:%M:%S"),
        {
            "amount_mismatch": 1,
            "order_without_capture": 1,
            "capture_without_order": 1,
            "duplicate_payment_row": 1,
        },
    ),
    _language(
        "portuguese",
        ("pt_pedidos.csv", "pt_pagamentos.csv"),
        {
            "order_id": "Número do pedido",
            "order_amount": "Valor total",
            "currency": "Moeda",
            "order_date": "Data do pedido",
            "order_status": "Status do pagamento",
        },
        {
            "payment_id": "ID da transação",
            "order_id": "Número do pedido",
            "captured_amount": "Valor",
            "currency": "Moeda",
            "captured_at": "Data",
        },
        ("%d/%m/%Y %H:%M", "%d/%m/%Y %H:%M:%S"),
        {
            "amount_mismatch": 1,
            "order_without_capture": 1,
            "capture_without_order": 1,
            "partial_capture": 1,
        },
    ),
]


def propose(pair: Pair) -> Proposal:
    """Infer the mapping of a pair, handing the payments file first: roles come from content."""
    payments, orders = FORMATS / pair.payments.file, FORMATS / pair.orders.file
    return infer_mapping(
        inspect_csv(payments, payments.name, max_bytes=LIMIT),
        inspect_csv(orders, orders.name, max_bytes=LIMIT),
    )


def test_every_named_format_has_a_pair() -> None:
    names = {side.file for pair in PAIRS for side in (pair.orders, pair.payments)}
    orders = {"shopify", "woocommerce", "bigcommerce", "magento", "squarespace", "etsy"}
    payments = {
        "stripe",
        "stripe_api",
        "paypal",
        "adyen",
        "square",
        "braintree",
        "mollie",
        "klarna",
    }
    assert {f"{name}_orders.csv" for name in orders} <= names
    assert {f"{name}_payments.csv" for name in payments} <= names
    assert names == {path.name for path in FORMATS.glob("*.csv")}


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair.name)
def test_maps_without_a_question(pair: Pair) -> None:
    proposal = propose(pair)
    assert proposal.clarifications == []
    mapping = proposal.mapping
    assert mapping is not None
    for role, side in ((Role.ORDERS, pair.orders), (Role.PAYMENTS, pair.payments)):
        dataset = proposal.dataset(role)
        assert dataset.file_name == side.file
        chosen = {c.field: c.column for c in dataset.choices}
        required = {spec.name for spec in SCHEMA[role] if spec.required}
        assert required <= set(side.columns)
        assert {f: chosen[f] for f in side.columns} == side.columns
        options = mapping.for_role(role).options
        assert (options.encoding, options.delimiter, options.default_currency) == (
            side.encoding,
            side.delimiter,
            side.default_currency,
        )
        money = options.amounts["order_amount" if role is Role.ORDERS else "captured_amount"]
        assert (money.decimal, money.thousands) == (side.decimal, side.thousands)
        assert {(r.decimal, r.unit) for r in options.amounts.values()} == {
            (side.decimal, side.unit)
        }
        patterns = {name: reading.pattern for name, reading in options.timestamps.items()}
        assert patterns == side.timestamps


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair.name)
def test_reconciles_to_the_counts_built_into_the_rows(pair: Pair, tmp_path: Path) -> None:
    mapping = propose(pair).mapping
    assert mapping is not None
    files = {
        Role.ORDERS: (FORMATS / pair.orders.file, pair.orders.file),
        Role.PAYMENTS: (FORMATS / pair.payments.file, pair.payments.file),
    }
    counts = run_job(files, mapping, Policy(), tmp_path / "x.csv").reconciliation.summary().counts
    assert set(pair.counts) <= set(counts)
    assert counts == {category: pair.counts.get(category, 0) for category in counts}


@pytest.mark.parametrize(
    ("header", "folded"),
    [
        ("Währung", "wahrung"),
        ("Nº de pedido", "no pedido"),
        ("N° de commande", "n commande"),
        ("ID da transação", "id transacao"),
        ("Order Total (inc tax)", "order total"),
        ("Order Total (ex tax)", "order total untaxed"),
        ("Montant TTC", "montant"),
        ("Montant HT", "montant untaxed"),
        ("merchant_reference1", "merchant reference 1"),
        ("amountCaptured", "amount captured"),
        ("MwSt.", "mwst"),
        ("order_id (metadata)", "order id metadata"),
    ],
)
def test_headers_are_folded_as_aliases_are_written(header: str, folded: str) -> None:
    assert normalize_header(header) == folded


def _rewrite(
    source: Path,
    target: Path,
    change: dict[str, dict[int, str]],
    rename: dict[str, str] | None = None,
) -> Path:
    """A copy of a fixture with some cells changed (column -> data row index -> value) and
    some columns renamed."""
    rows = list(csv.reader(io.StringIO(source.read_text(encoding="utf-8"))))
    header = rows[0]
    for column, cells in change.items():
        for index, value in cells.items():
            rows[index + 1][header.index(column)] = value
    rows[0] = [(rename or {}).get(name, name) for name in header]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    target.write_text(out.getvalue(), encoding="utf-8")
    return target


def test_a_dollar_amount_with_orders_in_two_currencies_is_a_question(tmp_path: Path) -> None:
    orders = _rewrite(
        FORMATS / "bigcommerce_orders.csv",
        tmp_path / "bigcommerce_orders.csv",
        {"Order Currency Code": {0: "CAD", 5: "CAD"}},
    )
    payments = FORMATS / "square_payments.csv"
    proposal = infer_mapping(
        inspect_csv(payments, payments.name, max_bytes=LIMIT),
        inspect_csv(orders, orders.name, max_bytes=LIMIT),
    )
    [question] = proposal.clarifications
    assert (question.role, question.field) == (Role.PAYMENTS, "currency")
    assert proposal.mapping is None


def test_amount_columns_that_differ_on_a_successful_row_are_a_question(tmp_path: Path) -> None:
    # amount_captured is lower than amount on one succeeded charge: a partial capture, so the
    # two columns are two readings and a person chooses.
    payments = _rewrite(
        FORMATS / "stripe_api_payments.csv",
        tmp_path / "stripe_api_payments.csv",
        {"amount_captured": {0: "5000"}},
    )
    orders = FORMATS / "squarespace_orders.csv"
    proposal = infer_mapping(
        inspect_csv(orders, orders.name, max_bytes=LIMIT),
        inspect_csv(payments, payments.name, max_bytes=LIMIT),
    )
    [question] = proposal.clarifications
    assert question.field == "captured_amount"
    assert set(question.choices) == {"amount", "amount_captured"}


def test_an_amount_column_empty_on_successful_rows_captured_nothing(tmp_path: Path) -> None:
    # Headers that say nothing about debit or credit: the values decide. "Gross A" is filled
    # only on the Refunded row, so it cannot be what the Settled rows captured.
    payments = _rewrite(
        FORMATS / "adyen_payments.csv",
        tmp_path / "adyen_payments.csv",
        {},
        rename={"Gross Debit (GC)": "Gross A (GC)", "Gross Credit (GC)": "Gross B (GC)"},
    )
    orders = FORMATS / "magento_orders.csv"
    proposal = infer_mapping(
        inspect_csv(payments, payments.name, max_bytes=LIMIT),
        inspect_csv(orders, orders.name, max_bytes=LIMIT),
    )
    assert proposal.clarifications == []
    [captured] = [c for c in proposal.payments.choices if c.field == "captured_amount"]
    assert captured.column == "Gross B (GC)"
    [ruled_out] = [a for a in captured.alternatives if a.column == "Gross A (GC)"]
    assert "empty or zero" in ruled_out.reason


# The row kinds inference proposes for the exports that mix them: (kinds column or None for the
# status column, captures, refunds, ignored), and the ledger's ignored rows of the payments file.
ROW_KINDS: dict[str, tuple[RowKinds, dict[str, int]]] = {
    "shopify+klarna": (
        RowKinds(capture=("sale",), refund=("return",), ignore=("fee",)),
        {"row_kind": 4},
    ),
    "woocommerce+mollie": (
        RowKinds(capture=("paid",), ignore=("open",)),
        {"failed_attempt": 3, "row_kind": 1},
    ),
    "bigcommerce+braintree": (
        RowKinds(
            column="Transaction Type",
            capture=("sale",),
            refund=("credit",),
            ignore=("gateway_rejected", "processor_declined", "voided"),
        ),
        {"row_kind": 3},
    ),
    "bigcommerce+square": (
        RowKinds(column="Event Type", capture=("payment",), refund=("refund",)),
        {},
    ),
    "magento+adyen": (
        RowKinds(capture=("settled",), refund=("refunded",), ignore=("fee", "merchantpayout")),
        {"row_kind": 4},
    ),
    "etsy+paypal": (
        RowKinds(
            column="Type",
            capture=("express_checkout_payment",),
            refund=("payment_refund",),
            ignore=("denied", "general_authorization", "general_withdrawal", "pending"),
        ),
        {"row_kind": 3},
    ),
}


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair.name)
def test_row_kinds_are_proposed_where_an_export_mixes_them(pair: Pair, tmp_path: Path) -> None:
    mapping = propose(pair).mapping
    assert mapping is not None
    expected = ROW_KINDS.get(pair.name)
    assert mapping.payments.options.kinds == (expected[0] if expected else None)
    files = {
        Role.ORDERS: (FORMATS / pair.orders.file, pair.orders.file),
        Role.PAYMENTS: (FORMATS / pair.payments.file, pair.payments.file),
    }
    report = load_and_validate(connect(), files, mapping, policy=Policy())
    assert report.errors == []
    if expected:
        run = run_job(files, mapping, Policy(), tmp_path / "x.csv").reconciliation
        assert run.summary().ledger[1].ignored == expected[1]
