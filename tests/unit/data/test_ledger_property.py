"""The row ledger under random exports: every data row in exactly one bucket, or no result.

Hypothesis writes an orders file and a payments file the many ways exports are written (BOM,
title lines above the header, a quoted title cell on two lines, quoted cells with line breaks
and delimiters, LF or CRLF, blank lines, a trailing line ending or none) with rows that are
messy the ways exports are messy (amounts that do not read, bad or empty currencies, empty
ids, repeated order ids with the same or another total, repeated payment ids, failed
attempts, zero captures, references with `#`, spaces and case variations). The mapping is
built by hand, so that inference never varies with the data.

The expectations come from the generator, never from the code under test: how many data rows
each file holds, which rows must be unreadable (and why) and which must be ignored (and why).
"""

from __future__ import annotations

import csv
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

from agent.data.ingest import count_records
from agent.data.policy import Policy
from agent.data.reconcile import Reconciliation, connect, reconcile
from agent.data.schema import AmountReading, DatasetMapping, Mapping, ReadingOptions, Role
from agent.errors import InputFileError
from tests.support.csv_strategies import (
    CR,
    CRLF,
    FREE_TEXT,
    LF,
    WrittenFile,
    csv_texts,
    python_records,
    written_files,
)

PROPERTY = settings(
    max_examples=80,
    deadline=None,
    database=None,  # no example database written into the working tree
    derandomize=True,  # CI replays the same examples; set it False locally to explore more
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- the values rows are made of ----------------------------------------------------------

KEYS = ["1001", "1002", "1003", "1004", "1005", "1006", "AB-7", "ab-7"]  # two ids: case counts
TOTALS = ["10.00", "10", "12.50", "99.99", " 5.00 ", "120.00"]
BAD_AMOUNTS = ["1.234,50", "abc", "", " "]  # filled ones do not read under `decimal=.`
GOOD_CURRENCIES = ["USD", "USD", "usd", " EUR ", "EUR"]
BAD_CURRENCIES = ["US Dollars", "XYZ", "€", ""]
KNOWN_CURRENCIES = {"USD", "EUR"}  # the only valid codes the generator writes
EMPTY_IDS = ["", " ", "#"]
FAILED_STATUSES = ["failed", "FAILED", " Declined ", "requires payment method", "Canceled"]
OK_STATUSES = ["succeeded", "succeeded", "succeeded", "succeeded", "paid", "", "refunded"]
ORDER_STATUSES = ["paid", "paid", "paid", "paid", "", "refunded", "voided", " Cancelled "]
FAILED = set(Policy().failed_payment_statuses)
VOIDED = set(Policy().voided_order_statuses)
_NUMBER = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")

ORDER_COLUMNS = {
    "order_id": "order_id",
    "order_amount": "total",
    "currency": "currency",
    "order_status": "status",
}
PAYMENT_COLUMNS = {
    "payment_id": "payment_id",
    "order_id": "order_id",
    "captured_amount": "amount",
    "currency": "currency",
    "payment_status": "status",
}


def _key(order_id: str) -> str | None:
    """An order id as the files compare it: spaces and one leading `#` off; empty is none."""
    text = order_id.strip(" ")
    if text.startswith("#"):
        text = text[1:].lstrip(" ")
    return text or None


def _code(currency: str) -> str | None:
    return currency.strip(" ").upper() or None


def _amount(text: str) -> tuple[bool, Decimal | None]:
    """Whether the amount cell is filled, and its value (None: it does not read)."""
    if text.strip(" ") == "":
        return False, None
    text = text.strip(" ")
    return True, Decimal(text) if _NUMBER.match(text) else None


def _currency_problem(currency: str) -> str | None:
    code = _code(currency)
    if code is None:
        return "missing_currency"
    return None if code in KNOWN_CURRENCIES else "unreadable_currency"


@dataclass(frozen=True)
class Expected:
    """What the generator knows about the rows of one file (1-based data rows)."""

    unreadable: dict[int, str]  # row -> reason
    ignored: dict[int, str]  # row -> reason
    findings: set[int]  # rows that can only be evidence of a finding
    may_ignore: dict[int, str]  # rows that may be ignored (with this reason) or not


def _status(text: str) -> str:
    return text.strip(" ").lower().replace(" ", "_")


def expect_orders(rows: list[dict[str, str]], references: list[str]) -> Expected:
    """Orders: the first row of an id with an amount is the order (its head); a further row
    with no amount, or with the head's amount and currency again, is a line item of it; a
    further row with another amount is a conflicting duplicate. A voided order that no
    payment names is ignored; one that a payment may name may be ignored."""
    first: dict[str, int] = {}
    first_filled: dict[str, int] = {}
    for n, row in enumerate(rows, 1):
        key = _key(row["order_id"])
        if key is not None:
            first.setdefault(key, n)
            if _amount(row["total"])[0]:
                first_filled.setdefault(key, n)
    head_of = {key: first_filled.get(key, n) for key, n in first.items()}
    unreadable: dict[int, str] = {}
    ignored: dict[int, str] = {}
    findings: set[int] = set()
    for n, row in enumerate(rows, 1):
        key = _key(row["order_id"])
        filled, value = _amount(row["total"])
        if key is None:
            if filled:
                unreadable[n] = "empty_order_id"
            else:
                ignored[n] = "no_order_id"
            continue
        head = head_of[key]
        if n == head:
            problem = (
                "empty_amount"
                if not filled
                else "unreadable_amount"
                if value is None
                else _currency_problem(row["currency"])
            )
            if problem is not None:
                unreadable[n] = problem
            continue
        _, head_value = _amount(rows[head - 1]["total"])
        same = (
            head_value is not None
            and value == head_value
            and _code(row["currency"]) == _code(rows[head - 1]["currency"])
        )
        if not filled or same:
            ignored[n] = "line_item_continuation"
        else:
            findings.add(n)
    may_ignore: dict[int, str] = {}
    conflicted = {_key(rows[n - 1]["order_id"]) for n in findings}
    for key, head in head_of.items():
        if (
            head in unreadable
            or key in conflicted
            or _status(rows[head - 1]["status"]) not in VOIDED
        ):
            continue
        if any(key in reference for reference in references):
            may_ignore[head] = "voided_without_payment"
        else:
            ignored[head] = "voided_without_payment"
    return Expected(unreadable, ignored, findings, may_ignore)


def expect_payments(rows: list[dict[str, str]]) -> Expected:
    """Payments: failed attempts and zero captures are ignored; a row without a payment id, an
    amount that reads or a known currency is unreadable."""
    unreadable: dict[int, str] = {}
    ignored: dict[int, str] = {}
    for n, row in enumerate(rows, 1):
        filled, value = _amount(row["amount"])
        status = _status(row["status"])
        problem = (
            "empty_payment_id"
            if not row["payment_id"].strip(" ")
            else "empty_amount"
            if not filled
            else "unreadable_amount"
            if value is None
            else _currency_problem(row["currency"])
        )
        if status in FAILED:
            ignored[n] = "failed_attempt"
        elif problem is not None:
            unreadable[n] = problem
        elif value == 0:
            ignored[n] = "zero_capture"
    return Expected(unreadable, ignored, set(), {})


# --- generated files ----------------------------------------------------------------------


@dataclass(frozen=True)
class Export:
    """One generated file: its rows (as values), its header, and the file written from them."""

    role: Role
    rows: list[dict[str, str]]
    written: WrittenFile
    expected: Expected


def _id_variants(key: str) -> list[str]:
    """How an export may write the id `key`: `#`, spaces around, `# ` (same id after all)."""
    if key.isdigit():
        return [key, key, f"#{key}", f" {key} ", f"# {key}"]
    return [key, key, f"#{key}", f" {key} "]


def _same_value(total: str) -> list[str]:
    """Texts of the same amount as `total` (`10` and `10.00` are one total)."""
    value = Decimal(total.strip(" "))
    texts = [total, f"{value:.2f}", f" {value:.2f} "]
    if value == value.to_integral_value():
        texts.append(str(int(value)))
    return texts


def _money(value: Decimal) -> str:
    return f"{value:.2f}"


def _currency_variants(currency: str) -> list[str]:
    code = currency.strip(" ").upper()
    return [code, code, code.lower(), f" {code.title()} "]


@st.composite
def order_values(draw: st.DrawFn) -> tuple[list[dict[str, str]], dict[str, tuple[str, str]]]:
    """Orders rows, and each order id's true total and currency (what payments refer to).

    An order: a first row (sometimes with an amount or currency that does not read), then
    maybe further rows of the same id: line items (no amount), the same total again, or
    another total (a conflicting duplicate). Rows without an id: line-item detail, or an
    amount under an empty id. Rows sometimes shuffled.
    """
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=6, unique=True))
    rows: list[dict[str, str]] = []
    truth: dict[str, tuple[str, str]] = {}

    def row(order_id: str, total: str, currency: str, status: str = "") -> None:
        note = draw(st.sampled_from(FREE_TEXT))
        rows.append(
            {
                "order_id": order_id,
                "total": total,
                "currency": currency,
                "status": status,
                "note": note,
            }
        )

    for key in keys:
        total = draw(st.sampled_from(TOTALS))
        currency = draw(st.sampled_from(GOOD_CURRENCIES))
        truth[key] = (total, currency)
        flaw = draw(st.sampled_from(["", "", "", "", "", "", "", "", "amount", "currency"]))
        row(
            draw(st.sampled_from(_id_variants(key))),
            draw(st.sampled_from(BAD_AMOUNTS)) if flaw == "amount" else total,
            draw(st.sampled_from(BAD_CURRENCIES)) if flaw == "currency" else currency,
            draw(st.sampled_from(ORDER_STATUSES)),
        )
        extras = draw(st.lists(st.sampled_from(["line_item", "same", "other"]), max_size=2))
        for extra in extras:
            order_id = draw(st.sampled_from(_id_variants(key)))
            if extra == "line_item":
                row(order_id, draw(st.sampled_from(["", " "])), "")
            elif extra == "same":
                row(order_id, draw(st.sampled_from(_same_value(total))), currency)
            else:
                other = draw(st.sampled_from([t for t in TOTALS if t.strip() != total.strip()]))
                row(order_id, other, currency)
    for junk in draw(st.lists(st.sampled_from(["detail", "amount"]), max_size=2)):
        total = draw(st.sampled_from(TOTALS)) if junk == "amount" else ""
        row(draw(st.sampled_from(EMPTY_IDS)), total, draw(st.sampled_from(GOOD_CURRENCIES)))
    if draw(st.booleans()):
        rows = list(draw(st.permutations(rows)))
    return rows, truth


@st.composite
def payment_values(draw: st.DrawFn, truth: dict[str, tuple[str, str]]) -> list[dict[str, str]]:
    """Payments rows for the orders in `truth`: paid in one capture, split in two, captured
    twice, short, in another currency, a failed attempt then a capture, a repeated row of one
    payment, or not paid; then rows that do not read or capture nothing, references to no
    order, to none, or to two orders. Rows sometimes shuffled."""
    rows: list[dict[str, str]] = []
    numbers = iter(range(1, 1000))

    def pay(
        key: str,
        amount: str,
        *,
        currency: str | None = None,
        status: str | None = None,
        payment_id: str | None = None,
        reference: str | None = None,
    ) -> None:
        code = truth[key][1] if currency is None else currency
        rows.append(
            {
                "payment_id": f"ch_{next(numbers)}" if payment_id is None else payment_id,
                "order_id": (
                    draw(st.sampled_from(_id_variants(key))) if reference is None else reference
                ),
                "amount": amount,
                "currency": draw(st.sampled_from(_currency_variants(code))) if code else code,
                "status": draw(st.sampled_from(OK_STATUSES)) if status is None else status,
                "memo": draw(st.sampled_from(FREE_TEXT)),
            }
        )

    plans = ["one", "one", "one", "one", "none", "none", "split", "twice", "short"]
    plans += ["other_currency", "failed_first", "copy"]
    for key, (total, currency) in truth.items():
        value = Decimal(total.strip(" "))
        plan = draw(st.sampled_from(plans))
        if plan == "one":
            pay(key, draw(st.sampled_from(_same_value(total))))
        elif plan == "split":
            half = (value / 2).quantize(Decimal("0.01"))
            pay(key, _money(half))
            pay(key, _money(value - half))
        elif plan == "twice":
            pay(key, total)
            pay(key, total)
        elif plan == "short":
            pay(key, _money(value - 1))
        elif plan == "other_currency":
            pay(key, total, currency="EUR" if currency.strip().upper() == "USD" else "USD")
        elif plan == "failed_first":
            pay(key, total, status=draw(st.sampled_from(FAILED_STATUSES)))
            pay(key, total)
        elif plan == "copy":
            pay(key, total, status="succeeded")
            rows.append(dict(rows[-1]))
    keys = list(truth)
    junk_kinds = ["zero", "bad_amount", "empty_id", "bad_currency", "unknown_ref", "no_ref"]
    junk_kinds += ["two_refs", "failed_unreadable", "same_id_other_amount"]
    for junk in draw(st.lists(st.sampled_from(junk_kinds), max_size=3)):
        key = draw(st.sampled_from(keys))
        total = truth[key][0]
        if junk == "zero":
            pay(key, draw(st.sampled_from(["0.00", "0", " 0 "])))
        elif junk == "bad_amount":
            pay(key, draw(st.sampled_from(BAD_AMOUNTS)))
        elif junk == "empty_id":
            pay(key, total, payment_id=draw(st.sampled_from(["", " "])))
        elif junk == "bad_currency":
            pay(key, total, currency=draw(st.sampled_from(BAD_CURRENCIES)))
        elif junk == "unknown_ref":
            pay(key, total, reference=draw(st.sampled_from(["9999", "#10#01", "ORDER"])))
        elif junk == "no_ref":
            pay(key, total, reference=draw(st.sampled_from(["", " "])))
        elif junk == "two_refs":
            other = draw(st.sampled_from(keys))
            pay(
                key, total, reference=draw(st.sampled_from([f"{key}, {other}", f"#{key} #{other}"]))
            )
        elif junk == "failed_unreadable":
            status = draw(st.sampled_from(FAILED_STATUSES))
            pay(key, draw(st.sampled_from(BAD_AMOUNTS)), status=status, payment_id="")
        elif junk == "same_id_other_amount" and rows:
            again = dict(draw(st.sampled_from(rows)))
            again["amount"] = draw(st.sampled_from(TOTALS))
            rows.append(again)
    if not rows:
        pay(keys[0], truth[keys[0]][0])
    if draw(st.booleans()):
        rows = list(draw(st.permutations(rows)))
    return rows


@st.composite
def written_export(
    draw: st.DrawFn,
    role: Role,
    rows: list[dict[str, str]],
    expected: Expected,
    *,
    mixed_cr: bool = False,
    header_breaks: bool = True,
) -> Export:
    """The file of `role` holding `rows`: its columns in any order, the free-text column's
    name sometimes on two lines (with `header_breaks`: a header cell with a line break, LF or
    CRLF whatever the file's own line ending)."""
    names = list(rows[0])
    free = "memo" if role is Role.PAYMENTS else "note"  # free text: not mapped
    titles = (
        [free, f"{free}{LF}(free text)", f"{free}{CRLF}(free text)"] if header_breaks else [free]
    )
    title = draw(st.sampled_from(titles))
    order = draw(st.permutations(names))
    header = [title if name == free else name for name in order]
    values = [[row[name] for name in order] for row in rows]
    written = draw(written_files(header, values, mixed_cr=mixed_cr))
    return Export(role, rows, written, expected)


@st.composite
def exports(draw: st.DrawFn, *, mixed_cr: bool = False) -> tuple[Export, Export]:
    """An orders file and a payments file that refer to each other; with `mixed_cr`, the
    orders file ends its records with CR alone and with LF (the payments file is plain)."""
    orders, truth = draw(order_values())
    if mixed_cr and len(orders) < 2:
        orders = [*orders, {**orders[0], "total": "", "currency": "", "status": ""}]
    payments = draw(payment_values(truth))
    expected = expect_orders(orders, [row["order_id"] for row in payments])
    return (
        # A mixed file's test is about its record endings: no header cell with a line break.
        draw(
            written_export(
                Role.ORDERS, orders, expected, mixed_cr=mixed_cr, header_breaks=not mixed_cr
            )
        ),
        draw(
            written_export(
                Role.PAYMENTS, payments, expect_payments(payments), header_breaks=not mixed_cr
            )
        ),
    )


def _mapping(orders_header_row: int, payments_header_row: int) -> Mapping:
    """The mapping a person would approve for the generated files, built by hand."""
    amounts = {"order_amount": AmountReading(), "captured_amount": AmountReading()}
    return Mapping(
        orders=DatasetMapping(
            columns=ORDER_COLUMNS,
            options=ReadingOptions(header_row=orders_header_row, amounts=amounts),
        ),
        payments=DatasetMapping(
            columns=PAYMENT_COLUMNS,
            options=ReadingOptions(header_row=payments_header_row, amounts=amounts),
        ),
    )


@contextmanager
def _run(orders: Export, payments: Export) -> Iterator[tuple[Reconciliation, Path]]:
    """Reconcile the two files (written to a scratch folder); yields the run and its folder."""
    note(f"orders file: {orders.written.data!r}")
    note(f"payments file: {payments.written.data!r}")
    with _run_bytes(orders.written, payments.written) as done:
        yield done


@contextmanager
def _run_bytes(orders: WrittenFile, payments: WrittenFile) -> Iterator[tuple[Reconciliation, Path]]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        files = {}
        for role, written in ((Role.ORDERS, orders), (Role.PAYMENTS, payments)):
            path = folder / f"{role.value}.csv"
            path.write_bytes(written.data)
            files[role] = (path, path.name)
        mapping = _mapping(orders.header_row, payments.header_row)
        con = connect()
        try:
            yield reconcile(files, mapping, Policy(), con=con), folder
        finally:
            con.close()


def _exceptions(run: Reconciliation, folder: Path) -> list[dict[str, str]]:
    path = folder / "exceptions.csv"
    written = run.export_csv(path)
    with path.open(newline="", encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    assert written == len(lines)
    return lines


def _rows(cell: str) -> list[int]:
    return [int(n) for n in cell.split()]


# --- the properties -----------------------------------------------------------------------


@PROPERTY
@given(files=exports())
def test_every_row_of_well_formed_files_is_in_exactly_one_bucket(
    files: tuple[Export, Export],
) -> None:
    """Well-formed files are read (never refused), each ledger counts the rows generated, and
    every row is in one place: evidence of a finding, ignored with its reason (exceptions
    CSV), unreadable with its reason (an `unreadable_row` line naming it), or matched."""
    orders, payments = files
    with _run(orders, payments) as (run, folder):
        summary = run.summary()
        lines = _exceptions(run, folder)
    ledgers = {ledger.role: ledger for ledger in summary.ledger}
    unreadable_rows = {
        Role.ORDERS: summary.unreadable_orders,
        Role.PAYMENTS: summary.unreadable_payments,
    }
    for export in (orders, payments):
        role = export.role
        ledger = ledgers[role]
        records = export.written.records
        expected = export.expected
        column = f"{role.value}_rows"
        # The ledger counts the rows the generator wrote, and every one of them is somewhere.
        assert ledger.records == records, ledger.line()
        assert ledger.accounted == records, ledger.line()
        # Where each row is listed: evidence of a finding, or ignored (once, with a reason).
        evidence: set[int] = set()
        ignored: dict[int, str] = {}
        unreadable_lines: dict[int, list[str]] = {}
        for line in lines:
            rows = _rows(line[column])
            assert all(1 <= n <= records for n in rows), (line, records)
            if line["category"] == "ignored":
                other = "payments_rows" if role is Role.ORDERS else "orders_rows"
                if not rows:
                    continue
                assert len(rows) == 1 and not line[other], line
                assert rows[0] not in ignored, f"row {rows[0]} ignored twice"
                ignored[rows[0]] = line["reason"]
                continue
            evidence.update(rows)
            if line["category"] == "unreadable_row":
                for n in rows:
                    unreadable_lines.setdefault(n, []).append(line["reason"])
        unreadable = set(unreadable_rows[role])
        assert not evidence & set(ignored), "a row both ignored and evidence of a finding"
        assert unreadable <= evidence, "an unreadable row without its unreadable_row finding"
        assert ledger.findings == len(evidence - unreadable), ledger.line()
        assert sum(ledger.ignored.values()) == len(ignored), ledger.line()
        assert sum(ledger.unreadable.values()) == len(unreadable), ledger.line()
        assert ledger.matched == records - len(evidence | set(ignored)), ledger.line()
        # What the generator knows: rows made unreadable, ignored rows, conflicting duplicates.
        assert ledger.ignored == dict(Counter(ignored.values())), ledger.line()
        for n, reason in expected.ignored.items():
            assert ignored.get(n) == reason, (n, reason, ignored.get(n))
        for n, reason in ignored.items():
            assert reason == expected.ignored.get(n, expected.may_ignore.get(n)), (n, reason)
        assert unreadable == set(expected.unreadable), (sorted(unreadable), expected.unreadable)
        assert ledger.unreadable == dict(Counter(expected.unreadable.values()))
        for n, reason in expected.unreadable.items():
            assert unreadable_lines.get(n) == [reason], (n, reason, unreadable_lines.get(n))
        assert expected.findings <= evidence - unreadable


@PROPERTY
@given(files=exports(mixed_cr=True))
def test_a_file_mixing_cr_and_lf_line_endings_is_refused_not_miscounted(
    files: tuple[Export, Export],
) -> None:
    """An orders file whose records end with CR alone and with LF is refused with a typed
    input error naming it; if it is read after all, every row is counted exactly (a
    LedgerError or a wrong count fails)."""
    orders, payments = files
    refused: InputFileError | None = None
    try:
        with _run(orders, payments) as (run, _):
            ledgers = {ledger.role: ledger for ledger in run.summary().ledger}
    except InputFileError as error:
        refused = error
    if refused is not None:
        assert refused.file_name == "orders.csv", str(refused)
        return
    # Read after all: then every row is counted exactly (never a silent wrong count).
    for export in (orders, payments):
        ledger = ledgers[export.role]
        assert ledger.records == export.written.records, ledger.line()
        assert ledger.accounted == ledger.records, ledger.line()


@PROPERTY
@given(text=csv_texts(), bom=st.booleans())
@example(text="\r\na,b\r\n", bom=True)  # a BOM, then a blank line: found by hypothesis
def test_count_records_agrees_with_pythons_csv_reader(text: str, bom: bool) -> None:
    data = ("\ufeff" if bom else "").encode() + text.encode("utf-8")
    note(f"file: {data!r}")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "f.csv"
        path.write_bytes(data)
        assert count_records(path) == python_records(data.decode("utf-8-sig"))


CHUNK = 1 << 22  # count_records reads the file in chunks of this many bytes


@settings(PROPERTY, max_examples=60)
@given(text=csv_texts(endings=(LF, CRLF, CR)), data=st.data())
def test_count_records_agrees_across_its_chunk_boundary(text: str, data: st.DataObject) -> None:
    """The same, with the 4 MiB chunk boundary of `count_records` falling inside the text
    (CR-only endings too: a CRLF or a quote cut in two by the boundary)."""
    tail = text.encode("utf-8")
    cut = data.draw(st.integers(0, len(tail)), label="boundary before tail byte")
    line = b"x" * 1023 + b"\n"
    filler_size = CHUNK - cut
    filler = line * (filler_size // len(line) - 1)
    filler += b"y" * (filler_size - len(filler) - 1) + b"\n"
    assert len(filler) == filler_size
    note(f"tail: {tail!r}, boundary before tail byte {cut}")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "f.csv"
        path.write_bytes(filler + tail)
        assert count_records(path) == python_records((filler + tail).decode("utf-8"))


# --- the smallest files hypothesis found, as examples -------------------------------------

# A header cell with a line break other than the file's record ending: Excel writes CRLF
# records with LF inside cells (Alt+Enter). One data row each, which the payment matches.
HEADER_BREAKS = {
    "lf-in-a-header-cell-of-a-crlf-file": (
        b'payment_id,order_id,amount,currency,status,"memo\n(free text)"\r\n'
        b"ch_1,1001,10.00,USD,succeeded,x\r\n"
    ),
    "crlf-in-a-header-cell-of-an-lf-file": (
        b'payment_id,order_id,amount,currency,status,"memo\r\n(free text)"\n'
        b"ch_1,1001,10.00,USD,succeeded,x\n"
    ),
    "crlf-in-the-first-header-cell-of-an-lf-file-with-a-bom": (
        b'\xef\xbb\xbf"memo\r\n(free text)",payment_id,order_id,amount,currency,status\n'
        b"x,ch_1,1001,10.00,USD,succeeded\n"
    ),
}


@pytest.mark.parametrize("data", HEADER_BREAKS.values(), ids=HEADER_BREAKS.keys())
def test_a_line_break_in_a_header_cell_keeps_every_row(data: bytes) -> None:
    orders = WrittenFile(b"order_id,total,currency,status,note\n1001,10.00,USD,paid,\n", 1, 1, LF)
    payments = WrittenFile(data, 1, 1, LF)
    with _run_bytes(orders, payments) as (run, _):
        ledgers = run.summary().ledger
    assert [(ledger.records, ledger.matched) for ledger in ledgers] == [(1, 1), (1, 1)]
