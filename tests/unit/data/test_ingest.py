"""Reading real exports from bytes: encodings, delimiters, preambles, and every malformed file."""

from __future__ import annotations

import codecs
from pathlib import Path

import duckdb
import pytest

from agent.data.ingest import CsvLayout, count_records, inspect_csv, read_table
from agent.data.ingest.layout import layout_from_options
from agent.data.wording import words
from agent.errors import (
    CellTooLargeError,
    DuplicateHeaderError,
    EmptyFileError,
    EncodingError,
    FileTooLargeError,
    HeaderOnlyError,
    InputFileError,
    MissingHeaderError,
    NotCsvError,
    RaggedRowsError,
    UnclosedQuoteError,
)

MALFORMED = Path(__file__).parents[2] / "fixtures" / "malformed"
LIMIT = 50 << 20


def read_whole(path: Path, name: str | None = None, max_bytes: int = LIMIT) -> CsvLayout:
    """The full read path: sniff the layout, then read every row with DuckDB."""
    sample = inspect_csv(path, name or path.name, max_bytes=max_bytes)
    con = duckdb.connect()
    return read_table(con, "t", "SELECT * FROM {source}", path, sample.layout)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


CORPUS = {
    "empty.csv": (EmptyFileError, None),
    "blank_lines.csv": (EmptyFileError, None),
    "header_only.csv": (HeaderOnlyError, None),
    "header_only_bom_crlf.csv": (HeaderOnlyError, None),
    "excel_workbook.csv": (NotCsvError, None),
    "legacy_excel.csv": (NotCsvError, None),
    "report.csv": (NotCsvError, None),
    "screenshot.csv": (NotCsvError, None),
    "compressed.csv": (NotCsvError, None),
    "binary_blob.csv": (NotCsvError, None),
    "one_column.csv": (NotCsvError, None),
    "preamble_only.csv": (NotCsvError, None),
    "no_header.csv": (MissingHeaderError, None),
    "duplicate_header.csv": (DuplicateHeaderError, None),
    "duplicate_header_case.csv": (DuplicateHeaderError, None),
    "ragged_extra_cell.csv": (RaggedRowsError, 2),
    "ragged_missing_cell.csv": (RaggedRowsError, 2),
    "ragged_semicolon.csv": (RaggedRowsError, 2),
    "unclosed_quote.csv": (UnclosedQuoteError, 2),
    "not_text.csv": (EncodingError, None),
    "utf16_without_bom.csv": (NotCsvError, None),
}


def test_the_corpus_has_every_file_listed() -> None:
    assert sorted(p.name for p in MALFORMED.iterdir()) == sorted(CORPUS)
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_each_malformed_file_gives_its_typed_error_naming_the_file(name: str) -> None:
    error_type, row = CORPUS[name]
    with pytest.raises(InputFileError) as caught:
        read_whole(MALFORMED / name, f"upload-{name}")
    assert type(caught.value) is error_type
    assert str(caught.value).startswith(f"upload-{name}")
    assert caught.value.row == row
    if row is not None:
        assert f"row {row}" in str(caught.value)
    assert "Traceback" not in str(caught.value)


def test_a_file_over_the_upload_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = write(tmp_path, "big.csv", b"a,b\n" + b"1,2\n" * 1000)
    with pytest.raises(FileTooLargeError, match="over the upload limit"):
        read_whole(path, max_bytes=1000)


def test_a_cell_over_the_limit_names_its_row(tmp_path: Path) -> None:
    data = b'id,note\n1,ok\n2,"' + b"x" * (2 << 20) + b'"\n3,ok\n'
    with pytest.raises(CellTooLargeError) as caught:
        read_whole(write(tmp_path, "huge.csv", data))
    assert caught.value.row == 2


def test_a_ragged_row_past_the_sample_is_found_by_the_full_read(tmp_path: Path) -> None:
    rows = [f"{i},{i}.00,USD" for i in range(1, 30_001)]
    rows[25_000 - 1] = "25000,1,000.00,USD"
    data = ("order_id,total,currency\n" + "\n".join(rows) + "\n").encode()
    with pytest.raises(RaggedRowsError) as caught:
        read_whole(write(tmp_path, "late.csv", data))
    assert caught.value.row == 25_000


ORDERS = "order_id,total,currency\n1001,25.00,USD\n1002,12.50,EUR\n"


@pytest.mark.parametrize(
    ("data", "encoding", "note"),
    [
        (ORDERS.encode(), "utf-8", None),
        (codecs.BOM_UTF8 + ORDERS.encode(), "utf-8", None),
        (codecs.BOM_UTF16_LE + ORDERS.encode("utf-16-le"), "utf-16", "UTF-16"),
        (codecs.BOM_UTF16_BE + ORDERS.encode("utf-16-be"), "utf-16", "UTF-16"),
        (ORDERS.replace("1002", "Café 1002").encode("cp1252"), "cp1252", "Windows-1252"),
    ],
)
def test_encodings_are_read_and_a_fallback_says_so(
    tmp_path: Path, data: bytes, encoding: str, note: str | None
) -> None:
    path = write(tmp_path, "orders.csv", data)
    sample = inspect_csv(path, "orders.csv", max_bytes=LIMIT)
    assert sample.layout.encoding == encoding
    assert sample.layout.columns == ("order_id", "total", "currency")
    assert (note is None) == (not sample.layout.notes)
    if note:
        assert note in words(sample.layout.notes[0])
    con = duckdb.connect()
    read_table(con, "t", "SELECT * FROM {source}", path, sample.layout)
    assert con.execute("SELECT c0, c1 FROM t ORDER BY rowid").fetchall()[0] == ("1001", "25.00")


def test_invalid_utf8_late_in_the_file_falls_back_to_windows_1252(tmp_path: Path) -> None:
    head = "order_id,total,note\n" + "".join(f"{i},1.00,plain\n" for i in range(400_000))
    data = head.encode() + "9,1.00,Caf\xe9\n".encode("cp1252")
    path = write(tmp_path, "late.csv", data)
    layout = read_whole(path)
    assert layout.encoding == "utf-8+cp1252"
    assert "Windows-1252" in words(layout.notes[-1])
    con = duckdb.connect()
    read_table(con, "t", "SELECT * FROM {source}", path, layout)
    assert con.execute("SELECT c2 FROM t WHERE c2 LIKE 'Caf%'").fetchall() == [("Café",)]


def test_a_utf8_file_with_a_stray_windows_1252_byte_keeps_its_utf8_letters(
    tmp_path: Path,
) -> None:
    # Read whole as Windows-1252, "MÜ-1002" would be "MÃœ-1002" and match no payment.
    data = "order_id,total,note\n1001,1.00,a\nMÜ-1002,2.00,b\n".encode() + b"1003,3.00,caf\xe9\n"
    path = write(tmp_path, "orders.csv", data)
    sample = inspect_csv(path, "orders.csv", max_bytes=LIMIT)
    assert sample.layout.encoding == "utf-8+cp1252"
    assert [row[0] for row in sample.rows] == ["1001", "MÜ-1002", "1003"]
    con = duckdb.connect()
    read_table(con, "t", "SELECT * FROM {source}", path, sample.layout)
    assert con.execute("SELECT c0, c2 FROM t").fetchall() == [
        ("1001", "a"),
        ("MÜ-1002", "b"),
        ("1003", "café"),
    ]


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_delimiters_and_line_endings(tmp_path: Path, delimiter: str, newline: str) -> None:
    lines = [["id", "amount", "note"], ["ch_1", "1,250.00", 'said "hi"'], ["ch_2", "3", "x"]]
    text = newline.join(
        delimiter.join(f'"{c.replace(chr(34), chr(34) * 2)}"' if i else c for i, c in enumerate(r))
        for r in lines
    )
    path = write(tmp_path, "p.csv", (text + newline).encode())
    sample = inspect_csv(path, "p.csv", max_bytes=LIMIT)
    assert sample.layout.delimiter == delimiter
    assert sample.rows[0] == ["ch_1", "1,250.00", 'said "hi"']
    con = duckdb.connect()
    read_table(con, "t", "SELECT * FROM {source}", path, sample.layout)
    assert con.execute("SELECT c2 FROM t WHERE rowid = 0").fetchone() == ('said "hi"',)


def test_a_preamble_above_the_header_is_skipped(tmp_path: Path) -> None:
    data = (
        b"Payments report\nGenerated 2025-10-07 by Finance\nTotal,1250.00\n\n"
        b"id,amount,currency,order\nch_1,25.00,usd,#1001\nch_2,12.50,usd,#1002\n"
    )
    path = write(tmp_path, "p.csv", data)
    sample = inspect_csv(path, "p.csv", max_bytes=LIMIT)
    assert sample.layout.columns == ("id", "amount", "currency", "order")
    assert sample.layout.header_line == 4
    con = duckdb.connect()
    read_table(con, "t", "SELECT * FROM {source}", path, sample.layout)
    assert con.execute("SELECT rowid + 1, c0 FROM t ORDER BY rowid").fetchall() == [
        (1, "ch_1"),
        (2, "ch_2"),
    ]


@pytest.mark.parametrize(
    ("header", "row_end", "columns"),
    [
        # Every data row ends in a comma the header does not: a sixth, empty column.
        (
            "order_id,total,currency,status",
            ",",
            ("order_id", "total", "currency", "status", "(unnamed column 5)"),
        ),
        # The header ends in a comma its rows do not.
        ("order_id,total,currency,status,", "", ("order_id", "total", "currency", "status")),
    ],
)
def test_a_header_one_delimiter_off_its_rows_is_still_the_header(
    tmp_path: Path, header: str, row_end: str, columns: tuple[str, ...]
) -> None:
    rows = [f"{1000 + i},{i}.00,USD,paid{row_end}" for i in range(1, 7)]
    path = write(tmp_path, "o.csv", ("\n".join([header, *rows]) + "\n").encode())
    sample = inspect_csv(path, "o.csv", max_bytes=LIMIT)
    assert sample.layout.header_line == 0
    assert sample.layout.columns == columns
    assert [row[0] for row in sample.rows] == [str(1000 + i) for i in range(1, 7)]
    # The layout the approved options give reads the header the same way.
    assert (
        layout_from_options(path, "o.csv", encoding="utf-8", delimiter=",", header_row=1).columns
        == columns
    )
    layout = read_whole(path, "o.csv")
    assert layout.records == 6


def test_a_title_line_above_a_header_that_ends_in_a_delimiter_stays_a_preamble(
    tmp_path: Path,
) -> None:
    # Every line of the table ends in a comma, the title above it does not: the title is not
    # a header one delimiter short, since the first record of the table's width holds names.
    data = b"Payments export,2025\nid,amount,\np1,1.00,\np2,2.00,\n"
    path = write(tmp_path, "p.csv", data)
    sample = inspect_csv(path, "p.csv", max_bytes=LIMIT)
    assert sample.layout.header_line == 1
    assert sample.layout.columns == ("id", "amount", "(unnamed column 3)")
    assert [row[0] for row in sample.rows] == ["p1", "p2"]


@pytest.mark.parametrize(
    "data",
    [
        # The first data row lacks the trailing delimiter the others have.
        b"order_id,status,amount\nA1,paid,50.00\nA2,paid,20.00,\nA3,paid,30.00,\n",
        # A totals line above a file without a header.
        b"Totals,3 orders,100.00,USD\n1001,50.00,USD,2025-10-01 10:00:00,\n"
        b"1002,20.00,USD,2025-10-02 10:00:00,\n1003,30.00,USD,2025-10-03 10:00:00,\n",
    ],
)
def test_rows_of_several_widths_above_the_table_are_refused_not_dropped(
    tmp_path: Path, data: bytes
) -> None:
    path = write(tmp_path, "o.csv", data)
    with pytest.raises(MissingHeaderError) as caught:
        inspect_csv(path, "o.csv", max_bytes=LIMIT)
    assert "holds values, not column names" in str(caught.value)


def test_a_header_above_rows_with_amounts_in_euros_and_a_trailing_delimiter(
    tmp_path: Path,
) -> None:
    data = "Bestellnummer;Datum;Betrag\nA-1001;01 Okt 2025;50,00 €;\nA-1002;02 Okt 2025;20,00 €;\n"
    path = write(tmp_path, "o.csv", data.encode())
    sample = inspect_csv(path, "o.csv", max_bytes=LIMIT)
    assert sample.layout.header_line == 0
    assert [row[0] for row in sample.rows] == ["A-1001", "A-1002"]


def test_a_first_row_of_ids_iso_times_and_amounts_is_not_taken_for_a_header(
    tmp_path: Path,
) -> None:
    # Rows with an extra, filled cell under a header one column short: the first row of the
    # table's width holds values (ISO times among them), so the file is refused, not read
    # with that row as its column names.
    rows = [f"{1000 + i},2025-10-01 10:00:00,{i}.00,USD,paid,{i}" for i in range(1, 5)]
    path = write(
        tmp_path,
        "o.csv",
        ("order_id,created_at,total,currency,status\n" + "\n".join(rows) + "\n").encode(),
    )
    with pytest.raises(MissingHeaderError):
        inspect_csv(path, "o.csv", max_bytes=LIMIT)


def test_a_short_title_line_above_a_full_header_stays_a_preamble(tmp_path: Path) -> None:
    # Two cells above a header whose rows fill every column: a title, not a header.
    data = b"Orders,2025-10\nid,total,currency,note\n1,2.00,USD,\n2,3.00,USD,x\n"
    path = write(tmp_path, "o.csv", data)
    sample = inspect_csv(path, "o.csv", max_bytes=LIMIT)
    assert sample.layout.header_line == 1
    assert sample.layout.columns == ("id", "total", "currency", "note")


def test_quoted_newlines_do_not_shift_data_row_numbers(tmp_path: Path) -> None:
    data = b'id,note\n1,"two\nlines"\n\n2,plain\n3,x\n'
    path = write(tmp_path, "n.csv", data)
    sample = inspect_csv(path, "n.csv", max_bytes=LIMIT)
    con = duckdb.connect()
    read_table(con, "t", "SELECT * FROM {source}", path, sample.layout)
    assert con.execute("SELECT rowid + 1, c0 FROM t ORDER BY rowid").fetchall() == [
        (1, "1"),
        (2, "2"),
        (3, "3"),
    ]


def test_a_hundred_thousand_columns_is_a_clear_error_not_a_reading(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    header = ",".join(f"c{i}" for i in range(100_000))
    wide.write_text(header + "\n" + ",".join("1" for _ in range(100_000)) + "\n")
    with pytest.raises(NotCsvError, match="100,000 columns"):
        inspect_csv(wide, "wide.csv", max_bytes=1 << 30)


def test_count_records_agrees_with_the_rows_duckdb_reads(tmp_path: Path) -> None:
    text = '"Title\r\nline two"\r\na,"b\r\nc"\r\n1,"x\ny"\r\n\r\n2,3\r\n3,"4"'
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode())
    assert count_records(path) == 5


def test_a_file_that_starts_as_utf16_but_is_not_is_refused_by_name(tmp_path: Path) -> None:
    # A byte-order mark, then a lone surrogate: no UTF-16 decoder reads it.
    data = codecs.BOM_UTF16_LE + "id,amount\n".encode("utf-16-le") + b"\x00\xd8x\x00"
    with pytest.raises(EncodingError, match=r"exported\.csv: the file starts as UTF-16"):
        inspect_csv(write(tmp_path, "exported.csv", data), "exported.csv", max_bytes=LIMIT)


def test_an_inch_mark_inside_a_cell_is_text_not_a_quote(tmp_path: Path) -> None:
    # The byte scan takes the quote for an opening one; DuckDB and Python's csv module read it
    # as text, and agree on the six rows: the read goes on.
    notes = ["x", "x", '5" screen', "x", "x", "x"]
    rows = "".join(f"{1000 + i},{i}.00,USD,{note}\n" for i, note in enumerate(notes))
    path = write(tmp_path, "orders.csv", b"order_id,total,currency,note\n" + rows.encode())
    assert count_records(path) != 7
    assert read_whole(path).records == 6


@pytest.mark.parametrize(("first", "second"), [(b"\n", b"\r\n"), (b"\r\n", b"\n")])
def test_a_file_mixing_crlf_and_lf_names_the_line_where_the_mix_starts(
    tmp_path: Path, first: bytes, second: bytes
) -> None:
    lines = [b"order_id,total,currency", *(f"{1000 + i},{i}.00,USD".encode() for i in range(5))]
    data = b"".join(line + (second if n == 3 else first) for n, line in enumerate(lines))
    path = write(tmp_path, "orders.csv", data)
    with pytest.raises(NotCsvError, match=r"mixes line endings .* until line 4, which ends with"):
        read_whole(path)


def test_a_byte_order_mark_over_windows_1252_bytes_is_refused_by_name(tmp_path: Path) -> None:
    data = codecs.BOM_UTF8 + b"order_id,total,currency,note\n1001,10.00,USD,caf\xe9\n"
    path = write(tmp_path, "orders.csv", data)
    with pytest.raises(EncodingError, match="byte order mark") as refused:
        inspect_csv(path, "orders.csv", max_bytes=LIMIT)
    assert refused.value.file_name == "orders.csv"


def test_a_ragged_row_in_the_head_of_a_big_file_is_numbered_as_in_a_small_one(
    tmp_path: Path,
) -> None:
    # A delimiter-only record counts as a row (the ledger ignores it); the sample of a head
    # cut from a file bigger than it drops it, and numbered the next rows one too low.
    note = "x" * 15_000
    rows = [f"{1000 + i},{i}.00,USD,{note}" for i in range(1, 301)]
    rows[1] = ",,,"
    rows[3] += ",extra"
    data = ("order_id,total,currency,note\n" + "\n".join(rows) + "\n").encode()
    assert len(data) > 4 << 20
    with pytest.raises(RaggedRowsError) as big:
        inspect_csv(write(tmp_path, "big.csv", data), "big.csv", max_bytes=LIMIT)
    small = ("order_id,total,currency,note\n" + "\n".join(rows[:10]) + "\n").encode()
    with pytest.raises(RaggedRowsError) as whole:
        inspect_csv(write(tmp_path, "small.csv", small), "small.csv", max_bytes=LIMIT)
    assert big.value.row == whole.value.row == 4


def test_a_quote_that_swallows_rows_is_a_warning_naming_the_cell(tmp_path: Path) -> None:
    # Valid CSV: the quote opened in row 3 closes in the next line, whose payment becomes
    # text of row 3's description. Both counts agree on 5 rows; only the cell's shape tells.
    header = "payment_id,order_id,amount,currency,status,description\n"
    rows = [
        "p1,1001,10.00,USD,succeeded,ok\n",
        "p2,1002,20.00,USD,succeeded,ok\n",
        'p3,1003,30.00,USD,succeeded,"Gift\n',
        'p4,1004,40.00,USD,succeeded,Note"\n',
        "p5,1005,50.00,USD,succeeded,ok\n",
        "p6,1006,60.00,USD,succeeded,ok\n",
    ]
    swallowed = read_whole(write(tmp_path, "payments.csv", (header + "".join(rows)).encode()))
    assert swallowed.records == 5
    [warning] = [words(w) for w in swallowed.warnings]
    assert 'row 3 ("description")' in warning and "a quote may be missing" in warning
    assert warning.startswith("payments.csv: ")  # the report shows it as it is
    # A note written on two lines is not a row.
    rows[2:4] = ['p3,1003,30.00,USD,succeeded,"Gift\nwrap, red"\n']
    plain = read_whole(write(tmp_path, "notes.csv", (header + "".join(rows)).encode()))
    assert (plain.records, plain.warnings) == (5, ())


def test_an_excel_title_row_padded_to_the_table_s_width_is_not_the_header(tmp_path: Path) -> None:
    # A spreadsheet saved as CSV writes its title row as wide as the table, and a blank one.
    from agent.data.mapping import infer_mapping
    from agent.data.pipeline import run_job
    from agent.data.policy import Policy
    from agent.data.schema import Role

    orders = tmp_path / "orders.csv"
    orders.write_text(
        "Orders export October 2025,,,\n,,,\nOrder ID,Total,Currency,Status\n"
        + "".join(f"{1000 + i},{10 + i}.00,EUR,paid\n" for i in range(1, 9))
    )
    payments = tmp_path / "payments.csv"
    payments.write_text(
        "Settlement report,,,\nPayment ID,Order,Amount,Currency\n"
        + "".join(f"P{i},{1000 + i},{10 + i}.00,EUR\n" for i in range(1, 9))
    )
    sample = inspect_csv(orders, orders.name)
    assert sample.layout.columns == ("Order ID", "Total", "Currency", "Status")
    assert sample.layout.header_line == 2
    assert "the header is line 3" in words(sample.layout.notes[-1])
    proposal = infer_mapping(sample, inspect_csv(payments, payments.name))
    assert proposal.mapping is not None
    files = {Role.ORDERS: (orders, orders.name), Role.PAYMENTS: (payments, payments.name)}
    result = run_job(files, proposal.mapping, Policy(), tmp_path / "x.csv")
    summary = result.reconciliation.summary()
    assert summary.total_findings == 0
    assert [ledger.records for ledger in summary.ledger] == [8, 8]
