"""Questions about a kind of finding ("which orders were never paid?") are answered with the
findings themselves, from the exceptions file: the data (`findings_of`), the tool
(`list_findings`), and the offline model's plan and answer."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent.casefiles import CaseFiles
from agent.data.evidence import MAX_LIST_LIMIT, findings_of
from agent.data.policy import CATEGORY_ORDER, Policy
from agent.domain import Outcome
from agent.models.offline import (
    NONE_SAID,
    PLAIN_WORDS,
    Done,
    Reply,
    ToolCall,
    answer_from,
    plain_category,
    plan,
)
from agent.runtime.context import STATE_KEY, InvestigationContext
from agent.runtime.factory import AGENT_TOOLS
from agent.runtime.finding_tools import NOT_RECONCILED, list_findings
from storage.blobs import LocalBlobStore
from tests.unit.data.test_exceptions_csv import HEADER as ENGINE_HEADER

HEADER = [
    "category",
    "reason",
    "order_ids",
    "orders_rows",
    "payment_ids",
    "payments_rows",
    "currency",
    "expected",
    "actual",
    "difference",
]
ROWS = [
    ["capture_without_order", "", "", "", "ch_9", "9", "GBP", "", "80.00", ""],
    ["capture_without_order", "", "", "", "ch_8", "8", "GBP", "", "95.00", ""],
    ["order_without_capture", "", "#1001", "2", "", "", "USD", "10.00", "0.00", "-10.00"],
    ["order_without_capture", "", "#1002", "3", "", "", "EUR", "250.00", "0.00", "-250.00"],
    ["order_without_capture", "", "#1004", "5", "", "", "USD", "99.50", "0.00", "-99.50"],
    ["order_without_capture", "", "#1003", "4", "", "", "USD", "99.50", "0.00", "-99.50"],
    # An id a spreadsheet would read as a formula is written with a leading `'`.
    ["order_without_capture", "", "'-7", "7", "", "", "USD", "1.00", "0.00", "-1.00"],
    ["over_capture", "", "#1005", "6", "ch_1; ch_2", "1 2", "USD", "5.00", "6.00", "1.00"],
    ["ignored", "line_item_continuation", "#1001", "8", "", "", "USD", "", "", ""],
]


def write_export(path: Path, rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


@pytest.fixture
def export(tmp_path: Path) -> Path:
    return write_export(tmp_path / "exceptions.csv", ROWS)


# -- the data ---------------------------------------------------------------------------------


def test_the_largest_difference_comes_first_then_the_files_order(export: Path) -> None:
    found = findings_of(export, "order_without_capture")
    assert [f["order_ids"] for f in found.findings] == ["#1002", "#1003", "#1004", "#1001", "'-7"]
    assert found.total == 5
    assert found.by_currency == {"EUR": 1, "USD": 4}
    first = found.findings[0]
    assert (first["orders_rows"], first["currency"], first["expected"]) == ("3", "EUR", "250.00")


def test_a_finding_with_one_amount_is_ranked_by_that_amount(export: Path) -> None:
    found = findings_of(export, "capture_without_order")
    assert [f["payment_ids"] for f in found.findings] == ["ch_8", "ch_9"]


def test_a_currency_narrows_the_list_and_its_total(export: Path) -> None:
    found = findings_of(export, "order_without_capture", currency=" usd ")
    assert found.currency == "USD"
    assert found.total == 4
    assert [f["order_ids"] for f in found.findings][:1] == ["#1003"]
    assert found.by_currency == {"EUR": 1, "USD": 4}, "the counts per currency stay whole"
    assert findings_of(export, "order_without_capture", currency="JPY").total == 0


def test_the_limit_cuts_the_list_not_the_total(export: Path, tmp_path: Path) -> None:
    found = findings_of(export, "order_without_capture", limit=2)
    assert (len(found.findings), found.total) == (2, 5)
    assert len(findings_of(export, "order_without_capture", limit=0).findings) == 1
    many = [
        ["order_without_capture", "", f"#{n}", str(n), "", "", "USD", f"{n}.00", "0.00", f"-{n}.00"]
        for n in range(1, 151)
    ]
    big = write_export(tmp_path / "big" / "exceptions.csv", many)
    found = findings_of(big, "order_without_capture", limit=500)
    assert (len(found.findings), found.total) == (MAX_LIST_LIMIT, 150)
    assert found.findings[0]["order_ids"] == "#150"


def test_ignored_rows_and_other_categories_are_not_listed(export: Path, tmp_path: Path) -> None:
    assert findings_of(export, "unreadable_row").total == 0
    assert all(
        f["category"] == "order_without_capture"
        for f in findings_of(export, "order_without_capture").findings
    )
    quoted = write_export(tmp_path / "it's here" / "exceptions.csv", ROWS)
    assert findings_of(quoted, "over_capture").total == 1


# -- the tool ---------------------------------------------------------------------------------


def _outcome(digest: str | None) -> Outcome:
    return Outcome(
        investigation_id="INV-1",
        pause_id="PAUSE-1",
        revision=2,
        mapping_digest="sha256:" + "c" * 64,
        input_identity="sha256:" + "b" * 64,
        counts={},
        summary={},
        top_findings=[],
        report="Reconciled.",
        export_digest=digest,
        export_rows=len(ROWS),
        created_at=datetime.now(UTC),
    )


def _call(tmp_path: Path, export: Path | None, **arguments: Any) -> dict[str, Any]:
    blobs = LocalBlobStore(tmp_path / "blobs")
    outcome = None
    if export is not None:
        with export.open("rb") as handle:
            outcome = _outcome(blobs.put(handle).digest)
    context = InvestigationContext(
        investigation_id="INV-1",
        files={},
        blobs=blobs,
        policy=Policy(),
        workdir=tmp_path,
        case_files=CaseFiles(blobs, tmp_path, policy=Policy(), max_age=timedelta(hours=1)),
        outcome=outcome,
    )
    answer = list_findings(SimpleNamespace(invocation_state={STATE_KEY: context}), **arguments)
    data = json.loads(answer["content"][0]["text"])
    assert (answer["status"] == "success") is data["ok"]
    return data


def test_the_tool_refuses_before_reconciliation_with_a_sentence(tmp_path: Path) -> None:
    data = _call(tmp_path, None, category="order_without_capture")
    assert data == {"ok": False, "error": NOT_RECONCILED}
    assert data["error"].endswith(".")


def test_the_tool_says_how_many_of_how_many_and_where_the_rest_are(
    export: Path, tmp_path: Path
) -> None:
    data = _call(tmp_path, export, category="order_without_capture", limit=2)
    assert (data["total"], data["listed"], data["limit"]) == (5, 2, 2)
    assert data["exceptions_file"] == "exceptions-INV-1-r2.csv"
    assert data["note"] == (
        "2 of 5 order_without_capture findings listed (largest difference first); every one is "
        "in the exceptions file exceptions-INV-1-r2.csv (category order_without_capture)."
    )
    assert [f["order_ids"] for f in data["findings"]] == ["#1002", "#1003"]
    whole = _call(tmp_path, export, category="over_capture", limit=500)
    assert whole["limit"] == MAX_LIST_LIMIT
    assert whole["note"] == (
        f"All 1 over_capture findings listed. At most {MAX_LIST_LIMIT} are listed at a time."
    )
    none = _call(tmp_path, export, category="order_without_capture", currency="JPY")
    assert none["total"] == 0 and none["findings"] == []
    assert "lists none" in none["note"]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"category": "unpaid"}, "the categories are: " + ", ".join(CATEGORY_ORDER)),
        ({"category": "over_capture", "currency": "EURO"}, "not a three-letter ISO 4217"),
    ],
)
def test_the_tool_says_what_it_accepts(
    export: Path, tmp_path: Path, arguments: dict[str, str], said: str
) -> None:
    data = _call(tmp_path, export, **arguments)
    assert data["ok"] is False and said in data["error"]


def test_every_agent_has_the_tool() -> None:
    assert "list_findings" in {t.tool_name for t in AGENT_TOOLS}
    spec = list_findings.tool_spec
    assert "which orders were never paid" in " ".join(spec["description"].split())
    assert set(spec["inputSchema"]["json"]["properties"]) == {"category", "currency", "limit"}


# -- the offline model ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "category"),
    [
        ("which orders were never paid?", "order_without_capture"),
        ("Which orders are not paid?", "order_without_capture"),
        ("list the unpaid orders", "order_without_capture"),
        ("orders with no payment", "order_without_capture"),
        ("which customers paid twice?", "duplicate_capture"),
        ("list the duplicates", "duplicate_capture"),
        ("any duplicate payment rows?", "duplicate_payment_row"),
        ("payments without an order", "capture_without_order"),
        ("which payments are for no order?", "capture_without_order"),
        ("what was over-captured?", "over_capture"),
        ("who overpaid?", "over_capture"),
        ("which orders were partially paid?", "partial_capture"),
        ("which orders were underpaid?", "partial_capture"),
        ("captures with a wrong amount", "amount_mismatch"),
        ("paid in the wrong currency", "currency_mismatch"),
        ("explain the rules", None),
        ("how did it go?", None),
    ],
)
def test_plain_words_name_a_category(question: str, category: str | None) -> None:
    assert plain_category(question) == category


def test_the_word_map_names_only_real_categories() -> None:
    assert set(PLAIN_WORDS) <= set(CATEGORY_ORDER)
    assert set(NONE_SAID) <= set(PLAIN_WORDS)


def _messages(question: str, *done: tuple[str, dict[str, Any], dict[str, Any]]) -> list[Any]:
    messages: list[Any] = [
        {"role": "user", "content": [{"text": f"Task: answer\nQuestion from alice: {question}"}]}
    ]
    for n, (name, arguments, data) in enumerate(done):
        use = {"toolUseId": f"t{n}", "name": name, "input": arguments}
        messages.append({"role": "assistant", "content": [{"toolUse": use}]})
        text = json.dumps({"ok": True, **data})
        result = {"toolUseId": f"t{n}", "status": "success", "content": [{"text": text}]}
        messages.append({"role": "user", "content": [{"toolResult": result}]})
    return messages


@pytest.mark.parametrize(
    ("question", "call"),
    [
        (
            "which orders were never paid?",
            ToolCall("list_findings", {"category": "order_without_capture"}),
        ),
        (
            "which EUR orders were never paid?",
            ToolCall("list_findings", {"category": "order_without_capture", "currency": "EUR"}),
        ),
        (
            "list ALL unpaid orders",
            ToolCall("list_findings", {"category": "order_without_capture"}),
        ),
        ("list the over_capture findings", ToolCall("list_findings", {"category": "over_capture"})),
        ("explain over_capture", ToolCall("explain_policy", {"category": "over_capture"})),
        ("why is #SH1010 flagged?", ToolCall("get_evidence", {"identifier": "#SH1010"})),
        ("why is #SH1010 never paid?", ToolCall("get_evidence", {"identifier": "#SH1010"})),
        ("explain the rules", ToolCall("explain_policy", {})),
    ],
)
def test_the_offline_model_lists_a_kind_of_finding(question: str, call: ToolCall) -> None:
    assert plan(_messages(question)) == call


def test_a_listed_kind_is_answered_with_its_rule_only_when_asked_why() -> None:
    listed = ("list_findings", {"category": "partial_capture"}, {"category": "partial_capture"})
    step = plan(_messages("which orders were underpaid?", listed))
    assert isinstance(step, Reply)
    assert step.text.startswith("No order was captured only in part:")
    assert plan(_messages("why were orders underpaid?", listed)) == ToolCall(
        "explain_policy", {"category": "partial_capture"}
    )


def _listed(total: int, findings: list[dict[str, Any]], currency: str | None = None) -> Done:
    data = {
        "category": "order_without_capture",
        "currency": currency,
        "total": total,
        "listed": len(findings),
        "exceptions_file": "exceptions-INV-1-r2.csv",
        "files": {"orders": "orders.csv", "payments": "payments.csv"},
        "findings": findings,
    }
    return Done("list_findings", {"category": "order_without_capture"}, True, data)


def _rows(export: Path) -> list[dict[str, Any]]:
    return findings_of(export, "order_without_capture").findings


def test_the_answer_says_the_total_first_then_each_order_with_its_row(export: Path) -> None:
    text = answer_from([_listed(114, _rows(export)[:2])])
    lines = text.splitlines()
    assert lines[0] == (
        "114 order_without_capture findings; 2 of 114 listed, largest difference first; every "
        "one is in the exceptions file exceptions-INV-1-r2.csv (category order_without_capture):"
    )
    assert lines[1] == ("- orders #1002 (orders.csv row 3); expected 250.00 EUR, found 0.00 EUR.")
    assert lines[2].startswith("- orders #1003 (orders.csv row 4);")
    assert len(lines) == 3


def test_a_whole_list_says_so_and_an_empty_one_says_there_is_none(export: Path) -> None:
    whole = answer_from([_listed(5, _rows(export))]).splitlines()
    assert whole[0] == "5 order_without_capture findings, largest difference first:"
    assert len(whole) == 6
    none = answer_from([_listed(0, [], currency="JPY")])
    assert none == (
        "No order is without a capture in JPY: the exceptions file exceptions-INV-1-r2.csv has "
        "no order_without_capture finding in JPY."
    )


def test_a_long_list_fits_one_chat_message_and_says_how_many_it_shows() -> None:
    """Slack shows 3,000 characters of a section: the answer lists what fits, and its first
    line says how many of how many that is."""
    long = {
        "category": "order_without_capture",
        "order_ids": "; ".join(f"#SH{n}" for n in range(10)),
        "orders_rows": " ".join(str(n) for n in range(10)),
        "payment_ids": None,
        "payments_rows": None,
        "currency": "USD",
        "expected": "1000.00",
        "actual": "0.00",
    }
    text = answer_from([_listed(114, [long] * 20)])
    lines = text.splitlines()
    assert len(text) < 3000
    shown = len(lines) - 1
    assert 1 < shown < 20
    assert lines[0].startswith(f"114 order_without_capture findings; {shown} of 114 listed")


def test_a_refusal_is_the_answer() -> None:
    refused = Done("list_findings", {}, False, {"error": NOT_RECONCILED})
    assert answer_from([refused]) == NOT_RECONCILED


def test_an_id_lookup_still_reads_as_before(export: Path) -> None:
    found = findings_of(export, "over_capture").findings
    done = Done(
        "get_evidence",
        {"identifier": "#1005"},
        True,
        {"findings": found, "files": {"orders": "o.csv", "payments": "p.csv"}},
    )
    assert answer_from([done]) == (
        "#1005 is flagged as over_capture: orders #1005 (o.csv row 6), payments ch_1; ch_2 "
        "(p.csv rows 1, 2); expected 5.00 USD, found 6.00 USD."
    )


def test_the_csv_written_here_has_the_engines_header(export: Path) -> None:
    """The hand-written file has the exceptions CSV's columns (tests/unit/data)."""
    assert next(csv.reader(io.StringIO(export.read_text()))) == ENGINE_HEADER
