"""Number and timestamp formats, and ids: decided per column, exact, the same in Python and SQL."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import duckdb
import pytest

from agent.data.formats import NumberFormat, detect_number_format, parse_number, sql_amount
from agent.data.keys import read_key
from agent.data.normalize.expressions import key_sql
from agent.data.profile import normalize_key
from agent.data.schema import IdReading
from agent.data.timestamp_formats import TimestampFormat, detect_timestamp_format, sql_timestamp

CASES = [
    (["1,250.00", "12.00"], NumberFormat(".", ","), "1250.00"),
    (["1.234,56", "12,00"], NumberFormat(",", "."), "1234.56"),
    (["0,25", "3,10"], NumberFormat(",", ""), "0.25"),
    (["1'000.00", "12.50"], NumberFormat(".", "'"), "1000.00"),
    (["-12.50", "3.00"], NumberFormat(".", ""), "-12.50"),
    (["(12.50)", "3.00"], NumberFormat(".", ""), "-12.50"),
    (["$1,250.00", "$3.00"], NumberFormat(".", ","), "1250.00"),
    (["€1.234,56", "€3,00"], NumberFormat(",", "."), "1234.56"),
    (["EUR 12,00", "EUR 1,50"], NumberFormat(",", ""), "12.00"),
    (["12.00 USD", "1.50 USD"], NumberFormat(".", ""), "12.00"),
    (["1 250,00", "3,50"], NumberFormat(",", " "), "1250.00"),
]


@pytest.mark.parametrize(("values", "expected_format", "first"), CASES)
def test_number_format_is_decided_per_column_and_read_exactly(
    values: list[str], expected_format: NumberFormat, first: str
) -> None:
    fmt, share = detect_number_format(values)
    assert fmt is not None
    assert parse_number(values[0], fmt) == Decimal(first)
    assert share == 1.0
    if expected_format.thousands != " ":
        assert fmt == expected_format


@pytest.mark.parametrize(("values", "expected_format", "first"), CASES)
def test_sql_reading_agrees_with_python_reading(
    values: list[str], expected_format: NumberFormat, first: str
) -> None:
    fmt, _ = detect_number_format(values)
    assert fmt is not None
    con = duckdb.connect()
    for value in values:
        row = con.execute(f"SELECT {sql_amount('x', fmt)} FROM (SELECT ? AS x)", [value]).fetchone()
        assert row is not None
        assert row[0] == parse_number(value, fmt)


def test_ambiguous_values_are_decided_by_the_rest_of_the_column() -> None:
    fmt, _ = detect_number_format(["1,250", "0,75", "12,5"])
    assert fmt == NumberFormat(",", "")
    fmt, _ = detect_number_format(["1,250", "2,500.10"])
    assert fmt == NumberFormat(".", ",")


def test_a_semicolon_file_prefers_the_decimal_comma_on_a_tie() -> None:
    fmt, _ = detect_number_format(["1,250", "2,500"], prefer_decimal_comma=True)
    assert fmt is not None and fmt.decimal == ","


def test_a_value_in_another_format_is_unreadable_not_reguessed() -> None:
    fmt = NumberFormat(".", ",")
    assert parse_number("12,50", fmt) is None
    con = duckdb.connect()
    row = con.execute(f"SELECT {sql_amount('x', fmt)} FROM (SELECT '12,50' AS x)").fetchone()
    assert row == (None,)


def test_timestamps_with_offsets_are_read_in_utc() -> None:
    pattern, share, guessed = detect_timestamp_format(["2025-10-07 09:50:26 +0200"])
    assert pattern == "%Y-%m-%d %H:%M:%S %z" and share == 1.0 and not guessed
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    sql = sql_timestamp("x", TimestampFormat(pattern))
    row = con.execute(f"SELECT {sql} FROM (SELECT '2025-10-07 09:50:26 +0200' AS x)").fetchone()
    assert row is not None
    assert row[0].astimezone(UTC) == datetime(2025, 10, 7, 7, 50, 26, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "utc_hour"), [("Europe/Berlin", 7), ("America/New_York", 13), ("UTC", 9)]
)
def test_naive_timestamps_take_the_file_zone(zone: str, utc_hour: int) -> None:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    sql = sql_timestamp("x", TimestampFormat("%Y-%m-%d %H:%M:%S", zone))
    row = con.execute(f"SELECT epoch_us({sql}) FROM (SELECT '2025-10-07 09:50:26' AS x)").fetchone()
    assert row is not None
    expected = datetime(2025, 10, 7, utc_hour, 50, 26, tzinfo=UTC)
    assert row[0] == int(expected.timestamp()) * 1_000_000


def test_day_first_and_month_first_are_decided_per_file() -> None:
    day_first, _, guessed = detect_timestamp_format(["25/10/2025 10:00", "03/11/2025 09:00"])
    assert day_first == "%d/%m/%Y %H:%M" and not guessed
    month_first, _, guessed = detect_timestamp_format(["10/25/2025 10:00", "11/03/2025 09:00"])
    assert month_first == "%m/%d/%Y %H:%M" and not guessed
    _, _, guessed = detect_timestamp_format(["03/11/2025 09:00", "04/10/2025 09:00"])
    assert guessed


def test_zulu_timestamps_are_utc() -> None:
    pattern, _, _ = detect_timestamp_format(["2025-10-07T09:50:26Z"])
    assert pattern is not None and TimestampFormat(pattern).zoned


# An id as the engine compares it: `key_sql` in SQL, `normalize_key` in Python (inference).
# Padding and a leading `#` go; case, inner characters and a second `#` stay; empty is none.
ID_VALUES = [
    "1001",
    " 1001 ",
    "#1001",
    " # 1001",
    "##1001",
    "#10#07",
    "AB-7",
    "ab-7 ",
    "#",
    "   ",
    "",
    "1001 #",
    "é #1",
    # Only spaces are padding, in both readings: an id padded otherwise stays as written.
    "\t1001",
    "1001\u00a0",
    "# \t1001",
    "\r1001\n",
]


@pytest.mark.parametrize("value", ID_VALUES)
def test_sql_id_reading_agrees_with_python_reading(value: str) -> None:
    row = duckdb.execute(f"SELECT {key_sql('x')} FROM (SELECT ? AS x)", [value]).fetchone()
    assert row is not None
    assert row[0] == (normalize_key(value) or None)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("WC-1001", "1001"),
        (" #WC-1001-X ", "1001"),
        ("1001-X", "1001"),
        ("wc-1001", "wc-1001"),  # another case is another text
        ("WC-", None),
        ("WC-0042-X", "42"),
        ("WC-000-X", "0"),
    ],
)
def test_sql_id_reading_removes_the_approved_prefix_and_suffix(
    value: str, expected: str | None
) -> None:
    reading = IdReading(prefix="WC-", suffix="-X", strip_zeros=True)
    row = duckdb.execute(f"SELECT {key_sql('x', reading)} FROM (SELECT ? AS x)", [value]).fetchone()
    assert row is not None
    assert row[0] == expected
    assert (read_key(value, reading) or None) == expected  # the Python twin (inference) agrees


@pytest.mark.parametrize("value", ["ABC12.00", "12.00 XYZ", "1.5E+3", "1e3", "1_000"])
def test_letters_exponents_and_digit_groups_do_not_read_as_amounts(value: str) -> None:
    fmt = NumberFormat(".", "")
    assert parse_number(value, fmt) is None
    con = duckdb.connect()
    row = con.execute(f"SELECT {sql_amount('x', fmt)} FROM (SELECT ? AS x)", [value]).fetchone()
    assert row == (None,)


@pytest.mark.parametrize(
    ("value", "currency", "read"),
    [
        ("€50.00", "EUR", "50.00"),
        ("€50.00", "USD", None),  # the cell names another currency than its row's
        ("50.00 GBP", "USD", None),
        ("usd 50.00", "USD", "50.00"),
        ("$50.00", "CAD", "50.00"),  # `$` names several currencies: the row's decides
        ("50.00", "USD", "50.00"),
        ("€50.00", None, "50.00"),  # no currency in the row: nothing to disagree with
    ],
)
def test_an_amount_naming_another_currency_than_its_row_does_not_read(
    value: str, currency: str | None, read: str | None
) -> None:
    con = duckdb.connect()
    expression = sql_amount("x", NumberFormat(".", ""), "c")
    row = con.execute(f"SELECT {expression} FROM (SELECT ? AS x, ? AS c)", [value, currency])
    assert row.fetchone() == (None if read is None else Decimal(read),)
