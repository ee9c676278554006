"""The mapping a person approves: per role, which column feeds which field, and how to read it.

It is an immutable value whose canonical form (`Mapping.canonical()`) has no floats and feeds
the mapping digest.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from agent.data.schema.readings import ReadingOptions
from agent.data.schema.roles import Role

# Options added after the first approvals: left out of `Mapping.canonical()` while unset.
_LATER_OPTIONS = ("ids", "kinds", "statuses")
_LATER_TIMESTAMP_OPTIONS = ("zone_column", "time_column")
_LATER_ID_OPTIONS = ("ignore_case", "whole", "excel_numbers")


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
            kinds = data[role]["options"].get("kinds")
            if kinds is not None and not kinds.get("refunded"):
                kinds.pop("refunded", None)
            ids = data[role]["options"].get("ids")
            for name in _LATER_ID_OPTIONS if ids is not None else ():
                if not ids.get(name):
                    ids.pop(name, None)
            for reading in data[role]["options"]["timestamps"].values():
                for name in _LATER_TIMESTAMP_OPTIONS:
                    if reading.get(name) is None:
                        reading.pop(name, None)
        return data
