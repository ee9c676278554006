"""The header line of an export (issue 37, "Header"): detected past title lines, or given.

Title and note lines above the header are skipped by the automatic detection, also when a
spreadsheet padded them with delimiters; a block of account lines padded as wide as the table
(a bank statement saved again) is taken for the header, and a person's `header_row=N` answer
makes the proposal, the validation and the reconciliation read the file from line N. An answer
that cannot be the header is refused in words naming the file. The fixtures in
tests/fixtures/header_rows/ follow published layouts (README.md there names them).
"""

from __future__ import annotations

import csv
import io
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from agent.data.cache import Fetch
from agent.data.ingest import CsvSample, inspect_csv, inspect_head, layout_from_options
from agent.data.mapping import infer_mapping
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.samples import SampleCache
from agent.data.schema import Role
from agent.data.wording import words, words_of
from agent.errors import MappingError, MissingHeaderError
from bot.presentation.readings import describe_reading

FIXTURES = Path(__file__).parents[1] / "fixtures" / "header_rows"
AMAZON = FIXTURES / "amazon_date_range.csv"
DKB = FIXTURES / "dkb_girokonto.csv"
RESAVED = FIXTURES / "dkb_girokonto_resaved.csv"
ORDERS = FIXTURES / "woocommerce_orders.csv"

AMAZON_COLUMNS = (
    "date/time",
    "settlement id",
    "type",
    "order id",
    "sku",
    "description",
    "quantity",
    "marketplace",
    "fulfillment",
    "order city",
    "order state",
    "order postal",
    "product sales",
    "shipping credits",
    "gift wrap credits",
    "promotional rebates",
    "sales tax collected",
    "Marketplace Facilitator Tax",
    "selling fees",
    "fba fees",
    "other transaction fees",
    "other",
    "total",
)
DKB_COLUMNS = (
    "Buchungsdatum",
    "Wertstellung",
    "Status",
    "Zahlungspflichtige*r",
    "Zahlungsempfänger*in",
    "Verwendungszweck",
    "Umsatztyp",
    "IBAN",
    "Betrag (€)",
    "Gläubiger-ID",
    "Mandatsreferenz",
    "Kundenreferenz",
)
# What a person answers for the re-saved bank statement: where its header is, and what the
# proposal asks of a bank statement (which column names each transfer, the currency).
ANSWERS = {Role.PAYMENTS: {"header_row": "5", "payment_id": "Kundenreferenz", "currency": "EUR"}}


def _sample(path: Path, header_row: int | None = None) -> CsvSample:
    return inspect_csv(path, path.name, header_row=header_row)


def _padded(source: Path, target: Path) -> Path:
    """`source` as a spreadsheet saves it again: every line as wide as the widest one."""
    with source.open(encoding="utf-8", newline="") as handle:
        records = list(csv.reader(handle))
    width = max(map(len, records))
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows((r + [""] * width)[:width] for r in records)
    target.write_text(out.getvalue(), encoding="utf-8", newline="")
    return target


# (a) title lines above the header are detected ---------------------------------------------


@pytest.mark.parametrize(
    ("path", "line", "columns", "rows"),
    [(AMAZON, 8, AMAZON_COLUMNS, 8), (DKB, 5, DKB_COLUMNS, 8)],
    ids=["amazon_date_range", "dkb_girokonto"],
)
def test_lines_above_the_header_are_skipped_and_said(
    path: Path, line: int, columns: tuple[str, ...], rows: int
) -> None:
    sample = _sample(path)
    assert sample.layout.header_line + 1 == line
    assert sample.layout.columns == columns
    assert len(sample.rows) == rows
    assert f"the header is line {line}; the {line - 1} line(s) above it" in words(
        sample.layout.notes[-1]
    )


def test_title_lines_padded_with_delimiters_are_skipped(tmp_path: Path) -> None:
    padded = _padded(AMAZON, tmp_path / "amazon_date_range.csv")
    assert padded.read_text(encoding="utf-8").startswith('"Includes Amazon Marketplace,')
    assert padded.read_text(encoding="utf-8").splitlines()[2] == "Definitions:" + "," * 22
    sample = _sample(padded)
    assert (sample.layout.header_line, sample.layout.columns) == (7, AMAZON_COLUMNS)
    assert [row[3] for row in sample.rows[:2]] == ["113-0013318-7697855", "114-2204871-1150632"]


def test_the_proposal_says_the_detected_header_line() -> None:
    proposal = infer_mapping(_sample(ORDERS), _sample(DKB))
    assert proposal.payments.file_name == DKB.name
    assert proposal.payments.options.header_row == 5
    assert any(n.startswith("the header is line 5;") for n in words_of(proposal.payments.notes))
    assert proposal.orders.options.header_row == 1


# (b) detection is fooled; header_row fixes it ----------------------------------------------


def test_a_padded_account_block_is_taken_for_the_header_without_an_answer() -> None:
    sample = _sample(RESAVED)
    assert sample.layout.header_line == 0
    assert sample.layout.columns[:2] == ("Girokonto", "DE12 1203 0000 1020 3040 50")
    assert len(sample.rows) == 11  # two account lines and the real header read as rows
    proposal = infer_mapping(_sample(ORDERS), sample)
    assert proposal.payments.columns[0] == "Girokonto"
    assert (proposal.payments.options.header_row, proposal.payments.sampled_rows) == (1, 11)


@pytest.mark.parametrize("payments_first", [False, True])
def test_a_header_row_answer_reads_the_file_from_that_line(payments_first: bool) -> None:
    samples = (_sample(ORDERS), _sample(RESAVED))
    pair = samples[::-1] if payments_first else samples
    proposal = infer_mapping(*pair, answers={Role.PAYMENTS: {"header_row": "5"}})
    payments = proposal.payments
    assert payments.file_name == RESAVED.name
    assert payments.columns == list(DKB_COLUMNS)
    assert payments.options.header_row == 5
    assert payments.sampled_rows == 8
    assert "the header is line 5, as a person answered; the 4 line(s) above it" in " ".join(
        words_of(payments.notes)
    )
    chosen = {c.field: c.column for c in payments.choices}
    assert chosen["captured_amount"] == "Betrag (€)"
    assert chosen["order_id"] == "Verwendungszweck"
    assert payments.options.amounts["captured_amount"].decimal == ","
    assert proposal.orders.options.header_row == 1  # the other file is read as it was


def test_the_request_says_which_line_is_the_header() -> None:
    mapping = infer_mapping(_sample(ORDERS), _sample(RESAVED), answers=ANSWERS).mapping
    assert mapping is not None
    assert "header on line 5" in describe_reading(mapping.payments)
    assert "header on line" not in describe_reading(mapping.orders)


def test_two_header_answers_never_share_a_sample(tmp_path: Path) -> None:
    # The re-saved statement with a row of group names added above the column names: line 5
    # and line 6 can both be read as a header, and neither is the one detected (line 1).
    lines = RESAVED.read_text(encoding="utf-8-sig").splitlines()
    groups = "Buchung;;;Gegenseite;;;;;Betrag;;;Referenz"
    grouped = tmp_path / "girokonto.csv"
    grouped.write_text("\r\n".join([*lines[:4], groups, *lines[4:]]) + "\r\n", encoding="utf-8")
    fetched: list[str] = []

    def fetch(path: Path) -> Fetch:
        def opened() -> AbstractContextManager[Path]:
            fetched.append(path.name)
            return nullcontext(path)

        return opened

    cache = SampleCache()
    digests = ("sha256:orders", "sha256:girokonto")
    pair = (
        cache.sample(digests[0], ORDERS.name, fetch(ORDERS)),
        cache.sample(digests[1], grouped.name, fetch(grouped)),
    )
    assert pair[1].layout.columns[0] == "Girokonto"
    line5 = cache.proposal(pair, digests, {Role.PAYMENTS: {"header_row": "5"}})
    line6 = cache.proposal(pair, digests, {Role.PAYMENTS: {"header_row": "6"}})
    assert line5.payments.columns[:4] == [
        "Buchung",
        "(unnamed column 2)",
        "(unnamed column 3)",
        "Gegenseite",
    ]
    assert line6.payments.columns == list(DKB_COLUMNS)
    assert (line5.payments.options.header_row, line6.payments.options.header_row) == (5, 6)
    kept = cache.sample(digests[1], grouped.name, fetch(grouped), header_row=6)
    assert kept.layout.columns == DKB_COLUMNS
    assert cache.reheaded(digests[1], pair[1], 6) is kept  # read once, kept by digest and line
    assert cache.sample(digests[1], grouped.name, fetch(grouped)).layout.header_line == 0
    assert fetched == [ORDERS.name, grouped.name]  # read again from the kept head, not fetched
    fresh = SampleCache()  # a process that never inspected the file reads it with the answer
    assert fresh.sample(digests[1], grouped.name, fetch(grouped), header_row=6) == kept
    assert fetched[-1] == grouped.name


# (c) an answer that cannot be the header is refused in words --------------------------------


@pytest.mark.parametrize("value", ["0", "-2", "3.5", "five", "", " ", "٥"])
def test_a_header_row_that_is_not_a_line_number_is_refused(value: str) -> None:
    with pytest.raises(MappingError) as refused:
        infer_mapping(
            _sample(ORDERS), _sample(RESAVED), answers={Role.PAYMENTS: {"header_row": value}}
        )
    assert str(refused.value) == (
        f"{RESAVED.name}: header_row is the line number of the header, a whole number from 1 "
        f'(the first line), not "{value}"'
    )


@pytest.mark.parametrize(
    ("path", "line", "message"),
    [
        (RESAVED, 14, "header_row 14 is past the end of the file, which has 13 line(s)"),
        (RESAVED, 900, "header_row 900 is past the end of the file, which has 13 line(s)"),
        (RESAVED, 4, "line 4 is empty, so it cannot be the header (line 5 is the next one"),
        (DKB, 4, "line 4 is empty, so it cannot be the header (line 5 is the next one"),
        (RESAVED, 6, "line 6 holds values (a number, an amount or a date), not only column"),
        (RESAVED, 3, "line 3 holds values"),
        (AMAZON, 2, "line 2 has 1 cell(s) but the rows below it have 23, so it is not their"),
    ],
)
def test_a_line_that_cannot_be_the_header_is_refused_naming_the_file(
    path: Path, line: int, message: str
) -> None:
    with pytest.raises(MappingError) as refused:
        _sample(path, header_row=line)
    assert str(refused.value).startswith(f"{path.name}: {message}")


@pytest.mark.parametrize(
    ("value", "message"),
    [("14", "header_row 14 is past the end of the file"), ("4", "line 4 is empty")],
)
def test_a_person_reads_why_their_header_line_cannot_be_read(value: str, message: str) -> None:
    answers = {Role.PAYMENTS: {"header_row": value}}
    with pytest.raises(MappingError, match=f"^{RESAVED.name}: {message}"):
        infer_mapping(_sample(RESAVED), _sample(ORDERS), answers=answers)


def test_a_line_past_the_head_read_is_refused_as_such() -> None:
    head = RESAVED.read_bytes()
    cut = head[: head.rindex(b"\n") - 1]  # 12 whole lines and most of the 13th
    with pytest.raises(MappingError, match="past the first 13 lines, the part of the file read"):
        inspect_head(cut, len(head) + 10_000, RESAVED.name, header_row=40)


def test_the_whole_read_refuses_a_header_line_that_is_not_there() -> None:
    read = {"encoding": "utf-8", "delimiter": ";"}
    assert layout_from_options(RESAVED, "b.csv", **read, header_row=5).columns == DKB_COLUMNS
    with pytest.raises(MissingHeaderError, match=r"^b\.csv: line 40, where the approved reading"):
        layout_from_options(RESAVED, "b.csv", **read, header_row=40)
    with pytest.raises(MissingHeaderError):  # a line far past the end is not looked for
        layout_from_options(RESAVED, "b.csv", **read, header_row=10**12)
    with pytest.raises(MappingError, match=r"^b\.csv: header_row is the line number"):
        layout_from_options(RESAVED, "b.csv", **read, header_row=0)


# (d) end to end: validation and reconciliation read the rows below the answered line ------


def test_the_answered_header_line_is_validated_and_reconciled_row_by_row(tmp_path: Path) -> None:
    proposal = infer_mapping(_sample(ORDERS), _sample(RESAVED), answers=ANSWERS)
    assert proposal.clarifications == []
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.payments.options.header_row == 5
    assert mapping.payments.columns["order_id"] == "Verwendungszweck"
    files = {Role.ORDERS: (ORDERS, ORDERS.name), Role.PAYMENTS: (RESAVED, RESAVED.name)}
    report = load_and_validate(connect(), files, mapping, policy=Policy())
    assert report.errors == []
    assert report.rows == {"orders": 8, "payments": 8}  # not the 11 rows below line 1
    assert "7 of 8 payment references in dkb_girokonto_resaved.csv name an order" in " ".join(
        words_of(report.routine)
    )
    exceptions = tmp_path / "exceptions.csv"
    run = run_job(files, mapping, Policy(), exceptions).reconciliation
    summary = run.summary()
    assert {k: v for k, v in summary.counts.items() if v} == {
        "amount_mismatch": 1,
        "capture_without_order": 1,
    }
    payments = next(line for line in summary.ledger if line.role is Role.PAYMENTS)
    assert (payments.records, payments.matched, payments.findings) == (8, 6, 2)
    with exceptions.open(encoding="utf-8", newline="") as handle:
        rows = {r["category"]: r for r in csv.DictReader(handle)}
    # Data rows are counted from the answered header: the transfer for 5299 is the 8th.
    assert (
        rows["capture_without_order"]["payments_rows"],
        rows["amount_mismatch"]["order_ids"],
    ) == (
        "8",
        "5206",
    )
    assert rows["capture_without_order"]["payment_ids"] == "E2E-251010-4478"
