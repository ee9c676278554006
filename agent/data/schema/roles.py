"""The two parts a file can play in a reconciliation: the orders export or the payments one.

Every other part of the schema (fields, reading options, the mapping) is keyed by role.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """The part a file plays in a reconciliation."""

    ORDERS = "orders"
    PAYMENTS = "payments"

    @property
    def other(self) -> Role:
        """The role of the other file."""
        return Role.PAYMENTS if self is Role.ORDERS else Role.ORDERS
