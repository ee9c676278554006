"""The validation report's notes: every code has words, and a remembered report says the same
as the one computed (its notes survive the memo's JSON unchanged)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from agent.data.normalize.codes import Code
from agent.data.normalize.memo import ValidationMemo
from agent.data.normalize.report import FieldCheck, ValidationReport
from agent.data.normalize.wording import WORDS
from agent.data.notes import Note, note, with_code
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import AmountReading, DatasetMapping, Mapping, ReadingOptions, Role
from agent.data.wording import codes, words, words_of

_REFERENCES: dict[str, Any] = {
    "named": 3,
    "total": 4,
    "payments": "payments.csv",
    "orders": "orders.csv",
    "several": 1,
}
_VALUES = [["pending", 2, [1, 3]], ["held", 1, [5]]]
_FILE = {"file": "orders.csv", "column": "status"}

SAMPLES: dict[Code, dict[str, Any]] = {
    Code.UNMAPPED_FIELD: {"file": "orders.csv", "field": "order_amount"},
    Code.BY_ROW: {"file": "payments.csv", "field": "payment_id"},
    Code.UNREADABLE: {
        "file": "payments.csv",
        "unreadable": 5,
        "filled": 10,
        "problem": "rows with an empty id",
        "column": "pid",
        "field": "payment_id",
        "rows": [1, 2],
    },
    Code.UNREADABLE_SKIPPED: {
        "file": "orders.csv",
        "unreadable": 1,
        "filled": 300,
        "problem": "values that do not read as timestamps",
        "column": "date",
        "field": "order_date",
        "rows": [40],
    },
    Code.FINER_THAN_MINOR: {
        "file": "orders.csv",
        "count": 1,
        "filled": 2,
        "column": "total",
        "field": "order_amount",
        "rows": [1],
        "minor": False,
    },
    Code.NO_TIME_COLUMN: {"file": "payments.csv", "field": "captured_at"},
    Code.ROWS_WITHOUT_TIME: {
        "file": "orders.csv",
        "count": 1,
        "column": "date",
        "field": "order_date",
        "rows": [4],
    },
    Code.AMBIGUOUS_ZONES: {
        "file": "orders.csv",
        "zone_column": None,
        "column": "date",
        "zones": [["CST", "US Central"]],
        "role": "orders",
        "examples": ["America/Chicago", "Asia/Shanghai"],
    },
    Code.NEGATIVE_PAYMENTS: {"file": "payments.csv", "count": 1, "column": "amt", "rows": [9]},
    Code.NEGATIVE_ORDERS: {"file": "orders.csv", "count": 2, "column": "total", "rows": [3, 4]},
    Code.TOO_MANY_ORDER_STATUSES: {**_FILE, "limit": 1000},
    Code.ORDER_STATUSES: {
        **_FILE,
        "meanings": [["paid", [["paid", 8]]], ["voided", [["cancelled", 1]]]],
    },
    Code.UNKNOWN_ORDER_STATUSES: {
        **_FILE,
        "values": _VALUES,
        "edits": [["pending", ["pending"]]],
        "strangers": ["held"],
    },
    Code.ABSENT_WORDS: {
        **_FILE,
        "absent": [["payed", "paid"]],
        "option": "orders.statuses_",
        "values": ["paid"],
    },
    Code.TOO_MANY_KINDS: {**_FILE, "limit": 1000},
    Code.FAILED_IN_KIND_LIST: {"file": "payments.csv", "failed": [["declined", "capture"]]},
    Code.ROW_KINDS: {**_FILE, "kinds": [["capture", [["sale", True, 4]]]]},
    Code.UNKNOWN_ROW_KINDS: {**_FILE, "values": _VALUES, "edits": [["ignore", ["fee", "held"]]]},
    Code.TOO_MANY_PAYMENT_STATUSES: {**_FILE, "limit": 1000},
    Code.PAYMENT_STATUSES: {**_FILE, "statuses": [["succeeded", "capture", 7]]},
    Code.STATUS_CODES: {
        **_FILE,
        "values": [["1", 3, [1, 2, 3]]],
        "name": "Authorize.Net",
        "meanings": [["1", "capture"], ["2", "declined"]],
        "capture": ["1"],
        "ignore": ["2"],
    },
    Code.UNKNOWN_PAYMENT_STATUSES: {
        **_FILE,
        "values": _VALUES,
        "kinds": False,
        "ignore": ["pending", "held"],
        "took": ["succeeded", "pending", "held"],
        "kept": ["succeeded"],
        "refunds": ["held"],
    },
    Code.ORDER_IDS: {"file": "orders.csv", "keys": 40, "rows": 41},
    Code.NOT_ORDER_ID: {
        "file": "orders.csv",
        "column": "store",
        "keys": 2,
        "rows": 300,
        "conflicting": 0,
        "conflicts": False,
    },
    Code.REFERENCES: _REFERENCES,
    Code.MULTI_ORDER_READING: {**_REFERENCES, "rows": [1, 2]},
    Code.PROPOSED_READING: {"named": 4, "total": 4, "reading": "ids in any case", "edit": "x=y"},
    Code.READING_FAILS: {**_REFERENCES, "advice": {"kind": "check"}},
    Code.READING_WEAK: {
        **_REFERENCES,
        "advice": {
            "kind": "better",
            "reading": "ids in any case",
            "named": 4,
            "total": 4,
            "edit": "x=y",
            "merged": 0,
            "several": 2,
        },
    },
    Code.EVIDENT_TAKEN: {
        "taken": [{"named": 4, "total": 4, "reading": "ids in any case", "edit": "x=y"}],
        "without": _REFERENCES,
    },
    Code.ROWS_READ: {"file": "orders.csv", "rows": 1200},
}


def test_every_code_has_words_and_renders() -> None:
    assert set(WORDS) == set(Code) == set(SAMPLES)
    assert set(Code) <= codes()
    for code, params in SAMPLES.items():
        said = words(note(code, **params))
        assert said and said.strip() == said, code


def test_notes_say_what_the_messages_said() -> None:
    # A few words exactly as the messages read before notes (the edges read them so).
    assert words(note(Code.REFERENCES, **_REFERENCES)) == (
        "3 of 4 payment references in payments.csv name an order in orders.csv "
        "(1 of them name several orders)"
    )
    assert words(note(Code.ROWS_READ, file="orders.csv", rows=1200)) == (
        "orders.csv: 1,200 rows read"
    )
    assert words(note(Code.EVIDENT_TAKEN, **SAMPLES[Code.EVIDENT_TAKEN])) == (
        "Proposed from the files, not asked: 4 of 4 payment references name an order under: "
        "ids in any case (edit x=y). Without it, 3 of 4 payment references in payments.csv "
        "name an order in orders.csv (1 of them name several orders)"
    )


def test_a_report_of_every_note_survives_the_memo(tmp_path: Path) -> None:
    every = [note(code, **params) for code, params in SAMPLES.items()]
    report = ValidationReport(
        rows={"orders": 3},
        checks=[FieldCheck("orders.csv", "order_amount", "total", 3, 1, [2], "values")],
        errors=every,
        warnings=every[::-1],
        facts=every[:3],
        routine=[note(Code.REFERENCES, **_REFERENCES)],
        proposed={"payments": {"id_ignore_case": "yes"}},
        proposed_reading=note(Code.PROPOSED_READING, **SAMPLES[Code.PROPOSED_READING]),
        references=[3, 4],
    )
    memo = ValidationMemo(tmp_path, max_age=timedelta(days=1))
    memo.remember("k", report)
    assert memo.recall("k") == report


def test_a_validation_recalled_from_the_memo_is_the_one_computed(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text(
        "id,total,ccy,status\n1001,10.005,USD,paid\n1002,-5.00,USD,paid\n1003,x,USD,held\n"
    )
    (tmp_path / "payments.csv").write_text("pid,ref,amount,ccy\np1,1001,10.01,USD\n")
    options = ReadingOptions(amounts={"order_amount": AmountReading()})
    mapping = Mapping(
        orders=DatasetMapping(
            columns={
                "order_id": "id",
                "order_amount": "total",
                "currency": "ccy",
                "order_status": "status",
            },
            options=options,
        ),
        payments=DatasetMapping(
            columns={"payment_id": "pid", "order_id": "ref", "captured_amount": "amount"},
            options=ReadingOptions(),
        ),
    )
    files = {role: (tmp_path / f"{role.value}.csv", f"{role.value}.csv") for role in Role}
    report = load_and_validate(connect(), files, mapping, policy=Policy())
    assert report.errors and report.warnings and report.facts
    assert with_code(report.routine, Code.REFERENCES)
    memo = ValidationMemo(tmp_path / "memo", max_age=timedelta(days=1))
    memo.remember("k", report)
    recalled = memo.recall("k")
    assert recalled == report
    assert recalled is not None
    for field in ("errors", "warnings", "facts", "routine"):
        assert words_of(getattr(recalled, field)) == words_of(getattr(report, field))
    assert all(isinstance(n, Note) for n in recalled.errors)
