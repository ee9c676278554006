"""Reading options answered by name: each one is taken into the mapping, validated, honoured.

Each test writes an orders file and a payments file, infers the mapping with a person's answers
(`{Role: {option: value}}`, as the terminal, `decide` and Slack pass them on), reads both files
as `load_and_validate` does, and reconciles with `run_job`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.data.ingest import inspect_csv
from agent.data.mapping import Proposal, infer_mapping
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import READING_OPTIONS, Mapping, Role
from agent.data.wording import words_of
from agent.errors import MappingError, UnknownColumnError

LIMIT = 1 << 30


def _propose(
    orders: Path, payments: Path, answers: dict[Role, dict[str, str]] | None = None
) -> Proposal:
    return infer_mapping(
        inspect_csv(orders, orders.name, max_bytes=LIMIT),
        inspect_csv(payments, payments.name, max_bytes=LIMIT),
        answers=answers,
    )


def _pair(tmp_path: Path, orders: str, payments: str) -> tuple[Path, Path]:
    first, second = tmp_path / "orders.csv", tmp_path / "payments.csv"
    first.write_text(orders, encoding="utf-8")
    second.write_text(payments, encoding="utf-8")
    return first, second


def _mapping(proposal: Proposal) -> Mapping:
    mapping = proposal.mapping
    assert mapping is not None, proposal.clarifications
    return mapping


def _files(orders: Path, payments: Path) -> dict[Role, tuple[Path, str]]:
    return {Role.ORDERS: (orders, orders.name), Role.PAYMENTS: (payments, payments.name)}


def _counts(orders: Path, payments: Path, mapping: Mapping, tmp_path: Path) -> dict[str, int]:
    result = run_job(_files(orders, payments), mapping, Policy(), tmp_path / "x.csv")
    summary = result.reconciliation.summary()
    for ledger in summary.ledger:
        assert ledger.accounted == ledger.records
    return {c: n for c, n in summary.counts.items() if n}


def _captured_at(orders: Path, payments: Path, mapping: Mapping) -> list[datetime | None]:
    """The payments' capture times as read under `mapping`, in UTC."""
    con = connect()
    report = load_and_validate(con, _files(orders, payments), mapping, policy=Policy())
    assert report.errors == [], report.errors
    rows = con.execute("SELECT epoch_us(captured_at) FROM payments_rows ORDER BY rowid").fetchall()
    return [None if us is None else datetime.fromtimestamp(us / 1e6, UTC) for (us,) in rows]


def _orders(n: int, total: str = "1234.00") -> str:
    return "order_id,total,currency,created_at\n" + "".join(
        f"{1000 + i},{total},USD,2025-04-0{1 + i % 9} 10:00:00\n" for i in range(1, n + 1)
    )


def test_every_option_is_registered_with_help_for_people() -> None:
    names = {
        "decimal",
        "thousands",
        "unit",
        "captured_amount_decimal",
        "order_amount_unit",
        "date_order",
        "timestamp_pattern",
        "timezone",
        "timezone_column",
        "time_column",
        "orders_file",
    }
    assert names <= set(READING_OPTIONS)
    assert all(READING_OPTIONS[name].strip() for name in names)


def test_decimal_mark_and_thousands_separator(tmp_path: Path) -> None:
    payments = "payment_id,order_id,amount,currency\n" + "".join(
        f"ch_{i},{1000 + i},1.234,USD\n" for i in range(1, 7)
    )
    orders, pay = _pair(tmp_path, _orders(6), payments)
    # "1.234" reads two ways; the orders' 1234.00 say which (`decide_separators`).
    plain = _mapping(_propose(orders, pay))
    assert _counts(orders, pay, plain, tmp_path) == {}
    answered = _mapping(
        _propose(orders, pay, {Role.PAYMENTS: {"decimal": "comma", "thousands": "."}})
    )
    reading = answered.payments.options.amounts["captured_amount"]
    assert (reading.decimal, reading.thousands) == (",", ".")
    assert load_and_validate(connect(), _files(orders, pay), answered, policy=Policy()).errors == []
    assert _counts(orders, pay, answered, tmp_path) == {}
    assert answered.canonical() == plain.canonical()
    # A person's answer is taken as given, even against the other file.
    dot = _mapping(_propose(orders, pay, {Role.PAYMENTS: {"decimal": "dot"}}))
    assert _counts(orders, pay, dot, tmp_path) == {"amount_mismatch": 6}


def test_one_amount_field_gets_its_own_separators(tmp_path: Path) -> None:
    payments = "payment_id,order_id,amount,currency,amount_refunded\n" + "".join(
        f'ch_{i},{1000 + i},1234.00,USD,"1.234,00"\n' for i in range(1, 7)
    )
    orders, pay = _pair(tmp_path, _orders(6), payments)
    answers = {"refunded_amount_decimal": ",", "refunded_amount_thousands": "dot"}
    mapping = _mapping(_propose(orders, pay, {Role.PAYMENTS: answers}))
    amounts = mapping.payments.options.amounts
    assert (amounts["captured_amount"].decimal, amounts["refunded_amount"].decimal) == (".", ",")
    # Every capture was refunded in full while the orders stay open: not a finding (no status).
    assert _counts(orders, pay, mapping, tmp_path) == {}


def test_amount_unit(tmp_path: Path) -> None:
    # Three orders are too few for inference to decide the unit from matched amounts.
    payments = "payment_id,order_id,amount,currency\n" + "".join(
        f"ch_{i},{1000 + i},123400,USD\n" for i in range(1, 4)
    )
    orders, pay = _pair(tmp_path, _orders(3), payments)
    assert _counts(orders, pay, _mapping(_propose(orders, pay)), tmp_path) == {"amount_mismatch": 3}
    mapping = _mapping(_propose(orders, pay, {Role.PAYMENTS: {"captured_amount_unit": "minor"}}))
    assert mapping.payments.options.amounts["captured_amount"].unit == "minor"
    assert _counts(orders, pay, mapping, tmp_path) == {}


def test_a_unit_answered_is_not_overruled_by_matched_amounts(tmp_path: Path) -> None:
    payments = "payment_id,order_id,amount,currency\n" + "".join(
        f"ch_{i},{1000 + i},123400,USD\n" for i in range(1, 9)
    )
    orders, pay = _pair(tmp_path, _orders(8), payments)
    assert _mapping(_propose(orders, pay)).payments.options.amounts["captured_amount"].unit == (
        "minor"
    )
    mapping = _mapping(_propose(orders, pay, {Role.PAYMENTS: {"unit": "major"}}))
    assert mapping.payments.options.amounts["captured_amount"].unit == "major"


def _dated_payments(dates: list[str], header: str = "date") -> str:
    return f"payment_id,order_id,amount,currency,{header}\n" + "".join(
        f"ch_{i},{1000 + i},1234.00,USD,{d}\n" for i, d in enumerate(dates, 1)
    )


def test_date_order(tmp_path: Path) -> None:
    # Every date fits both orders; the orders were placed on 2025-04-02 .. 2025-04-07.
    dates = [f"0{day}/04/2025" for day in range(2, 8)]
    orders, pay = _pair(tmp_path, _orders(6), _dated_payments(dates))
    answers = {Role.PAYMENTS: {"date_order": "DMY"}}
    mapping = _mapping(_propose(orders, pay, answers))
    assert mapping.payments.options.timestamps["captured_at"].pattern == "%d/%m/%Y"
    times = _captured_at(orders, pay, mapping)
    assert times[0] == datetime(2025, 4, 2, tzinfo=UTC)
    assert _counts(orders, pay, mapping, tmp_path) == {}
    mdy = _mapping(_propose(orders, pay, {Role.PAYMENTS: {"date_order": "mdy"}}))
    assert mdy.payments.options.timestamps["captured_at"].pattern == "%m/%d/%Y"
    # Read month first, four captures are months away from their orders (Feb 4, Mar 4, Jun 4
    # and Jul 4); Apr 4 and May 4 fall inside the window of the orders of Apr 4 and Apr 5.
    assert _counts(orders, pay, mdy, tmp_path) == {"capture_outside_window": 4}


def test_timestamp_pattern(tmp_path: Path) -> None:
    dates = [f"0{day}.04.2025 um 10.30" for day in range(2, 8)]
    orders, pay = _pair(tmp_path, _orders(6), _dated_payments(dates))
    pattern = "%d.%m.%Y um %H.%M"
    mapping = _mapping(
        _propose(
            orders,
            pay,
            {Role.PAYMENTS: {"captured_at": "date", "timestamp_pattern": pattern}},
        )
    )
    assert mapping.payments.options.timestamps["captured_at"].pattern == pattern
    assert _captured_at(orders, pay, mapping)[0] == datetime(2025, 4, 2, 10, 30, tzinfo=UTC)


def test_time_zone_of_naive_timestamps(tmp_path: Path) -> None:
    dates = [f"2025-04-0{day} 23:30:00" for day in range(2, 8)]
    orders, pay = _pair(tmp_path, _orders(6), _dated_payments(dates))
    mapping = _mapping(_propose(orders, pay, {Role.PAYMENTS: {"timezone": "America/New_York"}}))
    assert mapping.payments.options.timestamps["captured_at"].timezone == "America/New_York"
    assert _captured_at(orders, pay, mapping)[0] == datetime(2025, 4, 3, 3, 30, tzinfo=UTC)


def test_a_time_zone_given_per_row_in_another_column(tmp_path: Path) -> None:
    zones = ["CET", "PDT", "+02:00", "Europe/Berlin", "Central Time (US & Canada)", "Mars/Base"]
    payments = "payment_id,order_id,amount,currency,date,tz\n" + "".join(
        f"ch_{i},{1000 + i},1234.00,USD,2025-04-0{1 + i} 12:00:00,{zone}\n"
        for i, zone in enumerate(zones, 1)
    )
    orders, pay = _pair(tmp_path, _orders(6), payments)
    mapping = _mapping(_propose(orders, pay, {Role.PAYMENTS: {"timezone_column": "tz"}}))
    assert mapping.payments.options.timestamps["captured_at"].zone_column == "tz"
    con = connect()
    report = load_and_validate(con, _files(orders, pay), mapping, policy=Policy())
    # The zone nobody knows leaves its row's timestamp unread, reported with its row.
    assert any(
        "1 of 6 values that do not read as timestamps" in w for w in words_of(report.warnings)
    )
    assert any("e.g. rows 6" in w for w in words_of(report.warnings))
    rows = con.execute("SELECT epoch_us(captured_at) FROM payments_rows ORDER BY rowid").fetchall()
    hours = [None if us is None else datetime.fromtimestamp(us / 1e6, UTC).hour for (us,) in rows]
    assert hours == [11, 19, 10, 10, 17, None]
    assert _counts(orders, pay, mapping, tmp_path) == {}


def test_a_date_and_a_time_in_two_columns(tmp_path: Path) -> None:
    payments = "payment_id,order_id,amount,currency,Date,Time,TimeZone\n" + "".join(
        f"ch_{i},{1000 + i},1234.00,USD,04/1{i}/2025,08:13:43,PDT\n" for i in range(1, 7)
    )
    orders, pay = _pair(tmp_path, _orders(6), payments)
    plain = _mapping(_propose(orders, pay))
    answers = {Role.PAYMENTS: {"time_column": "Time", "timezone_column": "TimeZone"}}
    mapping = _mapping(_propose(orders, pay, answers))
    # Proposed from the values alone, the same reading a person's answers give.
    assert plain.canonical() == mapping.canonical()
    reading = mapping.payments.options.timestamps["captured_at"]
    assert (reading.pattern, reading.time_column, reading.zone_column) == (
        "%m/%d/%Y %H:%M:%S",
        "Time",
        "TimeZone",
    )
    assert _captured_at(orders, pay, mapping)[0] == datetime(2025, 4, 11, 15, 13, 43, tzinfo=UTC)
    assert _counts(orders, pay, mapping, tmp_path) == {}


def test_new_timestamp_options_stay_out_of_the_digest_while_unset(tmp_path: Path) -> None:
    dates = [f"2025-04-0{day} 23:30:00" for day in range(2, 8)]
    orders, pay = _pair(tmp_path, _orders(6), _dated_payments(dates))
    canonical = _mapping(_propose(orders, pay)).canonical()
    assert canonical["payments"]["options"]["timestamps"]["captured_at"] == {
        "pattern": "%Y-%m-%d %H:%M:%S",
        "timezone": "UTC",
    }


@pytest.mark.parametrize(
    ("answers", "error", "message"),
    [
        ({"decimal": "x"}, MappingError, "decimal is . or ,"),
        ({"thousands": "tab"}, MappingError, "thousands is none, comma"),
        ({"decimal": ",", "thousands": ","}, MappingError, "are both"),
        ({"unit": "cents"}, MappingError, "unit is major or minor"),
        ({"date_order": "DDD"}, MappingError, "date_order is DMY, MDY or YMD"),
        ({"date_order": "YMD"}, MappingError, "reads as a YMD date"),
        ({"timestamp_pattern": "dd/mm/yyyy"}, MappingError, "no %-directive"),
        ({"timezone": "Mars/Base"}, MappingError, "not an IANA time zone"),
        ({"timezone_column": "Zone"}, UnknownColumnError, 'no column "Zone"'),
        ({"time_column": "Time"}, UnknownColumnError, 'no column "Time"'),
        ({"orders_file": "nope.csv"}, MappingError, "is neither file"),
    ],
)
def test_values_that_cannot_work_are_clear_errors(
    tmp_path: Path, answers: dict[str, str], error: type[Exception], message: str
) -> None:
    dates = [f"0{day}/04/2025" for day in range(2, 8)]
    orders, pay = _pair(tmp_path, _orders(6), _dated_payments(dates))
    with pytest.raises(error, match=message):
        _propose(orders, pay, {Role.PAYMENTS: answers})


def test_which_file_is_the_orders_export_is_answerable(tmp_path: Path) -> None:
    # Two exports that look alike: ids, a reference, an amount, a currency in each.
    first = "id,ref,amount,currency\n" + "".join(
        f"A{i},{1000 + i},12.00,USD\n" for i in range(1, 7)
    )
    second = "id,ref,amount,currency\n" + "".join(
        f"B{i},{1000 + i},12.00,USD\n" for i in range(1, 7)
    )
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    one.write_text(first, encoding="utf-8")
    two.write_text(second, encoding="utf-8")
    asked = _propose(one, two)
    [question] = [c for c in asked.clarifications if c.role is None]
    assert question.question.startswith("Which file is the orders export?")
    assert "orders_file=" in question.question
    assert set(question.choices) == {"one.csv", "two.csv"}
    for name, other in (("two.csv", "one.csv"), ("one.csv", "two.csv")):
        answered = _propose(one, two, {Role.ORDERS: {"orders_file": name}})
        assert [c for c in answered.clarifications if c.role is None] == []
        assert (answered.orders.file_name, answered.payments.file_name) == (name, other)
        assert answered.role_confidence == 1.0


def test_the_orders_file_answer_overrules_a_confident_guess(tmp_path: Path) -> None:
    orders, pay = _pair(tmp_path, _orders(6), _dated_payments(["2025-04-02"] * 6))
    assert _propose(orders, pay).orders.file_name == "orders.csv"
    swapped = _propose(orders, pay, {Role.PAYMENTS: {"orders_file": "PAYMENTS.csv"}})
    assert swapped.orders.file_name == "payments.csv"


def test_an_answer_is_part_of_the_mapping_digest(tmp_path: Path) -> None:
    # The same files, one answer apart: two mappings, two digests.
    dates = [f"0{day}/04/2025" for day in range(2, 8)]
    orders, pay = _pair(tmp_path, _orders(6), _dated_payments(dates))
    a = _mapping(_propose(orders, pay, {Role.PAYMENTS: {"date_order": "DMY"}}))
    b = _mapping(_propose(orders, pay, {Role.PAYMENTS: {"date_order": "MDY"}}))
    assert a.canonical() != b.canonical()


def _thousands_of(tmp_path: Path, paid: str, currency: str = "USD") -> tuple[Path, Path]:
    """Totals that are whole thousands written with a dot, which reads as a decimal point
    too; the payments file writes its amounts as `paid` says, one of them 1,000 over."""
    totals = ["250.000", "99.000", "450.000", "120.000", "35.000", "800.000"]
    orders = "order_id,total,currency\n" + "".join(
        f"{1001 + i},{t},{currency}\n" for i, t in enumerate(totals)
    )
    amounts = {"same": totals, "plain": [t.replace(".", "") for t in totals]}[paid]
    amounts[5] = amounts[5].replace("800", "801")
    payments = "payment_id,order_id,amount,currency\n" + "".join(
        f"p{i},{1001 + i},{a},{currency}\n" for i, a in enumerate(amounts)
    )
    return _pair(tmp_path, orders, payments)


def test_amounts_that_read_two_ways_are_asked_about(tmp_path: Path) -> None:
    # Chile's Unidad de Fomento has four decimals: 250.000 CLF and 250000 CLF both fit it,
    # and neither is written with exactly four.
    orders, payments = _thousands_of(tmp_path, "same", "CLF")
    proposal = _propose(orders, payments)
    # Read with a decimal point, 801.000 against 800.000 would be 1 apart, not 1,000.
    assert proposal.mapping is None
    asked = {(q.role, q.field): q for q in proposal.clarifications}
    question = asked[Role.ORDERS, "order_amount_decimal"]
    assert '"250.000" is 250 with "." as the decimal mark and 250000 with ","' in question.question
    assert question.choices == ["dot", "comma"]
    assert (Role.PAYMENTS, "captured_amount_decimal") in asked
    # The decimal mark answered alone: the thousands separator that goes with it is taken.
    answers = {
        Role.ORDERS: {"order_amount_decimal": "comma"},
        Role.PAYMENTS: {"captured_amount_decimal": "comma"},
    }
    mapping = _mapping(_propose(orders, payments, answers))
    reading = mapping.orders.options.amounts["order_amount"]
    assert (reading.decimal, reading.thousands) == (",", ".")
    assert _counts(orders, payments, mapping, tmp_path) == {"amount_mismatch": 1}


def test_the_currency_s_decimals_settle_amounts_that_read_two_ways(tmp_path: Path) -> None:
    # Dong have no decimals: 250.000 VND is 250,000 dong, and 250.000 USD would have a cent
    # finer than a cent. Dinar have three: 12.500 KWD in a semicolon file (where a decimal
    # comma is usual) is twelve and a half dinar.
    for currency in ("VND", "USD"):
        orders, payments = _thousands_of(tmp_path, "same", currency)
        mapping = _mapping(_propose(orders, payments))
        reading = mapping.orders.options.amounts["order_amount"]
        assert (reading.decimal, reading.thousands) == (",", ".")
    orders, payments = _thousands_of(tmp_path, "same", "VND")
    mapping = _mapping(_propose(orders, payments))
    reading = mapping.orders.options.amounts["order_amount"]
    assert (reading.decimal, reading.thousands) == (",", ".")
    assert _counts(orders, payments, mapping, tmp_path) == {"amount_mismatch": 1}
    dinar = ["12.500", "7.250", "100.000", "3.125", "45.750", "9.000", "18.375"]
    orders, payments = _pair(
        tmp_path,
        "id;total;currency\n" + "".join(f"{1000 + i};{a};KWD\n" for i, a in enumerate(dinar)),
        "id,object,amount,currency,status,order_ref\n"
        + "".join(
            f"ch_{i},charge,{a.replace('.', '')},kwd,succeeded,{1000 + i}\n"
            for i, a in enumerate(dinar)
        ),
    )
    proposal = _propose(orders, payments)
    mapping = _mapping(proposal)
    reading = mapping.orders.options.amounts["order_amount"]
    assert reading.decimal == "."
    # The payments' 12500 are then fils, not dinar (units decided on the settled reading).
    assert mapping.payments.options.amounts["captured_amount"].unit == "minor"
    assert _counts(orders, payments, mapping, tmp_path) == {}


def test_the_other_file_settles_amounts_that_read_two_ways(tmp_path: Path) -> None:
    orders, payments = _thousands_of(tmp_path, "plain", "CLF")
    proposal = _propose(orders, payments)
    mapping = _mapping(proposal)
    reading = mapping.orders.options.amounts["order_amount"]
    assert (reading.decimal, reading.thousands) == (",", ".")
    assert any("agree with the other file" in note for note in words_of(proposal.orders.notes))
    assert _counts(orders, payments, mapping, tmp_path) == {"amount_mismatch": 1}


def test_a_note_about_what_a_person_answered_is_not_shown_again(tmp_path: Path) -> None:
    orders = "order_id,total,currency,created_at\n" + "".join(
        f"{1000 + i},10.00,USD,0{i}/0{i + 1}/2025 10:00\n" for i in range(1, 8)
    )
    payments = "payment_id,order_id,amount,currency\n" + "".join(
        f"p{i},{1000 + i},10.00,USD\n" for i in range(1, 8)
    )
    first, second = _pair(tmp_path, orders, payments)
    guessed = _propose(first, second)
    # Every date reads both ways and the payments have no dates to settle it: a question.
    [question] = [q for q in guessed.clarifications if q.field == "date_order"]
    assert (question.role, question.choices) == (Role.ORDERS, ["DMY", "MDY"])
    assert any("has no time zone" in n for n in words_of(guessed.orders.notes))
    answered = _propose(
        first, second, {Role.ORDERS: {"date_order": "MDY", "timezone": "America/New_York"}}
    )
    assert answered.mapping is not None
    said = words_of(answered.orders.notes)
    assert not [n for n in said if "fits both" in n or "no time zone" in n]


def test_the_other_file_settles_dates_that_read_day_first_and_month_first(
    tmp_path: Path,
) -> None:
    # US dates, every day <= 12; each capture minutes after its order, in ISO: month-first
    # puts every capture beside its order, day-first months away.
    days = [(1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12), (2, 3)]
    orders = "order_id,total,currency,created_at\n" + "".join(
        f"{1000 + i},10.00,USD,{m:02d}/{d:02d}/2025 10:00\n" for i, (m, d) in enumerate(days)
    )
    payments = "payment_id,order_id,amount,currency,created\n" + "".join(
        f"p{i},{1000 + i},10.00,USD,2025-{m:02d}-{d:02d} 10:05:00\n"
        for i, (m, d) in enumerate(days)
    )
    first, second = _pair(tmp_path, orders, payments)
    proposal = _propose(first, second)
    mapping = _mapping(proposal)
    assert mapping.orders.options.timestamps["order_date"].pattern.startswith("%m/%d/%Y")
    assert any("the other file's times fall near" in n for n in words_of(proposal.orders.notes))
    assert _counts(first, second, mapping, tmp_path) == {}


def test_a_zone_abbreviation_that_names_two_zones_is_said_with_its_reading(
    tmp_path: Path,
) -> None:
    orders = "order_id,total,currency,created_at,tz\n" + "".join(
        f"{1000 + i},10.00,CNY,2025-03-0{i} 09:00:00,CST\n" for i in range(1, 8)
    )
    payments = "payment_id,order_id,amount,currency\n" + "".join(
        f"p{i},{1000 + i},10.00,CNY\n" for i in range(1, 8)
    )
    first, second = _pair(tmp_path, orders, payments)
    mapping = _mapping(_propose(first, second, {Role.ORDERS: {"timezone_column": "tz"}}))
    report = load_and_validate(connect(), _files(first, second), mapping, policy=Policy())
    [warning] = [w for w in words_of(report.warnings) if "name more than one zone" in w]
    assert "CST as US Central, UTC-6 (China Standard Time is UTC+8)" in warning
