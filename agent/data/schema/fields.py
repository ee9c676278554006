"""The canonical schema: the fields each role's file is read into, and the headers naming them.

`SCHEMA` lists, per role, every canonical field with its kind, whether it is required, and the
header words (in the languages exports are commonly written in) that name it or point elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agent.data.schema.roles import Role
from agent.data.schema.words import (
    CURRENCY_ALIASES,
    MONEY_ELSEWHERE,
    ORDER_ID_ALIASES,
    ORDER_WORDS,
    STATUS_ALIASES,
)

FieldKind = Literal["id", "reference", "amount", "currency", "timestamp", "status", "text"]


@dataclass(frozen=True)
class FieldSpec:
    """A canonical field: its kind, whether it is required, and the header words that name it.

    `aliases` maps a normalized header (lower case, words separated by single spaces) to how
    strongly it names this field; `against` lists words that, in a header, point elsewhere.
    `by_row`: a file with no column for it names each row by its data row instead (`row 1`,
    `row 2`, ... as evidence numbers rows), never asks which column holds it (a statement
    without a transaction id of its own, such as Etsy's).
    """

    name: str
    kind: FieldKind
    required: bool
    description: str
    aliases: dict[str, float]
    against: frozenset[str] = field(default_factory=frozenset)
    by_row: bool = False


SCHEMA: dict[Role, tuple[FieldSpec, ...]] = {
    Role.ORDERS: (
        FieldSpec(
            "order_id",
            "id",
            True,
            "the order's own id, as payments refer to it",
            {**ORDER_ID_ALIASES, "name": 0.55, "number": 0.55, "id": 0.55, "reference": 0.5},
            frozenset(
                "customer item items lineitem product sku variant transaction payment".split()
            ),
        ),
        FieldSpec(
            "order_amount",
            "amount",
            True,
            "the total the customer owes for the order",
            {
                "order total": 1.0,
                "order amount": 1.0,
                "total": 0.95,
                "grand total": 0.95,
                "total price": 0.9,
                "total amount": 0.95,
                "amount": 0.8,
                "order value": 0.9,
                "gross": 0.6,
                "gesamtbetrag": 1.0,
                "gesamtsumme": 0.95,
                "gesamtpreis": 0.9,
                "bestellwert": 0.9,
                "rechnungsbetrag": 0.85,
                "summe": 0.8,
                "betrag": 0.8,
                "montant total": 0.95,
                "total commande": 0.95,
                "montant": 0.8,
                "importe total": 1.0,
                "total pedido": 0.95,
                "importe": 0.8,
                "totaalbedrag": 1.0,
                "totaal": 0.9,
                "bedrag": 0.8,
                "importo totale": 1.0,
                "totale ordine": 1.0,
                "totale": 0.95,
                "importo": 0.8,
                "valor total": 1.0,
                "valor": 0.75,
            },
            MONEY_ELSEWHERE | {"refunded", "refund", "captured", "paid"},
        ),
        FieldSpec(
            "currency",
            "currency",
            False,
            "the ISO 4217 code of the order's currency",
            {**CURRENCY_ALIASES, "order currency": 1.0, "order currency code": 1.0},
            frozenset({"converted", "presentment", "settlement"}),
        ),
        FieldSpec(
            "order_date",
            "timestamp",
            False,
            "when the order was placed",
            {
                "order date": 1.0,
                "created at": 0.9,
                "created": 0.85,
                "date": 0.7,
                "order created": 0.95,
                "created date": 0.9,
                "placed at": 0.9,
                "processed at": 0.6,
                "purchase date": 0.95,
                "sale date": 0.9,
                "bestelldatum": 1.0,
                "datum": 0.7,
                "date commande": 1.0,
                "fecha pedido": 1.0,
                "fecha": 0.7,
                "besteldatum": 1.0,
                "data ordine": 1.0,
                "data pedido": 1.0,
                "data": 0.7,
            },
            frozenset({"paid", "fulfilled", "cancelled", "updated", "shipped", "refunded"}),
        ),
        FieldSpec(
            "order_status",
            "status",
            False,
            "the order's payment state (paid, refunded, voided, …)",
            {
                "financial status": 1.0,
                "payment status": 0.85,
                "order status": 0.9,
                **STATUS_ALIASES,
                "zahlungsstatus": 0.9,
                "betaalstatus": 0.9,
                "stato pagamento": 0.9,
                "status pagamento": 0.9,
                "estado pago": 0.9,
                "order state": 0.9,
                "orderstatus": 0.9,
                "bestellstatus": 0.9,
                "bestelstatus": 0.9,
                "statut commande": 0.9,
                "etat commande": 0.9,
                "estado pedido": 0.9,
                "estado del pedido": 0.9,
                "stato ordine": 0.9,
                "estado da encomenda": 0.9,
                "status zamowienia": 0.9,
                "betalningsstatus": 0.9,
                "status platnosci": 0.9,
            },
            # A `state` column of statuses is found by its values (`candidates`), never
            # `Ship State`.
            frozenset({"fulfillment", "shipping", "delivery", "ship", "billing", "address"}),
        ),
        FieldSpec(
            "customer",
            "text",
            False,
            "who placed the order",
            {
                "customer": 1.0,
                "customer email": 1.0,
                "email": 0.9,
                "e mail": 0.9,
                "customer name": 0.95,
                "billing name": 0.8,
                "bill to name": 0.8,
                "billing email": 0.9,
                "customer id": 0.8,
                "kunde": 0.9,
                "client": 0.9,
                "cliente": 0.9,
                "klant": 0.9,
            },
        ),
    ),
    Role.PAYMENTS: (
        FieldSpec(
            "payment_id",
            "id",
            False,  # without a column of its own, each row is named by its number (`by_row`)
            "the payment's own id (charge, transaction)",
            {
                "payment id": 1.0,
                "charge id": 1.0,
                "transaction id": 1.0,
                "id": 0.9,
                "payment reference": 0.7,
                "psp reference": 0.9,
                "transaction": 0.8,
                "charge": 0.8,
                "capture id": 0.9,
                "txn id": 0.95,
                "transaktions id": 1.0,
                "transaktionsnummer": 1.0,
                "zahlungs id": 1.0,
                "identifiant transaction": 1.0,
                "id transaction": 1.0,
                "id paiement": 1.0,
                "id transaccion": 1.0,
                "id pago": 1.0,
                "transactie id": 1.0,
                "transactienummer": 1.0,
                "betaling id": 1.0,
                "id transazione": 1.0,
                "id pagamento": 1.0,
                "id transacao": 1.0,
            },
            ORDER_WORDS
            | frozenset(
                "customer card invoice transfer dispute balance source intent paymentintent "
                "merchant refund kunde client cliente klant "
                # A date, an amount, a kind, a text about the payment or the id of the payout
                # or batch it was paid out in is not its id.
                "date time amount total fee net gross type status title description info "
                "memo payout batch settlement deposit".split()
            ),
            by_row=True,
        ),
        FieldSpec(
            "order_id",
            "reference",
            True,
            "the order(s) the payment is for",
            {
                **ORDER_ID_ALIASES,
                "order id metadata": 1.0,
                "order number": 0.95,
                "order reference": 0.95,
                "order ref": 0.95,
                "order reference id": 0.95,
                "order": 0.85,
                "merchant reference": 0.85,
                "merchant reference 1": 0.85,
                "invoice number": 0.8,
                "reference": 0.7,
            },
            frozenset({"customer", "card", "invoice"}),
        ),
        FieldSpec(
            "captured_amount",
            "amount",
            True,
            "the amount captured (charged) by the payment",
            {
                "amount captured": 1.0,
                "captured amount": 1.0,
                "captured": 0.6,
                "amount": 0.9,
                "amount paid": 0.95,
                "paid amount": 0.95,
                "gross": 0.7,
                "gross amount": 0.8,
                "gross credit": 0.85,
                "charge amount": 0.95,
                "payment amount": 0.95,
                "amount submitted for settlement": 0.9,
                "total collected": 0.95,
                "total": 0.6,
                "betrag": 0.9,
                "bruttobetrag": 0.9,
                "zahlbetrag": 0.95,
                "montant": 0.9,
                "montant paye": 0.95,
                "importe": 0.9,
                "importe pagado": 0.95,
                "bedrag": 0.9,
                "importo": 0.9,
                "valor": 0.85,
                "valor pago": 0.95,
            },
            MONEY_ELSEWHERE | {"refunded", "refund", "authorized", "requested", "debit"},
        ),
        FieldSpec(
            "currency",
            "currency",
            False,
            "the ISO 4217 code of the payment's currency",
            {**CURRENCY_ALIASES, "payment currency": 1.0, "gross currency": 0.95},
            frozenset({"converted", "settlement", "presentment", "net"}),
        ),
        FieldSpec(
            "captured_at",
            "timestamp",
            False,
            "when the payment was captured",
            {
                "captured at": 1.0,
                "capture date": 0.95,
                "created utc": 0.9,
                "created date utc": 0.9,
                "created": 0.85,
                "created at": 0.85,
                "created datetime": 0.9,
                "creation date": 0.9,
                "date": 0.7,
                "payment date": 0.95,
                "transaction date": 0.9,
                "sale date": 0.6,
                "zahlungsdatum": 0.95,
                "buchungsdatum": 0.9,
                "datum": 0.7,
                "date paiement": 0.95,
                "fecha pago": 0.95,
                "fecha": 0.7,
                "betaaldatum": 0.95,
                "data pagamento": 0.95,
                "data": 0.7,
            },
            frozenset("available refunded dispute updated settlement disbursement".split()),
        ),
        FieldSpec(
            "payment_status",
            "status",
            False,
            "the payment's state (paid, failed, refunded, …)",
            {
                **STATUS_ALIASES,
                "status": 0.9,
                "payment status": 1.0,
                "transaction status": 1.0,
                "zahlungsstatus": 1.0,
                "betaalstatus": 1.0,
                # A row's type says what it is (a capture, a refund, a fee, a payout) where an
                # export has no status column: Adyen's settlement details, Klarna's report.
                "type": 0.6,
                "record type": 0.6,
                "transaction type": 0.6,
            },
            frozenset({"dispute", "card", "fulfillment"}),
        ),
        FieldSpec(
            "refunded_amount",
            "amount",
            False,
            "how much of the capture was refunded",
            {
                "amount refunded": 1.0,
                "refunded amount": 1.0,
                "refunded": 0.8,
                "refund amount": 1.0,
                "refunds": 0.7,
                "total refunded": 1.0,
                "erstattungsbetrag": 1.0,
                "erstattet": 0.8,
                "montant rembourse": 1.0,
                "rembourse": 0.8,
                "importe reembolsado": 1.0,
                "reembolsado": 0.8,
                "terugbetaald bedrag": 1.0,
                "terugbetaald": 0.8,
                "importo rimborsato": 1.0,
                "rimborsato": 0.8,
                "valor reembolsado": 1.0,
                # Settlement reports write money out in a debit column (Adyen's `Gross Debit
                # (GC)`): a refund row's amount is there, a capture's in the credit column.
                "gross debit": 0.85,
                "debit": 0.7,
                "debit amount": 0.8,
                "soll": 0.6,
                "debit gc": 0.85,
            },
            frozenset({"converted", "fee"}),
        ),
    ),
}


MAIN_AMOUNT = {Role.ORDERS: "order_amount", Role.PAYMENTS: "captured_amount"}
"""Each role's amount field: what an order totals, what a payment captured."""
TIME_FIELD = {Role.ORDERS: "order_date", Role.PAYMENTS: "captured_at"}
"""Each role's timestamp field: the two the capture window compares."""


def spec(role: Role, name: str) -> FieldSpec:
    """The field `name` of `role`; raises KeyError for a field the role does not have."""
    for item in SCHEMA[role]:
        if item.name == name:
            return item
    raise KeyError(f"{role.value} has no field {name}")
