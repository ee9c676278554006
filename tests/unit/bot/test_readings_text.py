"""What a person approves about reading a file says every option that changes the results."""

from __future__ import annotations

from agent.data.schema import DatasetMapping, ReadingOptions, TimestampReading
from bot.readings import describe_reading


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
