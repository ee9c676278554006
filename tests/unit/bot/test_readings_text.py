"""What a person approves about reading a file says every option that changes the results."""

from __future__ import annotations

from agent.data.schema import (
    DatasetMapping,
    OrderStatuses,
    ReadingOptions,
    RowKinds,
    TimestampReading,
)
from bot.presentation.readings import describe_reading


def test_a_zone_column_and_a_time_column_are_said_not_only_the_default_zone() -> None:
    stamp = TimestampReading(
        pattern="%m/%d/%Y %H:%M:%S", timezone="UTC", zone_column="TimeZone", time_column="Time"
    )
    mapping = DatasetMapping(
        columns={"captured_at": "Date"},
        options=ReadingOptions(timestamps={"captured_at": stamp}),
    )
    text = describe_reading(mapping)
    assert (
        "captured_at: %m/%d/%Y %H:%M:%S, the time of day from column 'Time', each row in the "
        "zone its column 'TimeZone' gives (else UTC)"
    ) in text
    assert " in UTC" not in text


def test_every_status_and_kind_value_is_said_with_its_meaning() -> None:
    # What the approver sees names every value the mapping gives a meaning, none left out.
    statuses = OrderStatuses(
        paid=[f"paid_{i}" for i in range(30)], voided=["annulée"], refunded=["closed"]
    )
    kinds = RowKinds(
        column="Typ", capture=["zahlung", "erstattet"], refund=["rückzahlung"], ignore=["fee"],
        refunded=["erstattet"],
    )  # fmt: skip
    orders = DatasetMapping(columns={}, options=ReadingOptions(statuses=statuses))
    payments = DatasetMapping(columns={}, options=ReadingOptions(kinds=kinds))
    said = describe_reading(orders)
    assert all(f"paid_{i}" in said for i in range(30))
    assert "voided = annulée" in said and "refunded = closed" in said
    assert describe_reading(payments).endswith(
        "row kinds from column 'Typ': captures = erstattet, zahlung; refunds = rückzahlung; "
        "ignored = fee; captures refunded in full = erstattet"
    )
