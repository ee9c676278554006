"""Times whose zone the export gives are read in that zone, proposed without a question (issue 36).

Four forms: a zone column beside the time (PayPal's activity download: `Date`, `Time`,
`TimeZone`; Square's `Date`, `Time`, `Time Zone`; Adyen's `Creation Date`, `TimeZone`), a zone
written after each time (`3/8/2026 1:59:59 AM MST`, `2026-03-29 01:30:00 CET`,
`2026-03-08 10:00 America/New_York`), a date, a time and a zone in three columns, and an IANA,
Windows or Rails zone column beside one timestamp column.

Each test writes a Shopify orders export (`Created at` with its offset, New York time) and a
payments export whose every capture is one hour after its order, written in the payments'
local time, from 2026-02-24 to 2026-04-04: across the US daylight-saving change (2026-03-08)
and the EU one (2026-03-29). Under `STRICT` a capture even a second before its order is outside
the window, so a zone read wrong by hours flags the captures; one capture is 40 days late and
must be flagged. The captures' points in time are compared with the truth one by one, which a
zone read wrong by the one hour of a daylight-saving change fails.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import pytest

from agent.data.ingest import inspect_csv
from agent.data.mapping import Proposal, infer_mapping
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Mapping, Role, TimestampReading
from agent.data.time_zones import ZONE_NAMES, zone_of
from agent.data.timestamp_formats import detect_timestamp_format
from agent.data.wording import words_of

LIMIT = 1 << 30
STRICT = Policy(window_hours_before=0)
NEW_YORK = ZoneInfo("America/New_York")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")
DENVER = ZoneInfo("America/Denver")
BERLIN = ZoneInfo("Europe/Berlin")
# One order a day at varied hours, and two whose captures fall just before a change:
# 01:59:59 MST on 2026-03-08 (Denver) and 01:30:00 CET on 2026-03-29 (Berlin).
ORDERED = [
    *(
        datetime(2026, 2, 24, 15, tzinfo=UTC) + timedelta(days=d, hours=(d * 7) % 24)
        for d in range(40)
    ),
    datetime(2026, 3, 8, 7, 59, 59, tzinfo=UTC),
    datetime(2026, 3, 28, 23, 30, tzinfo=UTC),
]
LATE = 5  # the order whose capture is 40 days late


def _captures(ordered: list[datetime] = ORDERED, late: int = LATE) -> list[datetime]:
    """The true point in time of each order's capture: an hour later, the `late` one 40 days
    later."""
    return [
        at + (timedelta(days=40) if i == late else timedelta(hours=1))
        for i, at in enumerate(ordered)
    ]


def _csv(header: list[str], rows: list[dict[str, str]], quote_all: bool = False) -> str:
    out = io.StringIO()
    if quote_all:  # PayPal quotes every cell
        writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    else:
        writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([row.get(name, "") for name in header] for row in rows)
    return out.getvalue()


SHOPIFY = ["Name", "Email", "Financial Status", "Paid at", "Fulfillment Status", "Currency"]
SHOPIFY += ["Subtotal", "Shipping", "Taxes", "Total", "Discount Code", "Created at", "Id"]


def _shopify(currency: str = "USD", ordered: list[datetime] = ORDERED) -> str:
    """Shopify's orders export, `Created at` in New York time with its offset."""
    rows = []
    for i, at in enumerate(ordered):
        local = at.astimezone(NEW_YORK).strftime("%Y-%m-%d %H:%M:%S %z")
        rows.append(
            {
                "Name": f"#{1001 + i}",
                "Email": f"buyer{i}@example.com",
                "Financial Status": "paid",
                "Paid at": local,
                "Fulfillment Status": "fulfilled",
                "Currency": currency,
                "Subtotal": f"{20 + i}.00",
                "Shipping": "0.00",
                "Taxes": "0.00",
                "Total": f"{20 + i}.00",
                "Created at": local,
                "Id": f"{5100000007000 + i}",
            }
        )
    return _csv(SHOPIFY, rows)


PAYPAL = (
    "Date,Time,TimeZone,Name,Type,Status,Currency,Gross,Fee,Net,From Email Address,"
    "To Email Address,Transaction ID,Shipping Address,Address Status,Item Title,Item ID,"
    "Shipping and Handling Amount,Insurance Amount,Sales Tax,Option 1 Name,Option 1 Value,"
    "Option 2 Name,Option 2 Value,Reference Txn ID,Invoice Number,Custom Number,Quantity,"
    "Receipt ID,Balance,Address Line 1,Address Line 2/District/Neighborhood,Town/City,"
    "State/Province/Region/County/Territory/Prefecture/Republic,Zip/Postal Code,Country,"
    "Contact Phone Number,Subject,Note,Country Code,Balance Impact"
).split(",")


def _paypal(
    zone_text: Callable[[datetime], str] = lambda t: str(t.tzname()),
    captures: list[datetime] | None = None,
) -> str:
    """PayPal's activity download, in Los Angeles time: TimeZone PST, then PDT."""
    rows = []
    for i, at in enumerate(_captures() if captures is None else captures):
        local = at.astimezone(LOS_ANGELES)
        rows.append(
            {
                "Date": local.strftime("%m/%d/%Y"),
                "Time": local.strftime("%H:%M:%S"),
                "TimeZone": zone_text(local),
                "Name": f"Buyer {i}",
                "Type": "Express Checkout Payment",
                "Status": "Completed",
                "Currency": "USD",
                "Gross": f"{20 + i}.00",
                "Fee": "-0.90",
                "Net": f"{19 + i}.10",
                "From Email Address": f"buyer{i}@example.com",
                "To Email Address": "shop@example.com",
                "Transaction ID": f"7PX{i:04d}LKQ88E9N2A",
                "Address Status": "Confirmed",
                "Item Title": "Order",
                "Invoice Number": f"{1001 + i}",
                "Quantity": "1",
                "Balance": f"{500 + i}.00",
                "Country Code": "US",
                "Balance Impact": "Credit",
            }
        )
    return _csv(PAYPAL, rows, quote_all=True)


SQUARE = (
    "Date,Time,Time Zone,Gross Sales,Discounts,Service Charges,Net Sales,Gift Card Sales,Tax,"
    "Tip,Partial Refunds,Total Collected,Source,Card,Card Entry Methods,Cash,Square Gift Card,"
    "Other Tender,Other Tender Type,Other Tender Note,Fees,Net Total,Transaction ID,Payment ID,"
    "Card Brand,PAN Suffix,Device Name,Staff Name,Staff ID,Details,Description,Event Type,"
    "Location,Dining Option,Customer ID,Customer Name,Customer Reference ID,Device Nickname,"
    "Third Party Fees,Deposit ID,Deposit Date,Deposit Details,Fee Percentage Rate,"
    "Fee Fixed Rate,Refund Reason,Discount Name,Transaction Status,Cash App,Order Reference ID,"
    "Fulfillment Note,Free Processing Applied,Channel,Unattributed Tips"
).split(",")


def _square() -> str:
    """Square's transactions CSV, in New York time: Time Zone `Eastern Time (US & Canada)`."""
    rows = []
    for i, at in enumerate(_captures()):
        local = at.astimezone(NEW_YORK)
        money = f"${20 + i}.00"
        rows.append(
            {
                "Date": local.strftime("%m/%d/%Y"),
                "Time": local.strftime("%H:%M:%S"),
                "Time Zone": "Eastern Time (US & Canada)",
                "Gross Sales": money,
                "Discounts": "$0.00",
                "Net Sales": money,
                "Tax": "$0.00",
                "Total Collected": money,
                "Source": "eCommerce Integrations",
                "Card": money,
                "Fees": "-$0.90",
                "Net Total": f"${19 + i}.10",
                "Transaction ID": f"UGmto{i:04d}wyZCmT437yxcU9T",
                "Payment ID": f"qNuHB{i:04d}gDj3reLHzKYkRPVH6M",
                "Card Brand": "Visa",
                "Description": "Online order",
                "Event Type": "Payment",
                "Location": "Shop Online",
                "Customer Name": f"Buyer {i}",
                "Transaction Status": "Complete",
                "Order Reference ID": f"{1001 + i}",
                "Channel": "Shopify",
            }
        )
    return _csv(SQUARE, rows)


ADYEN = (
    "Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,"
    "Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),"
    "Gross Credit (GC),Exchange Rate,Net Currency,Net Debit (NC),Net Credit (NC),"
    "Commission (NC),Markup (NC),Scheme Fees (NC),Interchange (NC),Payment Method Variant,"
    "Modification Merchant Reference,Batch Number"
).split(",")


def _adyen(zone_text: Callable[[datetime], str] = lambda t: str(t.tzname())) -> str:
    """Adyen's settlement details, in Berlin time: TimeZone CET, then CEST."""
    rows = []
    for i, at in enumerate(_captures()):
        local = at.astimezone(BERLIN)
        rows.append(
            {
                "Company Account": "ShopBV",
                "Merchant Account": "ShopECOM",
                "Psp Reference": f"TRRYARZBU{i:04d}TL1P3",
                "Merchant Reference": f"{1001 + i}",
                "Payment Method": "visa",
                "Creation Date": local.strftime("%Y-%m-%d %H:%M:%S"),
                "TimeZone": zone_text(local),
                "Type": "Settled",
                "Modification Reference": f"6J6AZ{i:04d}NWAGN1L",
                "Gross Currency": "EUR",
                "Gross Credit (GC)": f"{20 + i}.00",
                "Exchange Rate": "1",
                "Net Currency": "EUR",
                "Net Credit (NC)": f"{19 + i}.10",
                "Commission (NC)": "0.90",
                "Payment Method Variant": "visacredit",
                "Batch Number": "71",
            }
        )
    return _csv(ADYEN, rows)


PLAIN = ["Transaction ID", "Order Number", "Amount", "Currency", "Status", "Submitted"]


def _plain(when: Callable[[datetime], str], zone: str | None = None) -> str:
    """A payments export whose times say their zone in `when`'s words (and `zone` a column)."""
    header = PLAIN if zone is None else [*PLAIN, "Time Zone"]
    rows = []
    for i, at in enumerate(_captures()):
        row = {
            "Transaction ID": f"txn_{9000 + i}",
            "Order Number": f"{1001 + i}",
            "Amount": f"{20 + i}.00",
            "Currency": "USD",
            "Status": "settled",
            "Submitted": when(at),
        }
        if zone is not None:
            row["Time Zone"] = zone if i % 3 else ["Europe/Berlin", "Berlin"][i % 2]
        rows.append(row)
    return _csv(header, rows)


def _pair(tmp_path: Path, orders: str, payments: str, name: str) -> tuple[Path, Path]:
    first, second = tmp_path / "orders_export.csv", tmp_path / name
    first.write_text(orders, encoding="utf-8")
    second.write_text(payments, encoding="utf-8")
    return first, second


def _propose(
    orders: Path, payments: Path, answers: dict[Role, dict[str, str]] | None = None
) -> Proposal:
    # The payments first: roles come from the content.
    return infer_mapping(
        inspect_csv(payments, payments.name, max_bytes=LIMIT),
        inspect_csv(orders, orders.name, max_bytes=LIMIT),
        answers=answers,
    )


def _files(orders: Path, payments: Path) -> dict[Role, tuple[Path, str]]:
    return {Role.ORDERS: (orders, orders.name), Role.PAYMENTS: (payments, payments.name)}


def _captured(orders: Path, payments: Path, mapping: Mapping) -> list[datetime | None]:
    """The payments' capture times as read under `mapping`, in UTC, in file order."""
    con = connect()
    report = load_and_validate(con, _files(orders, payments), mapping, policy=STRICT)
    assert report.errors == [], report.errors
    assert not [w for w in words_of(report.warnings) if "time" in w], report.warnings
    rows = con.execute("SELECT epoch_us(captured_at) FROM payments_rows ORDER BY rowid").fetchall()
    return [None if us is None else datetime.fromtimestamp(us / 1e6, UTC) for (us,) in rows]


def _outside_window(orders: Path, payments: Path, mapping: Mapping, tmp_path: Path) -> list[str]:
    """The orders reconciling flags as captured outside the window, under `STRICT`."""
    run = run_job(_files(orders, payments), mapping, STRICT, tmp_path / "x.csv").reconciliation
    found = run.findings("capture_outside_window", limit=None)
    return sorted(order for finding in found for order in finding.order_ids)


def _check(
    tmp_path: Path,
    payments: str,
    name: str,
    reading: TimestampReading,
    noted: list[str],
    currency: str = "USD",
) -> None:
    """Inference proposes `reading` without a question and notes each zone (`noted`); the
    captures read at their true points in time, and only the late one is outside the window."""
    orders, pay = _pair(tmp_path, _shopify(currency), payments, name)
    proposal = _propose(orders, pay)
    assert proposal.clarifications == []
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.payments.options.timestamps["captured_at"] == reading
    [note] = [n for n in words_of(proposal.payments.notes) if noted[0] in n]
    assert all(words in note for words in noted), note
    assert not [n for n in words_of(proposal.payments.notes) if "has no time zone" in n]
    assert _captured(orders, pay, mapping) == _captures()
    assert _outside_window(orders, pay, mapping, tmp_path) == [f"#{1001 + LATE}"]


def test_paypal_date_time_and_zone_abbreviations_across_the_us_change(tmp_path: Path) -> None:
    _check(
        tmp_path,
        _paypal(),
        "Download.CSV",
        TimestampReading(
            pattern="%m/%d/%Y %H:%M:%S", timezone="UTC", zone_column="TimeZone", time_column="Time"
        ),
        [
            '"Date" with the time of day from "Time"',
            '"TimeZone": PST -> UTC-08:00',
            "PDT -> UTC-07:00",
        ],
    )


def test_paypal_with_rails_and_windows_names_in_its_zone_column(tmp_path: Path) -> None:
    # The same times, their zone written by name: each name follows Los Angeles' rules.
    names = ["Pacific Time (US & Canada)", "Pacific Standard Time", "America/Los_Angeles"]
    payments = _paypal(lambda local: names[local.day % 3])
    _check(
        tmp_path,
        payments,
        "Download.CSV",
        TimestampReading(
            pattern="%m/%d/%Y %H:%M:%S", timezone="UTC", zone_column="TimeZone", time_column="Time"
        ),
        [
            '"TimeZone": ',
            "Pacific Time (US & Canada) -> America/Los_Angeles",
            "Pacific Standard Time -> America/Los_Angeles",
        ],
    )


def test_square_date_time_and_a_rails_zone_name(tmp_path: Path) -> None:
    _check(
        tmp_path,
        _square(),
        "transactions-2026-02-24-2026-04-05.csv",
        TimestampReading(
            pattern="%m/%d/%Y %H:%M:%S", timezone="UTC", zone_column="Time Zone", time_column="Time"
        ),
        ['"Time Zone": Eastern Time (US & Canada) -> America/New_York'],
    )


def test_adyen_creation_date_and_cet_cest_across_the_eu_change(tmp_path: Path) -> None:
    _check(
        tmp_path,
        _adyen(),
        "settlement_detail_report_batch_71.csv",
        TimestampReading(pattern="%Y-%m-%d %H:%M:%S", timezone="UTC", zone_column="TimeZone"),
        ['"Creation Date" is read in each row\'s zone', "CET -> UTC+01:00", "CEST -> UTC+02:00"],
        currency="EUR",
    )


def test_a_windows_zone_column_beside_one_timestamp(tmp_path: Path) -> None:
    _check(
        tmp_path,
        _adyen(lambda local: "W. Europe Standard Time"),
        "settlement_detail_report_batch_71.csv",
        TimestampReading(pattern="%Y-%m-%d %H:%M:%S", timezone="UTC", zone_column="TimeZone"),
        ['"TimeZone": W. Europe Standard Time -> Europe/Berlin'],
        currency="EUR",
    )


def test_an_iana_and_rails_zone_column_beside_one_timestamp(tmp_path: Path) -> None:
    payments = _plain(
        lambda at: at.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M:%S"),
        zone="W. Europe Standard Time",
    )
    _check(
        tmp_path,
        payments,
        "payments.csv",
        TimestampReading(pattern="%Y-%m-%d %H:%M:%S", timezone="UTC", zone_column="Time Zone"),
        ['"Time Zone": ', "Europe/Berlin -> Europe/Berlin", "Berlin -> Europe/Berlin"],
    )


def _mountain(at: datetime) -> str:
    local = at.astimezone(DENVER)
    hour = local.strftime("%I").lstrip("0")
    return f"{local.month}/{local.day}/{local.year} {hour}:{local:%M:%S %p} {local.tzname()}"


@pytest.mark.parametrize(
    ("when", "pattern", "noted"),
    [
        (_mountain, "%m/%d/%Y %I:%M:%S %p %Z", ["MST -> UTC-07:00", "MDT -> UTC-06:00"]),
        (
            lambda at: at.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M:%S %Z"),
            "%Y-%m-%d %H:%M:%S %Z",
            ["CET -> UTC+01:00", "CEST -> UTC+02:00"],
        ),
        (
            lambda at: at.astimezone(NEW_YORK).strftime("%Y-%m-%d %H:%M America/New_York"),
            "%Y-%m-%d %H:%M %Z",
            ["America/New_York -> America/New_York"],
        ),
    ],
    ids=["12-hour-MST", "iso-CET", "iana"],
)
def test_a_zone_written_after_each_time(
    tmp_path: Path, when: Callable[[datetime], str], pattern: str, noted: list[str]
) -> None:
    payments = _plain(when)
    orders, pay = _pair(tmp_path, _shopify(), payments, "payments.csv")
    proposal = _propose(orders, pay)
    assert proposal.clarifications == []
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.payments.options.timestamps["captured_at"] == TimestampReading(
        pattern=pattern, timezone=None
    )
    [note] = [n for n in words_of(proposal.payments.notes) if "written after each time" in n]
    assert all(words in note for words in noted), note
    # Written to the minute, read to the minute.
    truth = [c if "%S" in pattern else c.replace(second=0) for c in _captures()]
    assert _captured(orders, pay, mapping) == truth
    assert _outside_window(orders, pay, mapping, tmp_path) == [f"#{1001 + LATE}"]


def test_read_as_utc_the_same_captures_fall_outside_the_window(tmp_path: Path) -> None:
    # What issue 36 met: PayPal's local times read as UTC put every capture hours before its
    # order. The zone column proposed reads them right (above); without it they are flagged.
    orders, pay = _pair(tmp_path, _shopify(), _paypal(), "Download.CSV")
    answers = {Role.PAYMENTS: {"timezone_column": ""}}
    mapping = _propose(orders, pay, answers).mapping
    assert mapping is not None
    assert mapping.payments.options.timestamps["captured_at"].zone_column is None
    assert len(_outside_window(orders, pay, mapping, tmp_path)) == len(ORDERED)


def test_a_zone_that_names_nothing_leaves_its_rows_unread(tmp_path: Path) -> None:
    payments = _adyen(lambda local: "Mars/Base" if local.day == 2 else str(local.tzname()))
    orders, pay = _pair(tmp_path, _shopify("EUR"), payments, "settlement_detail_report.csv")
    proposal = _propose(orders, pay)
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.payments.options.timestamps["captured_at"].zone_column == "TimeZone"
    assert any("Mars/Base -> no zone" in n for n in words_of(proposal.payments.notes))
    report = load_and_validate(connect(), _files(orders, pay), mapping, policy=STRICT)
    unread = [i + 1 for i, at in enumerate(_captures()) if at.astimezone(BERLIN).day == 2]
    assert unread
    assert any(
        f"{len(unread)} of {len(ORDERED)} values that do not read" in w
        for w in words_of(report.warnings)
    )


def test_dates_that_read_both_ways_beside_a_time_column_are_settled_by_the_other_file(
    tmp_path: Path,
) -> None:
    # Every date from 1 to 11 March reads day-first and month-first; the orders' ISO dates say.
    ordered = [
        datetime(2026, 3, 1, 15, tzinfo=UTC) + timedelta(days=d % 9, hours=d) for d in range(20)
    ]
    captures = _captures(ordered, late=-1)
    orders, pay = _pair(
        tmp_path, _shopify(ordered=ordered), _paypal(captures=captures), "Download.CSV"
    )
    proposal = _propose(orders, pay)
    assert proposal.clarifications == []
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.payments.options.timestamps["captured_at"].pattern == "%m/%d/%Y %H:%M:%S"


CST_ORDERS = "order_id,total,currency,created_at\n" + "".join(
    f"{1000 + i},10.00,CNY,2026-03-{10 + i} 09:00:00 +0800\n" for i in range(1, 8)
)
CST_PAYMENTS = "payment_id,order_id,amount,currency,captured,TimeZone\n" + "".join(
    f"p{i},{1000 + i},10.00,CNY,2026-03-{10 + i} 10:00:00,CST\n" for i in range(1, 8)
)


def test_an_abbreviation_that_names_two_zones_is_asked(tmp_path: Path) -> None:
    orders, pay = _pair(tmp_path, CST_ORDERS, CST_PAYMENTS, "payments.csv")
    # Asked with the zones as the choices, the rest of the reading still proposed (issue 37:
    # the question is shown with the mapping it is about).
    proposal = _propose(orders, pay)
    [question] = proposal.clarifications
    assert (question.role, question.field) == (Role.PAYMENTS, "timezone")
    assert {"America/Chicago", "Asia/Shanghai"} <= set(question.choices)
    assert proposal.payments.column_of("order_id") == "order_id"
    message = question.question
    assert '"TimeZone" writes CST' in message
    assert "US Central, UTC-06:00; China, UTC+08:00" in message
    assert "payments.timezone=America/Chicago or payments.timezone=Asia/Shanghai" in message


@pytest.mark.parametrize(("zone", "hour"), [("Asia/Shanghai", 2), ("America/Chicago", 16)])
def test_the_files_zone_says_which_an_abbreviation_means(
    tmp_path: Path, zone: str, hour: int
) -> None:
    orders, pay = _pair(tmp_path, CST_ORDERS, CST_PAYMENTS, "payments.csv")
    proposal = _propose(orders, pay, {Role.PAYMENTS: {"timezone": zone}})
    mapping = proposal.mapping
    assert mapping is not None
    reading = mapping.payments.options.timestamps["captured_at"]
    assert (reading.zone_column, reading.timezone) == ("TimeZone", zone)
    con = connect()
    report = load_and_validate(con, _files(orders, pay), mapping, policy=STRICT)
    assert not [w for w in words_of(report.warnings) if "more than one zone" in w]
    hours = con.execute("SELECT DISTINCT hour(timezone('UTC', captured_at)) FROM payments_rows")
    assert hours.fetchall() == [(hour,)]


def test_every_zone_name_is_one_python_and_duckdb_both_know() -> None:
    con = duckdb.connect()
    for name, zone in ZONE_NAMES.items():
        found = zone_of(name)
        assert found is not None and found.name == zone, name
        con.execute("SELECT timezone(?, TIMESTAMP '2026-03-08 12:00')", [zone]).fetchone()


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("PDT", "UTC-07:00"),
        ("pst", "UTC-08:00"),
        ("CEST", "UTC+02:00"),
        ("AEDT", "UTC+11:00"),
        ("UTC-5", "UTC-05:00"),
        ("+05:30", "UTC+05:30"),
        ("Europe/Berlin", "Europe/Berlin"),
        ("europe/berlin", "Europe/Berlin"),
        ("Eastern Standard Time", "America/New_York"),
        ("W. Europe Standard Time", "Europe/Berlin"),
        ("Central Time (US & Canada)", "America/Chicago"),
        ("(UTC-08:00) Pacific Time (US & Canada)", "America/Los_Angeles"),
        ("(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna", "Europe/Amsterdam"),
    ],
)
def test_what_a_zone_text_names(text: str, read: str) -> None:
    assert str(zone_of(text)) == read


def test_a_city_is_a_zone_only_where_a_zone_is_expected() -> None:
    assert zone_of("London") is None
    london = zone_of("London", cities=True)
    assert london is not None and (london.name, london.named) == ("Europe/London", False)
    assert zone_of("Completed", cities=True) is None
    assert detect_timestamp_format(["2026-03-29 01:30:00 pending"] * 3)[0] is None
