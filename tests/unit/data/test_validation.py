"""Validation of a mapping on every row: what does not read is counted, with example rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.data.normalize import ValidationReport
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.reconcile.values import Finding
from agent.data.schema import (
    AmountReading,
    DatasetMapping,
    Mapping,
    ReadingOptions,
    Role,
    TimestampReading,
)
from agent.data.wording import words_of
from agent.errors import UnknownColumnError


def mapping(**orders_columns: str) -> Mapping:
    options = ReadingOptions(
        amounts={"order_amount": AmountReading(thousands=","), "captured_amount": AmountReading()},
        timestamps={"order_date": TimestampReading(pattern="%Y-%m-%d", timezone="UTC")},
    )
    return Mapping(
        orders=DatasetMapping(
            columns=orders_columns
            or {
                "order_id": "id",
                "order_amount": "total",
                "currency": "ccy",
                "order_date": "date",
            },
            options=options,
        ),
        payments=DatasetMapping(
            columns={
                "payment_id": "pid",
                "order_id": "ref",
                "captured_amount": "amount",
                "currency": "ccy",
            },
            options=options,
        ),
    )


def validate_with(
    files: dict[Role, tuple[Path, str]], role: Role, path: Path, text: str, under: Mapping
) -> ValidationReport:
    """The validation of `files` under `under`, with `role`'s file replaced by `text` at `path`."""
    path.write_text(text)
    return load_and_validate(connect(), {**files, role: (path, path.name)}, under, policy=Policy())


@pytest.fixture
def files(tmp_path: Path) -> dict[Role, tuple[Path, str]]:
    rows = [f"{1000 + i},{i}.00,USD,2025-10-{1 + i % 28:02d}" for i in range(1, 301)]
    rows[9] = "1010,ten dollars,USD,2025-10-10"  # data row 10: not an amount
    rows[19] = "1020,20.00,US$,2025-10-20"  # data row 20: not a currency code
    rows[29] = ",30.00,USD,2025-10-30"  # data row 30: no id
    rows[39] = "1040,40.00,USD,40/10/2025"  # data row 40: not a date in this format
    orders = tmp_path / "orders.csv"
    orders.write_text("id,total,ccy,date\n" + "\n".join(rows) + "\n")
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "pid,ref,amount,ccy\n" + "".join(f"p{i},{1000 + i},{i}.00,USD\n" for i in range(1, 301))
    )
    return {Role.ORDERS: (orders, "orders.csv"), Role.PAYMENTS: (payments, "payments.csv")}


def test_unreadable_values_are_counted_with_example_rows(
    files: dict[Role, tuple[Path, str]],
) -> None:
    report = load_and_validate(connect(), files, mapping(), policy=Policy())
    checks = {c.field: c for c in report.checks if c.file == "orders.csv"}
    assert checks["order_amount"].unreadable == 1
    assert checks["order_amount"].example_rows == [10]
    assert checks["currency"].example_rows == [20]
    assert checks["order_id"].example_rows == [30]
    assert checks["order_date"].example_rows == [40]
    assert report.ok  # one bad value in 300 is a warning, not a block
    assert any(
        "orders.csv: 1 of 300 values that do not read as amounts" in w
        for w in words_of(report.warnings)
    )
    assert any('"ccy"' in w and "ISO 4217" in w for w in words_of(report.warnings))


def test_each_unreadable_value_warning_says_what_reconciling_does_and_it_does_that(
    tmp_path: Path, files: dict[Role, tuple[Path, str]]
) -> None:
    report = load_and_validate(connect(), files, mapping(), policy=Policy())
    said = {
        w.split('" (', 1)[1].split(")", 1)[0]: w for w in words_of(report.warnings) if '" (' in w
    }
    # A required value that does not read: what happens depends on the row's kind (the
    # exceptions CSV gives each row's reason), so the warning claims nothing.
    for field, row in (("order_amount", 10), ("currency", 20), ("order_id", 30)):
        assert said[field].endswith(f"e.g. rows {row}")
    assert said["order_date"].endswith("reconciling skips the time-window check for those rows")
    job = run_job(files, mapping(), Policy(), tmp_path / "x.csv")

    def order_rows(finding: Finding) -> set[int]:
        return {r for e in finding.evidence if e.file == "orders.csv" for r in e.rows}

    findings = job.reconciliation.findings()
    unreadable = {r for f in findings if f.category == "unreadable_row" for r in order_rows(f)}
    assert unreadable == {10, 20, 30}
    # The order whose date does not read is reconciled all the same, without a window check.
    assert not [f for f in findings if 40 in order_rows(f)]


def test_many_unreadable_required_values_block_the_mapping(
    tmp_path: Path, files: dict[Role, tuple[Path, str]]
) -> None:
    text = (
        "id,total,ccy,date\n"
        + "".join(f"{1000 + i},{i}.50,USD,2025-10-01\n" for i in range(5))
        + "".join(f"{2000 + i},{i};50,USD,2025-10-01\n" for i in range(5))
    )
    report = validate_with(files, Role.ORDERS, tmp_path / "orders.csv", text, mapping())
    assert not report.ok
    assert any("order_amount" in e and "rows 6, 7, 8, 9, 10" in e for e in words_of(report.errors))


def test_a_mapped_column_the_file_lacks_is_named(files: dict[Role, tuple[Path, str]]) -> None:
    wrong = mapping(order_id="id", order_amount="Total Price", currency="ccy")
    with pytest.raises(UnknownColumnError, match=r'orders\.csv has no column "Total Price"'):
        load_and_validate(connect(), files, wrong, policy=Policy())


def test_a_required_field_without_a_column_is_an_error(
    files: dict[Role, tuple[Path, str]],
) -> None:
    report = load_and_validate(
        connect(), files, mapping(order_id="id", currency="ccy"), policy=Policy()
    )
    assert "orders.csv: no column is mapped to order_amount" in words_of(report.errors)


def test_amounts_finer_than_their_currency_are_named_before_approval(
    tmp_path: Path, files: dict[Role, tuple[Path, str]]
) -> None:
    text = (
        "id,total,ccy,date\n"
        "1001,10.005,USD,2025-10-01\n"  # row 1: a tenth of a cent
        "1002,10.50,USD,2025-10-01\n"
        "1003,100.5,JPY,2025-10-01\n"  # row 3: the yen has no minor unit
        "1004,100,JPY,2025-10-01\n"
        "1005,1.2345,KWD,2025-10-01\n"  # row 5: the dinar has three decimals
        "1006,1.234,KWD,2025-10-01\n"
        "1007,1.5,XXX,2025-10-01\n"  # a currency that does not read: its own check names it
        '1008,"1,000.1234",CLF,2025-10-01\n'  # four decimals are the CLF's own
    )
    report = validate_with(files, Role.ORDERS, tmp_path / "orders.csv", text, mapping())
    # Told, not blocked: the person decides with the rounding known.
    assert not any("decimals" in e for e in words_of(report.errors))
    finer = [w for w in words_of(report.warnings) if "more decimals" in w]
    assert finer == [
        'orders.csv: 3 of 8 amounts in column "total" (order_amount) have more decimals than '
        "their currency's minor unit, e.g. rows 1, 3, 5: where reconciling uses one, it rounds "
        "it half away from zero to that unit (10.005 USD as 10.01)"
    ]
    assert not any("payments.csv" in w and "decimals" in w for w in words_of(report.warnings))


def test_amounts_in_minor_units_that_are_not_whole_are_named(
    tmp_path: Path, files: dict[Role, tuple[Path, str]]
) -> None:
    text = (
        "id,total,ccy,date\n1001,1250.5,USD,2025-10-01\n1002,1250,USD,2025-10-01\n"
        "1003,99,JPY,2025-10-01\n"
        "1004,99.5,ZZZ,2025-10-01\n"  # a currency that does not read: never reconciled
    )
    cents = mapping()
    options = cents.orders.options.model_copy(
        update={"amounts": {"order_amount": AmountReading(unit="minor")}}
    )
    cents = cents.model_copy(
        update={"orders": cents.orders.model_copy(update={"options": options})}
    )
    report = validate_with(files, Role.ORDERS, tmp_path / "orders.csv", text, cents)
    assert [w for w in words_of(report.warnings) if "not whole" in w] == [
        'orders.csv: 1 of 4 amounts in column "total" (order_amount) are not whole minor units '
        "(the column is read in minor units, such as cents), e.g. rows 1: where reconciling "
        "uses one, it rounds it half away from zero to a whole one"
    ]


def test_the_engine_rounds_a_finer_amount_as_the_warning_says(tmp_path: Path) -> None:
    orders = tmp_path / "orders.csv"
    orders.write_text(
        "id,total,ccy,date\n1001,10.005,USD,2025-10-01\n1002,10.015,USD,2025-10-01\n"
        "1003,-10.005,USD,2025-10-01\n"
    )
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "pid,ref,amount,ccy\np1,1001,10.01,USD\np2,1002,10.02,USD\np3,1003,-10.01,USD\n"
    )
    files = {Role.ORDERS: (orders, "orders.csv"), Role.PAYMENTS: (payments, "payments.csv")}
    # No tolerance: a rounding to the even cent (10.00, 10.02, -10.00) would be a mismatch.
    job = run_job(files, mapping(), Policy(amount_tolerance_minor=0), tmp_path / "x.csv")
    assert job.reconciliation.summary().total_findings == 0


def test_a_failed_attempt_s_amount_is_not_asked_about(
    tmp_path: Path, files: dict[Role, tuple[Path, str]]
) -> None:
    text = "pid,ref,amount,ccy,status\np1,1001,1.005,USD,failed\np2,1002,2.005,USD,succeeded\n"
    with_status = mapping()
    columns = {**with_status.payments.columns, "payment_status": "status"}
    with_status = with_status.model_copy(
        update={"payments": with_status.payments.model_copy(update={"columns": columns})}
    )
    report = validate_with(files, Role.PAYMENTS, tmp_path / "payments.csv", text, with_status)
    # The failed attempt (row 1) is ignored by the engine: only row 2 is named.
    assert [w.split(", e.g. ")[1][:7] for w in words_of(report.warnings) if "decimals" in w] == [
        "rows 2:"
    ]


def test_an_amount_naming_another_currency_than_its_row_is_named(
    tmp_path: Path, files: dict[Role, tuple[Path, str]]
) -> None:
    rows = [f"{1000 + i},{i}.00,USD,2025-10-01" for i in range(1, 301)]
    rows[4] = "1005,€5.00,USD,2025-10-01"  # data row 5: euros in a row in dollars
    text = "id,total,ccy,date\n" + "\n".join(rows) + "\n"
    report = validate_with(files, Role.ORDERS, tmp_path / "orders.csv", text, mapping())
    assert report.ok
    assert any(
        "1 of 300 values that do not read as amounts (or that name a currency other than their "
        "row's)"
        in w
        and "e.g. rows 5" in w
        for w in words_of(report.warnings)
    )


def test_times_that_cannot_be_checked_are_said_before_approval(
    tmp_path: Path, files: dict[Role, tuple[Path, str]]
) -> None:
    # "Z" (Stripe, Shopify) reads; a two-digit year in a four-digit column does not (it was
    # read as the year 25); an empty date leaves its row unchecked; each is said.
    text = (
        "id,total,ccy,date\n1001,1.00,USD,2025-10-01T10:00:00Z\n"
        "1002,2.00,USD,2025-10-02T10:00:00+02:00\n1003,3.00,USD,25-10-03T10:00:00Z\n"
        "1004,4.00,USD,\n"
    )
    under = mapping()
    zoned = TimestampReading(pattern="%Y-%m-%dT%H:%M:%S%z")
    options = under.orders.options.model_copy(update={"timestamps": {"order_date": zoned}})
    under = under.model_copy(
        update={"orders": under.orders.model_copy(update={"options": options})}
    )
    report = validate_with(files, Role.ORDERS, tmp_path / "orders.csv", text, under)
    [unreadable] = [w for w in words_of(report.warnings) if "do not read as timestamps" in w]
    assert "1 of 3" in unreadable and "e.g. rows 3" in unreadable
    [empty] = [w for w in words_of(report.warnings) if "have no value" in w]
    assert '1 rows with an amount have no value in column "date"' in empty
    assert "e.g. rows 4" in empty
    [unmapped] = [w for w in words_of(report.warnings) if "payments.csv" in w]
    assert "no column is mapped to captured_at" in unmapped
