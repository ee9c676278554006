"""How the values of one file are read: amounts, timestamps, join ids and row kinds.

Each reading is an immutable pydantic value; `ReadingOptions` gathers them with the file's
encoding, delimiter and header row, i.e. everything about reading one file that changes the
results.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


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
    or `whole` (a reference is one id even where it holds separators, `ZAM/2025/10/001`; else
    it is split at them into the ids it lists), then the usual leading `#` and spaces, then
    `excel_numbers` (`1042.0` and `1.042E+3`, ids a spreadsheet rewrote, read as `1042`), then
    `ignore_case` (ids compared in lower case), then `prefix` and `suffix` (removed where
    present, e.g. `WC-`), then leading zeros when `strip_zeros`.
    """

    model_config = ConfigDict(frozen=True)

    pattern: str | None = None
    prefix: str = ""
    suffix: str = ""
    strip_zeros: bool = False
    ignore_case: bool = False
    whole: bool = False
    excel_numbers: bool = False

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


def kind_word(value: str) -> str:
    """A row-kind value as the engine compares it: trimmed, lower case, spaces as underscores.

    The same reading as a status column (`columns.sql_word`), so a value typed in
    an edit (`Payment Refund`) names the cells written that way in any case. Values are
    compared whole, never in part: `MerchantPayout` is `merchantpayout`.
    """
    return value.strip().lower().replace(" ", "_")


def value_list(value: object) -> tuple[str, ...]:
    """A list of values (or comma-separated text) as `kind_word` reads them, sorted, once each:
    the digest does not depend on their order or the case they were typed in."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple):
        raise ValueError(f"must be a list of values (got {value!r})")
    return tuple(sorted({kind_word(str(v)) for v in value if str(v).strip()}))


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
    refunded: tuple[str, ...] = ()
    """Values that say a capture was refunded in full (`Rimborsato` on a capture row of its
    own, not a refund row), in the kind column (then also in `capture`) or in the status
    column beside it: the engine counts the capture's money as returned. Left out of the
    digest while empty."""

    @field_validator("capture", "refund", "ignore", "refunded", mode="before")
    @classmethod
    def _words(cls, value: object) -> tuple[str, ...]:
        return value_list(value)

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
        stray = [w for w in self.refunded if w in (*self.refund, *self.ignore)]
        if stray:
            raise ValueError(
                f'"{stray[0]}" is in kinds_refunded and kinds_{seen[stray[0]]}; a refunded '
                "capture is a capture whose money went back"
            )
        return self

    def kind_of(self, value: str) -> str | None:
        """`capture`, `refund`, `ignore`, or None for a value in no list."""
        word = kind_word(value)
        for name in ("ignore", "refund", "capture"):
            if word in getattr(self, name):
                return name
        return None


ORDER_STATUS_LISTS = ("paid", "pending", "voided", "refunded", "partially_refunded")
"""The meanings an order status value can have (`agent.data.vocabulary.OrderMeaning`)."""


class OrderStatuses(BaseModel):
    """What each value of the order status column means, one list per meaning.

    Every value of the column is in exactly one list once the mapping validates: a value in
    none stops the approval with a question (`validation`). `paid` orders are expected to be
    captured; `pending` ones too (nothing is excused), `voided` ones not (a capture kept is a
    finding); `refunded` and `partially_refunded` ones expect their refunds. Values are stored
    as `kind_word` reads them, sorted, so the digest does not depend on their order or case.
    """

    model_config = ConfigDict(frozen=True)

    paid: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    voided: tuple[str, ...] = ()
    refunded: tuple[str, ...] = ()
    partially_refunded: tuple[str, ...] = ()

    @field_validator(*ORDER_STATUS_LISTS, mode="before")
    @classmethod
    def _words(cls, value: object) -> tuple[str, ...]:
        return value_list(value)

    @model_validator(mode="after")
    def _disjoint(self) -> OrderStatuses:
        seen: dict[str, str] = {}
        for name in ORDER_STATUS_LISTS:
            for word in getattr(self, name):
                if word in seen:
                    raise ValueError(
                        f'"{word}" is in statuses_{seen[word]} and statuses_{name}; a status can '
                        "mean only one thing"
                    )
                seen[word] = name
        return self

    def meaning_of(self, value: str) -> str | None:
        """The meaning of an order status value, or None for a value in no list."""
        word = kind_word(value)
        return next((name for name in ORDER_STATUS_LISTS if word in getattr(self, name)), None)

    def values(self) -> dict[str, str]:
        """Every listed value -> its meaning."""
        return {word: name for name in ORDER_STATUS_LISTS for word in getattr(self, name)}


class ReadingOptions(BaseModel):
    """Everything about reading one file that changes the results."""

    model_config = ConfigDict(frozen=True)

    encoding: str = "utf-8"
    delimiter: str = ","
    header_row: int = Field(default=1, ge=1)
    default_currency: str | None = None
    amounts: dict[str, AmountReading] = {}
    timestamps: dict[str, TimestampReading] = {}
    ids: IdReading | None = None
    kinds: RowKinds | None = None
    statuses: OrderStatuses | None = None

    def unit_of(self, field: str) -> Literal["major", "minor"]:
        """The approved unit of amount `field`: its own reading's, else (a refund) the captured
        amount's, else major. The engine converts and the validation checks by this one answer."""
        reading = self.amounts.get(field)
        if reading is None and field == "refunded_amount":
            reading = self.amounts.get("captured_amount")
        return reading.unit if reading is not None else "major"
