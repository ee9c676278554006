"""The reconciliation policy: tolerances, windows and status words, versioned and explained.

A policy is part of what a person approves (its version enters the authorization identity), so
every rule the engine applies lives here with a plain-words explanation that the agent can quote.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

CATEGORY_ORDER = (
    "multi_order_payment",
    "capture_without_order",
    "duplicate_payment_row",
    "order_without_capture",
    "currency_mismatch",
    "status_mismatch",
    "duplicate_capture",
    "amount_mismatch",
    "partial_capture",
    "over_capture",
    "capture_outside_window",
)


class Policy(BaseModel):
    """The rules of one reconciliation. Change a rule, change `version`."""

    model_config = ConfigDict(frozen=True)

    version: str = "2026-11-30.1"
    amount_tolerance_minor: int = 1
    window_days_after: int = 30
    window_hours_before: int = 24
    failed_payment_statuses: tuple[str, ...] = (
        "failed",
        "declined",
        "canceled",
        "cancelled",
        "blocked",
        "error",
        "expired",
        "requires_payment_method",
        "incomplete",
        "uncaptured",
    )
    refunded_payment_statuses: tuple[str, ...] = ("refunded", "partially_refunded", "reversed")
    voided_order_statuses: tuple[str, ...] = ("voided", "void", "cancelled", "canceled")
    refunded_order_statuses: tuple[str, ...] = ("refunded",)
    paid_order_statuses: tuple[str, ...] = ("paid", "captured", "completed", "complete")

    def explain(self, category: str) -> str:
        """The rule behind `category` in plain words, with this policy's numbers."""
        return self.explanations()[category]

    def explanations(self) -> dict[str, str]:
        """Every category's rule in plain words, in the order the engine applies them."""
        tol = self.amount_tolerance_minor
        return {
            "multi_order_payment": (
                "One payment's order reference names two or more orders. The orders it names are "
                "reviewed together with that payment and are not reported again on their own."
            ),
            "capture_without_order": (
                "A successful payment whose order reference is empty or names no order in the "
                "orders file."
            ),
            "duplicate_payment_row": (
                "The same payment id appears on more than one row of the payments file (a "
                "repeated webhook or export row). It is counted once when matching."
            ),
            "order_without_capture": (
                "An order with no successful payment referencing it. Voided or cancelled orders "
                "without a payment are expected and not reported."
            ),
            "currency_mismatch": (
                "A payment for the order is in a different currency than the order."
            ),
            "status_mismatch": (
                "The order and its payments disagree about money kept: the order is voided or "
                "cancelled (or fully refunded) while its capture was not refunded, or every "
                "capture was refunded while the order still counts as paid."
            ),
            "duplicate_capture": (
                "Two or more captures for one order where a single one of them already covers "
                "the order total: the customer was charged more than once."
            ),
            "amount_mismatch": (
                f"The order's single capture differs from the order total by more than {tol} "
                "minor unit(s) of the currency."
            ),
            "partial_capture": (
                f"The order's captures add up to less than the order total (by more than {tol} "
                "minor unit(s))."
            ),
            "over_capture": (
                f"The order's captures add up to more than the order total (by more than {tol} "
                "minor unit(s)) and no single capture covers the total alone."
            ),
            "capture_outside_window": (
                f"A capture happened more than {self.window_days_after} days after the order or "
                f"more than {self.window_hours_before} hours before it; amounts agree."
            ),
            "legitimate": (
                f"Not findings: several captures that add up to the order total; differences "
                f"of at most {tol} minor unit(s); failed payment attempts (status "
                f"{', '.join(self.failed_payment_statuses[:4])}, …), which are ignored; normal "
                "refunds, where the order and the payment both say refunded; and voided orders "
                "without a payment. Each unit (an order or a payment) gets at most one category, "
                "the first that applies in the order listed here."
            ),
        }
