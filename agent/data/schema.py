"""The canonical schema and the mapping that reads a file into it.

A mapping says, per role, which source column feeds which canonical field and how to read the
values (the reading options). It is what a person approves, so it is an immutable value whose
canonical form (`canonical()`) has no floats and feeds the mapping digest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


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


_MONEY_ELSEWHERE = frozenset(
    "fee fees tax taxes shipping discount subtotal converted net outstanding lineitem "
    "disputed tip duties balance price unit".split()
)

SCHEMA: dict[Role, tuple[FieldSpec, ...]] = {
    Role.ORDERS: (
        FieldSpec(
            "order_id",
            "id",
            True,
            "the order's own id, as payments refer to it",
            {
                "order id": 1.0,
                "order number": 0.95,
                "order no": 0.95,
                "order": 0.8,
                "order name": 0.9,
                "order ref": 0.85,
                "order reference": 0.85,
                "name": 0.55,
                "number": 0.55,
                "id": 0.55,
                "reference": 0.5,
            },
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
            },
            _MONEY_ELSEWHERE | {"refunded", "refund", "captured", "paid"},
        ),
        FieldSpec(
            "currency",
            "currency",
            False,
            "the ISO 4217 code of the order's currency",
            {"currency": 1.0, "currency code": 1.0, "order currency": 1.0, "ccy": 0.9},
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
                "status": 0.8,
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
                "customer name": 0.95,
                "billing name": 0.8,
                "billing email": 0.9,
                "customer id": 0.8,
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
            },
            frozenset(
                "customer card invoice transfer order dispute balance source "
                "intent paymentintent merchant".split()
            ),
        ),
        FieldSpec(
            "order_id",
            "reference",
            True,
            "the order(s) the payment is for",
            {
                "order id": 1.0,
                "order id metadata": 1.0,
                "order number": 0.95,
                "order reference": 0.95,
                "order ref": 0.95,
                "order": 0.85,
                "merchant reference": 0.85,
                "reference": 0.7,
                "order name": 0.9,
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
                "charge amount": 0.95,
                "payment amount": 0.95,
                "total": 0.6,
            },
            _MONEY_ELSEWHERE | {"refunded", "refund", "authorized", "requested"},
        ),
        FieldSpec(
            "currency",
            "currency",
            False,
            "the ISO 4217 code of the payment's currency",
            {"currency": 1.0, "currency code": 1.0, "payment currency": 1.0, "ccy": 0.9},
            frozenset({"converted", "settlement", "presentment"}),
        ),
        FieldSpec(
            "captured_at",
            "timestamp",
            False,
            "when the payment was captured",
            {
                "captured at": 1.0,
                "created utc": 0.9,
                "created date utc": 0.9,
                "created": 0.85,
                "created at": 0.85,
                "date": 0.7,
                "payment date": 0.95,
                "transaction date": 0.9,
            },
            frozenset({"available", "refunded", "dispute", "updated"}),
        ),
        FieldSpec(
            "payment_status",
            "status",
            False,
            "the payment's state (paid, failed, refunded, …)",
            {"status": 0.9, "payment status": 1.0, "transaction status": 1.0},
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
    """How a timestamp column is written: a strptime pattern and the zone of naive values."""

    model_config = ConfigDict(frozen=True)

    pattern: str
    timezone: str | None = None


class ReadingOptions(BaseModel):
    """Everything about reading one file that changes the results."""

    model_config = ConfigDict(frozen=True)

    encoding: str = "utf-8"
    delimiter: str = ","
    header_row: int = 1
    default_currency: str | None = None
    amounts: dict[str, AmountReading] = {}
    timestamps: dict[str, TimestampReading] = {}


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
        """A JSON-ready form with sorted keys and no floats: the input of the mapping digest."""
        return self.model_dump(mode="json")
