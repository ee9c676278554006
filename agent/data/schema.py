"""The canonical schema and the mapping that reads a file into it.

A mapping says, per role, which source column feeds which canonical field and how to read the
values (the reading options). It is what a person approves, so it is an immutable value whose
canonical form (`canonical()`) has no floats and feeds the mapping digest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator


class Role(StrEnum):
    """The part a file plays in a reconciliation."""

    ORDERS = "orders"
    PAYMENTS = "payments"

    @property
    def other(self) -> Role:
        """The role of the other file."""
        return Role.PAYMENTS if self is Role.ORDERS else Role.ORDERS


FieldKind = Literal["id", "reference", "amount", "currency", "timestamp", "status", "text"]


@dataclass(frozen=True)
class FieldSpec:
    """A canonical field: its kind, whether it is required, and the header words that name it.

    `aliases` maps a normalized header (lower case, words separated by single spaces) to how
    strongly it names this field; `against` lists words that, in a header, point elsewhere.
    """

    name: str
    kind: FieldKind
    required: bool
    description: str
    aliases: dict[str, float]
    against: frozenset[str] = field(default_factory=frozenset)


# Header words that name money other than the total or the capture: fees, taxes, shipping,
# discounts, net amounts, part totals and counts, in English and in the languages that exports
# are commonly written in (German, French, Spanish, Dutch, Italian, Portuguese). Headers are
# compared folded (lower case, no accents, see `mapping.normalize_header`), so words are written
# that way here. `untaxed` stands for "excluding tax" (`ex tax`, `HT`, `exkl. MwSt.`).
_MONEY_ELSEWHERE = frozenset(
    """
    fee fees tax taxes vat shipping handling insurance discount subtotal converted net outstanding
    lineitem disputed tip duties balance price unit untaxed quantity qty shipped items count
    redeemed gift exchange rate
    gebuhr gebuhren gebuehr mwst ust steuer versand versandkosten rabatt netto nettobetrag
    zwischensumme frais tva port livraison remise reduction sous commission comision gastos envio
    iva descuento neto kosten transactiekosten btw verzendkosten verzending korting subtotaal
    commissione spedizione sconto subtotale taxa frete desconto liquido imposto
    """.split()
)

# Words that name an order (not a payment) in the languages above.
_ORDER_WORDS = frozenset(
    "order bestellnummer bestellung auftrag auftragsnummer commande pedido bestelnummer "
    "bestelling ordernummer ordine encomenda".split()
)

_ORDER_ID_ALIASES = {
    "order id": 1.0,
    "order number": 0.95,
    "order no": 0.95,
    "order nr": 0.95,
    "order": 0.8,
    "order name": 0.9,
    "order ref": 0.85,
    "order reference": 0.85,
    "bestellnummer": 0.95,
    "bestell nr": 0.95,
    "bestellung": 0.8,
    "auftragsnummer": 0.9,
    "n commande": 0.95,
    "no commande": 0.95,
    "numero commande": 0.95,
    "id commande": 0.95,
    "reference commande": 0.9,
    "commande": 0.8,
    "no pedido": 0.95,
    "n pedido": 0.95,
    "numero pedido": 0.95,
    "id pedido": 0.95,
    "referencia pedido": 0.9,
    "pedido": 0.8,
    "bestelnummer": 0.95,
    "ordernummer": 0.95,
    "bestelling": 0.8,
    "numero ordine": 0.95,
    "n ordine": 0.95,
    "id ordine": 0.95,
    "riferimento ordine": 0.9,
    "ordine": 0.8,
    "numero encomenda": 0.95,
    "encomenda": 0.8,
}

_CURRENCY_ALIASES = {
    "currency": 1.0,
    "currency code": 1.0,
    "currency iso code": 1.0,
    "ccy": 0.9,
    "wahrung": 1.0,
    "waehrung": 1.0,
    "devise": 1.0,
    "moneda": 1.0,
    "divisa": 0.95,
    "valuta": 1.0,
    "moeda": 1.0,
}

_STATUS_ALIASES = {
    "status": 0.8,
    "statut": 0.8,
    "etat": 0.7,
    "estado": 0.8,
    "stato": 0.8,
    "situacao": 0.8,
}

SCHEMA: dict[Role, tuple[FieldSpec, ...]] = {
    Role.ORDERS: (
        FieldSpec(
            "order_id",
            "id",
            True,
            "the order's own id, as payments refer to it",
            {**_ORDER_ID_ALIASES, "name": 0.55, "number": 0.55, "id": 0.55, "reference": 0.5},
            frozenset("customer item lineitem product sku variant transaction payment".split()),
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
            _MONEY_ELSEWHERE | {"refunded", "refund", "captured", "paid"},
        ),
        FieldSpec(
            "currency",
            "currency",
            False,
            "the ISO 4217 code of the order's currency",
            {**_CURRENCY_ALIASES, "order currency": 1.0, "order currency code": 1.0},
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
                **_STATUS_ALIASES,
                "zahlungsstatus": 0.9,
                "betaalstatus": 0.9,
                "stato pagamento": 0.9,
                "status pagamento": 0.9,
                "estado pago": 0.9,
            },
            frozenset({"fulfillment", "shipping", "delivery"}),
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
            True,
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
            _ORDER_WORDS
            | frozenset(
                "customer card invoice transfer dispute balance source intent paymentintent "
                "merchant refund kunde client cliente klant".split()
            ),
        ),
        FieldSpec(
            "order_id",
            "reference",
            True,
            "the order(s) the payment is for",
            {
                **_ORDER_ID_ALIASES,
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
            _MONEY_ELSEWHERE | {"refunded", "refund", "authorized", "requested", "debit"},
        ),
        FieldSpec(
            "currency",
            "currency",
            False,
            "the ISO 4217 code of the payment's currency",
            {**_CURRENCY_ALIASES, "payment currency": 1.0, "gross currency": 0.95},
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
                **_STATUS_ALIASES,
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
            },
            frozenset({"converted", "fee"}),
        ),
    ),
}


def spec(role: Role, name: str) -> FieldSpec:
    """The field `name` of `role`; raises KeyError for a field the role does not have."""
    for item in SCHEMA[role]:
        if item.name == name:
            return item
    raise KeyError(f"{role.value} has no field {name}")


class AmountReading(BaseModel):
    """How an amount column is written: separators and whether it is in major or minor units."""

    model_config = ConfigDict(frozen=True)

    decimal: Literal[".", ","] = "."
    thousands: Literal["", ",", ".", "'", " "] = ""
    unit: Literal["major", "minor"] = "major"


class TimestampReading(BaseModel):
    """How a timestamp column is written: a strptime pattern and the zone of naive values.

    `zone_column` names a column that gives each row's zone (then `timezone` is only for rows
    where it is empty); `time_column` a column holding the time of day when the mapped column
    holds only the date (`pattern` then reads "DATE TIME", the two cells joined by a space).
    """

    model_config = ConfigDict(frozen=True)

    pattern: str
    timezone: str | None = None
    zone_column: str | None = None
    time_column: str | None = None


class IdReading(BaseModel):
    """How to read the ids that join the files (orders.order_id, payments.order_id).

    Applied in this order: `pattern` (a regular expression with exactly one capture group: the
    id is what it captures, every match is one id, e.g. `#(\\d+)` in "Order #1042 - 2 items"),
    then the usual leading `#` and spaces, then `prefix` and `suffix` (removed where present,
    e.g. `WC-`), then leading zeros when `strip_zeros`.
    """

    model_config = ConfigDict(frozen=True)

    pattern: str | None = None
    prefix: str = ""
    suffix: str = ""
    strip_zeros: bool = False

    @field_validator("pattern")
    @classmethod
    def _one_group(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            groups = re.compile(value).groups
        except re.error as error:
            raise ValueError(
                f"the pattern {value!r} is not a regular expression ({error})"
            ) from None
        if groups != 1:
            raise ValueError(
                f"the pattern {value!r} must have exactly one capture group (…); it has {groups}"
            )
        return value

    @property
    def is_plain(self) -> bool:
        """True when ids are read as they are written (only `#` and spaces removed)."""
        return self == IdReading()


# Reading options a person can set by name in an edit (`payments.id_pattern=#(\d+)`), with what
# each one does, for help texts and error messages.
ID_OPTIONS: dict[str, str] = {
    "id_pattern": "a regular expression with one capture group; the id is what it captures",
    "id_prefix": "text removed from the start of each id where present (e.g. WC-)",
    "id_suffix": "text removed from the end of each id where present",
    "id_strip_zeros": "yes to remove leading zeros from each id (00042 -> 42)",
}


def kind_word(value: str) -> str:
    """A row-kind value as the engine compares it: trimmed, lower case, spaces as underscores.

    The same reading as a status column (`replace(lower(x), ' ', '_')`), so a value typed in
    an edit (`Payment Refund`) names the cells written that way in any case. Values are
    compared whole, never in part: `MerchantPayout` is `merchantpayout`.
    """
    return value.strip().lower().replace(" ", "_")


class RowKinds(BaseModel):
    """Which values of a status or type column mark captures, refunds, or rows to ignore.

    `column` is the column read for the kind (None: the mapped `payment_status` column). A row
    whose kind value is in `ignore` (or whose status is, where the kind comes from another
    column) is ignored; in `refund`, it is a refund of the capture or order it names; in
    `capture`, a capture. Any other value is an unknown row kind: reported, never dropped.
    Values are stored as `kind_word` reads them, sorted, so the digest does not depend on the
    order or the case they were typed in.
    """

    model_config = ConfigDict(frozen=True)

    column: str | None = None
    capture: tuple[str, ...] = ()
    refund: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @field_validator("capture", "refund", "ignore", mode="before")
    @classmethod
    def _words(cls, value: object) -> tuple[str, ...]:
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list | tuple):
            raise ValueError(f"must be a list of values (got {value!r})")
        return tuple(sorted({kind_word(str(v)) for v in value if str(v).strip()}))

    @model_validator(mode="after")
    def _disjoint(self) -> RowKinds:
        lists = {"capture": self.capture, "refund": self.refund, "ignore": self.ignore}
        seen: dict[str, str] = {}
        for name, words in lists.items():
            for word in words:
                if word in seen:
                    raise ValueError(
                        f'"{word}" is in kinds_{seen[word]} and kinds_{name}; a value can be '
                        "only one kind"
                    )
                seen[word] = name
        if not self.capture:
            raise ValueError("kinds_capture is empty: name at least one value that is a capture")
        return self

    def kind_of(self, value: str) -> str | None:
        """`capture`, `refund`, `ignore`, or None for a value in no list."""
        word = kind_word(value)
        for name in ("ignore", "refund", "capture"):
            if word in getattr(self, name):
                return name
        return None


KIND_OPTIONS: dict[str, str] = {
    "kinds_column": (
        "the column whose values say what each payment row is (default: the payment status "
        "column), e.g. Type"
    ),
    "kinds_capture": "comma-separated values of that column that are captures, e.g. Settled, Sale",
    "kinds_refund": (
        "comma-separated values that are refunds of an earlier capture (matched by payment id "
        "or order reference), e.g. Refunded, Credit"
    ),
    "kinds_ignore": (
        "comma-separated values of rows that are neither captures nor refunds (fees, payouts, "
        "pending memos), e.g. Fee, MerchantPayout"
    ),
}


# The amount fields of both roles: each can be given its own separators and unit.
_AMOUNT_FIELDS = ("order_amount", "captured_amount", "refunded_amount")

AMOUNT_OPTIONS: dict[str, str] = {
    "decimal": "the decimal mark of the file's amounts: . or , (decimal=, reads 1.234,50)",
    "thousands": (
        "the thousands separator of the file's amounts: none, comma, dot, apostrophe or space"
    ),
    "unit": "major (12.50) or minor (1250, in cents) for the file's amounts",
    **{
        f"{name}_{part}": f"the {part} of {name} only (as {part} above)"
        for name in _AMOUNT_FIELDS
        for part in ("decimal", "thousands", "unit")
    },
}

# A file has one timestamp field (orders: order_date, payments: captured_at): these read it.
TIME_OPTIONS: dict[str, str] = {
    "date_order": "the order of day, month and year in the file's dates: DMY, MDY or YMD",
    "timestamp_pattern": "the exact pattern of the file's timestamps, e.g. %d.%m.%Y %H:%M",
    "timezone": "the IANA time zone of timestamps written without one, e.g. Europe/Berlin",
    "timezone_column": (
        "a column giving each row's time zone (an IANA name, an offset such as +02:00, or an "
        "abbreviation such as CET or PDT)"
    ),
    "time_column": "a column holding the time of day when the timestamp column holds the date",
}

# Which file plays which role: answered on either role (`orders.orders_file=shop.csv`).
ROLE_OPTIONS: dict[str, str] = {
    "orders_file": "the name of the file that is the orders export (the other holds payments)",
}

# Every reading option a person can set by name in an edit (`ROLE.OPTION=VALUE`), beside the
# canonical fields (`ROLE.FIELD=COLUMN`); the edit parsers and the guard accept exactly these.
READING_OPTIONS: dict[str, str] = {
    **ID_OPTIONS,
    **KIND_OPTIONS,
    **AMOUNT_OPTIONS,
    **TIME_OPTIONS,
    **ROLE_OPTIONS,
}


class ReadingOptions(BaseModel):
    """Everything about reading one file that changes the results."""

    model_config = ConfigDict(frozen=True)

    encoding: str = "utf-8"
    delimiter: str = ","
    header_row: int = 1
    default_currency: str | None = None
    amounts: dict[str, AmountReading] = {}
    timestamps: dict[str, TimestampReading] = {}
    ids: IdReading | None = None
    kinds: RowKinds | None = None


# Options added after the first approvals: left out of `Mapping.canonical()` while unset.
_LATER_OPTIONS = ("ids", "kinds")
_LATER_TIMESTAMP_OPTIONS = ("zone_column", "time_column")


class DatasetMapping(BaseModel):
    """One file's mapping: canonical field -> source column, and its reading options."""

    model_config = ConfigDict(frozen=True)

    columns: dict[str, str]
    options: ReadingOptions


class Mapping(BaseModel):
    """The interpretation of both files that a person approves before anything is reconciled."""

    model_config = ConfigDict(frozen=True)

    orders: DatasetMapping
    payments: DatasetMapping

    def for_role(self, role: Role) -> DatasetMapping:
        """The dataset mapping of `role`."""
        return self.orders if role is Role.ORDERS else self.payments

    def canonical(self) -> dict[str, Any]:
        """A JSON-ready form with sorted keys and no floats: the input of the mapping digest.

        Options added later (`ids`, `kinds`) appear only when set, so the digest of a mapping
        that does not use them is what it was before they existed.
        """
        data = self.model_dump(mode="json")
        for role in ("orders", "payments"):
            for name in _LATER_OPTIONS:
                if data[role]["options"].get(name) is None:
                    data[role]["options"].pop(name, None)
            for reading in data[role]["options"]["timestamps"].values():
                for name in _LATER_TIMESTAMP_OPTIONS:
                    if reading.get(name) is None:
                        reading.pop(name, None)
        return data
