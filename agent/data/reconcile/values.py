"""The values a reconciliation gives back: findings with their evidence, and the summary."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from agent.data.ledger import FileLedger
from agent.data.policy import CATEGORY_ORDER

# Rows that cannot be read as approved come first: until they are fixed, the rest is partial.
FINDING_CATEGORIES = CATEGORY_ORDER


class Evidence(BaseModel):
    """Where a finding is seen: a file, its 1-based data rows and the ids on them."""

    model_config = ConfigDict(frozen=True)

    file: str
    rows: list[int]
    ids: list[str]


class Finding(BaseModel):
    """One exception: its category, the amounts expected and found, and the evidence."""

    model_config = ConfigDict(frozen=True)

    category: str
    reason: str | None = None
    order_ids: list[str]
    payment_ids: list[str]
    currency: str | None
    expected: str | None
    actual: str | None
    evidence: list[Evidence]


class CategoryTotal(BaseModel):
    """How many findings of one category, and the money they concern per currency."""

    model_config = ConfigDict(frozen=True)

    category: str
    count: int
    difference_by_currency: dict[str, str]


class CurrencyTotals(BaseModel):
    """Totals of one currency: all orders, all captures, and those that matched cleanly."""

    model_config = ConfigDict(frozen=True)

    currency: str
    orders: int
    order_total: str
    captures: int
    captured_total: str
    matched_orders: int
    matched_total: str


class Summary(BaseModel):
    """The outcome of a reconciliation in numbers."""

    model_config = ConfigDict(frozen=True)

    policy_version: str
    orders: int
    order_rows: int
    payments: int
    payment_rows: int
    failed_attempts: int
    unreadable_orders: list[int]
    unreadable_payments: list[int]
    counts: dict[str, int]
    categories: list[CategoryTotal]
    currencies: list[CurrencyTotals]
    ledger: list[FileLedger]

    @property
    def total_findings(self) -> int:
        """All findings, every category."""
        return sum(self.counts.values())
