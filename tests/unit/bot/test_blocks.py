"""The Block Kit builders: what a person sees, and Block Kit's limits whatever the files hold."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.data.demo import CATEGORY_IDS
from agent.data.mapping import Clarification
from agent.data.schema import (
    READING_OPTIONS,
    SCHEMA,
    DatasetMapping,
    Mapping,
    OrderStatuses,
    ReadingOptions,
    Role,
    RowKinds,
)
from agent.domain import (
    ApprovalRequest,
    ApproverPolicy,
    DatasetRef,
    FieldReading,
    Outcome,
    PauseKind,
    PauseState,
    PauseStatus,
)
from bot.presentation.request_text import render_request
from bot.slack import blocks
from bot.slack.payloads import ButtonValue, ModalMetadata, option_lines, option_lines_problem
from tests.standins.slack.web_api import validate_blocks

NOW = datetime(2026, 11, 30, 10, 42, tzinfo=UTC)
LONG = "Amount captured in the settlement currency " * 20


def _request(
    kind: PauseKind = PauseKind.CONFIRMATION,
    *,
    column: str = "Total",
    warnings: int = 0,
    choices: int = 0,
) -> ApprovalRequest:
    columns = {role: {spec.name: column for spec in SCHEMA[role]} for role in Role}
    mapping = Mapping(
        orders=DatasetMapping(columns=columns[Role.ORDERS], options=ReadingOptions()),
        payments=DatasetMapping(columns=columns[Role.PAYMENTS], options=ReadingOptions()),
    )
    confirm = kind is not PauseKind.CLARIFICATION
    return ApprovalRequest(
        pause_id="PAUSE-0123456789",
        investigation_id="INV-ABCDEF0123",
        kind=kind,
        revision=2,
        files=[
            DatasetRef(
                role=role,
                name=f"{role.value}-{LONG}.csv",
                size=123_456,
                digest="sha256:" + "a" * 64,
            )
            for role in Role
        ],
        input_identity="sha256:" + "b" * 64,
        mapping=mapping if confirm else None,
        mapping_digest="sha256:" + "c" * 64 if confirm else None,
        fields=[
            FieldReading(
                role=role,
                field=spec.name,
                required=spec.required,
                column=column,
                confidence_percent=87,
                samples=[LONG, "<!channel> hello", "1,234.50"],
                alternatives=[f"alt {n}" for n in range(40)],
            )
            for role in Role
            for spec in SCHEMA[role]
        ],
        clarifications=[
            Clarification(
                role=Role.PAYMENTS,
                field="captured_amount",
                question="Which column holds the captured amount? " + LONG,
                choices=[f"column {n} {LONG[:60]}" for n in range(choices)],
            )
        ]
        if choices
        else [],
        problems=[f"problem {n}: {LONG}" for n in range(warnings)],
        warnings=[f"note {n}: {LONG}" for n in range(warnings)],
        rows={"orders": 1_000_000, "payments": 1_020_000},
        policy_version="2026-11-30.1",
        authorization_identity="sha256:" + "d" * 64,
        requested_by="U0ALICE",
        channel="C0FINANCE",
        thread_ts="1.000001",
        created_at=NOW,
        expires_at=NOW + timedelta(hours=24),
        approver_policy=ApproverPolicy(approvers=("S0CONTROL",), self_approval=False),
        answers={},
        message="The mapping below was checked on every row. " + LONG,
    )


def _within_limits(rendered: blocks.Rendered) -> None:
    validate_blocks(rendered.blocks)
    assert rendered.text
    encoded = json.dumps(rendered.blocks)
    assert "<!channel>" not in encoded, "file content never becomes a mention"
    for block in rendered.blocks:
        for element in [*block.get("elements", []), block.get("accessory") or {}]:
            assert len(element.get("value", "")) <= 2000
            for option in element.get("options", []):
                assert len(option["text"]["text"]) <= 75 and len(option["value"]) <= 150


def test_the_request_shows_files_mapping_coverage_and_three_buttons() -> None:
    request = _request(column="Total")
    rendered = blocks.approval_message(request)
    _within_limits(rendered)
    text = json.dumps(rendered.blocks)
    assert "1,000,000 rows" in text and "sha256:aaaaaaaaaaaa" in text
    assert "revision 2" in text and "<@U0ALICE>" in text and "2026-12-01 10:42 UTC" in text
    actions = rendered.blocks[-1]
    assert [e["action_id"] for e in actions["elements"]] == ["approve", "edit_mapping", "reject"]
    approve, _, reject = actions["elements"]
    assert approve["style"] == "primary" and approve["confirm"]["confirm"]["text"] == "Approve"
    assert reject["style"] == "danger"
    assert json.loads(approve["value"]) == {
        "pause_id": request.pause_id,
        "authorization": request.authorization_identity,
    }


def test_a_wide_messy_request_stays_within_block_kit_limits() -> None:
    request = _request(column=LONG, warnings=300)
    rendered = blocks.approval_message(request)
    _within_limits(rendered)
    text = json.dumps(rendered.blocks, ensure_ascii=False)
    # Problems and warnings are never cut one by one: as many whole as the message holds,
    # then how many are left and where they all are: a file posted with it (issue 38).
    where = r"every one is in the file `request-PAUSE-0123456789.txt` posted in this thread"
    left = [int(n) for n in re.findall(r"…and (\d+) more lines: " + where, text)]
    problems, warnings = (
        len(re.findall(r"problem \d+: (?:Amount captured in the settlement currency ){20}", text)),
        len(re.findall(r"note \d+: (?:Amount captured in the settlement currency ){20}", text)),
    )
    assert warnings > 5 and problems > 5
    assert left == [300 - problems, 300 - warnings]
    assert blocks.request_overflows(request)
    # The column's whole name is bound: never cut with an ellipsis.
    assert " ".join(LONG.split()) in " ".join(text.split())


def test_a_request_the_message_holds_has_no_file() -> None:
    request = _request(warnings=2)
    assert not blocks.request_overflows(request)
    assert "posted in this thread" not in json.dumps(blocks.approval_message(request).blocks)


def test_warnings_come_first_and_routine_counts_fold_into_one_line() -> None:
    request = _request().model_copy(
        update={
            "warnings": ["orders.csv: 12 timestamps unreadable: the window check skips them"],
            "notes": ['orders.csv: order statuses in "Status": paid: paid (9)'],
            "routine": ["orders.csv: 9 rows read", "payments.csv: 8 rows read"],
        }
    )
    texts = [b["text"]["text"] for b in blocks.approval_message(request).blocks if "text" in b]
    order = [
        next(i for i, t in enumerate(texts) if needle in t)
        for needle in ("timestamps unreadable", "order statuses", "9 rows read")
    ]
    assert order == sorted(order) and order[0] < order[1] < order[2]
    assert texts[order[2]] == "_Read: orders.csv: 9 rows read · payments.csv: 8 rows read_"


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=14)
_LINE = st.text(alphabet="abcdefghij klmn", min_size=1, max_size=400)


@settings(max_examples=40, deadline=None)
@given(
    kinds=st.lists(_WORD, min_size=200, max_size=300, unique=True),
    statuses=st.lists(_WORD, min_size=1, max_size=60, unique=True),
    warnings=st.lists(_LINE, max_size=40),
    notes=st.lists(_LINE, max_size=40),
    routine=st.lists(_LINE, max_size=10),
    questions=st.integers(min_value=0, max_value=12),
    choices=st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=200), max_size=120),
)
def test_everything_bound_reaches_the_approver(
    kinds: list[str],
    statuses: list[str],
    warnings: list[str],
    notes: list[str],
    routine: list[str],
    questions: int,
    choices: list[str],
) -> None:
    # Issue 38: an editor padded kinds_capture with 90 words and appended `refunded` to
    # kinds_ignore; the approver's request ended `…settled_batch_049, settled…` and she
    # approved what she could not see. Every word of every list bound in the mapping, every
    # warning, note, count, question and choice is in the message; or the message says how many
    # are left and where, and the file posted with it holds them all.
    half = len(kinds) // 2
    row_kinds = RowKinds(capture=kinds[:half], ignore=kinds[half:])
    order_statuses = OrderStatuses(paid=statuses)
    request = _request()
    assert request.mapping is not None
    payments = request.mapping.payments.model_copy(
        update={"options": ReadingOptions(kinds=row_kinds)}
    )
    orders = request.mapping.orders.model_copy(
        update={"options": ReadingOptions(statuses=order_statuses)}
    )
    asked = [
        Clarification(
            role=Role.PAYMENTS, field="captured_amount", question=f"question {n}", choices=choices
        )
        for n in range(questions)
    ]
    request = request.model_copy(
        update={
            "mapping": request.mapping.model_copy(update={"orders": orders, "payments": payments}),
            "warnings": warnings,
            "notes": notes,
            "routine": routine,
            "clarifications": asked,
        }
    )
    rendered = blocks.approval_message(request)
    _within_limits(rendered)
    shown = json.dumps(rendered.blocks, ensure_ascii=False)
    flat = " ".join(
        " ".join(
            block.get("text", {}).get("text", "") for block in rendered.blocks if "text" in block
        ).split()
    )
    bound = [*row_kinds.capture, *row_kinds.ignore, *order_statuses.paid]
    for word in bound:
        assert re.search(rf"(?<![a-z_]){word}(?![a-z_])", flat), word
    lines = [*warnings, *notes, *routine, *(q.question for q in asked)]
    offered = [c for c in choices if c.strip()] if asked else []
    if not blocks.request_overflows(request):
        assert "posted in this thread" not in flat
        for line in lines:
            assert " ".join(line.split()) in flat
        for choice in offered:  # in a menu, or listed whole in the question
            assert json.dumps(choice)[1:-1] in shown or " ".join(choice.split()) in flat
        return
    assert "`request-PAUSE-0123456789.txt` posted in this thread" in flat
    whole = " ".join(render_request(request).split())
    for item in [*bound, *lines, *offered]:
        assert " ".join(item.split()) in whole


def test_the_edit_form_labels_each_field_once_and_names_every_option_whole() -> None:
    # Issue 38: every field read "(required) (optional)", and the options' help was 2,000
    # characters cut mid-word.
    request = _request()
    columns = {role: ["Total", "Other"] for role in Role}
    metadata = ModalMetadata(request.pause_id, request.authorization_identity, "C1", "1.0")
    view = blocks.edit_modal(request, columns, metadata)
    inputs = [b for b in view["blocks"] if b["type"] == "input"]
    assert all("(required)" not in b["label"]["text"] for b in inputs)
    hints = [b["hint"]["text"] for b in inputs if "hint" in b]
    assert any(h.startswith("Needed to reconcile: ") for h in hints)
    options = next(h for h in hints if h.startswith("One per line"))
    assert len(options) < 2000 and not options.endswith("…")
    assert all(name in options for name in READING_OPTIONS)


def test_a_request_nobody_may_approve_says_so_and_what_to_do() -> None:
    # Issue 38: after the only approvers edited, nobody could act and nothing said so.
    request = _request().model_copy(
        update={
            "requesters": ("U0ALICE", "U0BOB"),
            "approver_policy": ApproverPolicy(approvers=("U0BOB",), self_approval=False),
        }
    )
    text = json.dumps(blocks.approval_message(request).blocks)
    assert "Nobody may approve this request" in text and "<@U0BOB>" in text
    assert "RECONBOT_APPROVERS" in text
    fine = request.model_copy(
        update={"approver_policy": ApproverPolicy(approvers=("U0BOB", "U0DAN"))}
    )
    assert "Nobody may approve" not in json.dumps(blocks.approval_message(fine).blocks)


def test_a_clarification_asks_with_a_select_and_cannot_be_approved() -> None:
    rendered = blocks.approval_message(_request(PauseKind.CLARIFICATION, choices=250))
    _within_limits(rendered)
    actions = rendered.blocks[-1]
    assert [e["action_id"] for e in actions["elements"]] == ["edit_mapping", "reject"]
    select = next(b for b in rendered.blocks if b.get("block_id", "").startswith("answer:0:"))[
        "accessory"
    ]
    assert select["type"] == "static_select" and len(select["options"]) == 100
    assert select["options"][0]["value"].startswith("payments.captured_amount=column 0")


def test_a_blocked_reconcile_says_what_it_needs_and_offers_approval() -> None:
    request = _request(PauseKind.BLOCKED_RECONCILE)
    rendered = blocks.approval_message(request)
    assert "blocked until the mapping is approved" in rendered.text.lower() or "blocked" in (
        json.dumps(rendered.blocks).lower()
    )
    assert rendered.blocks[-1]["elements"][0]["action_id"] == "approve"


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (PauseStatus.CONSUMED, "Approved by <@U0BOB>"),
        (PauseStatus.REJECTED, "Rejected by <@U0BOB>"),
        (PauseStatus.SUPERSEDED, "Superseded by revision 3"),
        (PauseStatus.EXPIRED, "Expired"),
        (PauseStatus.FAILED, "failed"),
    ],
)
def test_every_terminal_state_edits_the_message_and_removes_the_buttons(
    status: PauseStatus, words: str
) -> None:
    state = PauseState(
        request=_request(), status=status, decided_by="U0BOB", decided_at=NOW, reason="late"
    )
    rendered = blocks.decided_message(state.request, blocks.state_line(state, newest_revision=3))
    _within_limits(rendered)
    assert all(b["type"] != "actions" for b in rendered.blocks)
    assert words in json.dumps(rendered.blocks)


def test_the_edit_modal_offers_at_most_100_columns_preferring_the_proposal() -> None:
    request = _request(column="col 250")
    header = [f"col {n}" for n in range(300)] + [f"alt {n}" for n in range(40)]
    metadata = ModalMetadata(request.pause_id, request.authorization_identity, "C0FINANCE", "1.2")
    view = blocks.edit_modal(request, {Role.ORDERS: header, Role.PAYMENTS: header}, metadata)
    validate_blocks(view["blocks"], limit=100)
    inputs = [b for b in view["blocks"] if b["type"] == "input"]
    selects = [b for b in inputs if not b["block_id"].startswith(blocks.OPTIONS_BLOCK_PREFIX)]
    assert len(selects) == sum(len(SCHEMA[r]) for r in Role)
    assert [b["block_id"] for b in inputs if b not in selects] == [
        "options.orders",
        "options.payments",
    ]
    for block in selects:
        options = block["element"]["options"]
        assert len(options) == 100
        assert options[0]["text"]["text"] == "col 250"
        assert block["element"]["initial_option"]["value"] == str(header.index("col 250"))
    assert ModalMetadata.decode(view["private_metadata"]) == metadata


def test_results_list_findings_with_rows_and_stay_within_limits() -> None:
    finding: dict[str, Any] = {
        "category": "amount_mismatch",
        "order_ids": [f"#{n}" for n in range(200)],
        "payment_ids": ["ch_1"],
        "currency": "EUR",
        "expected": "10.00",
        "actual": "9.99",
        "evidence": [{"file": "orders.csv", "rows": list(range(1, 40)), "ids": []}],
    }
    outcome = Outcome(
        investigation_id="INV-1",
        pause_id="PAUSE-1",
        revision=1,
        mapping_digest="sha256:" + "c" * 64,
        input_identity="sha256:" + "b" * 64,
        counts={f"category_{n}": n for n in range(14)},
        summary={"orders": 10, "payments": 12},
        top_findings=[finding] * 25,
        report="",
        export_digest=None,
        export_rows=91,
        created_at=NOW,
    )
    rendered = blocks.results_message(outcome, "U0BOB")
    _within_limits(rendered)
    text = json.dumps(rendered.blocks)
    assert "orders.csv rows 1, 2, 3" in text and "91 rows" in text and "<@U0BOB>" in text
    # Ids are shown whole, then counted with where they all are (never cut with "…").
    assert "#8, #9` and 190 more (in the exceptions file)" in text


@settings(max_examples=60, deadline=None)
@given(
    counts=st.dictionaries(
        st.sampled_from(sorted(CATEGORY_IDS)), st.integers(min_value=0, max_value=10**7)
    ),
    shown=st.integers(min_value=0, max_value=25),
)
def test_results_show_every_category_and_say_how_many_findings_are_not_listed(
    counts: dict[str, int], shown: int
) -> None:
    # Issue 38: the demo's 1,592 findings were listed as counts adding up to 1,478, because only
    # ten categories fitted one section. Every category with findings is shown with its count
    # (thousands separated), and the findings not listed are counted, never silently cut.
    finding: dict[str, Any] = {
        "category": "amount_mismatch",
        "order_ids": ["#SH1010"],
        "payment_ids": ["ch_1"],
        "currency": "EUR",
        "expected": "10.00",
        "actual": "9.99",
        "evidence": [{"file": "orders.csv", "rows": list(range(1, 14)), "ids": []}],
    }
    total = sum(counts.values())
    outcome = Outcome(
        investigation_id="INV-1",
        pause_id="PAUSE-1",
        revision=1,
        mapping_digest="sha256:" + "c" * 64,
        input_identity="sha256:" + "b" * 64,
        counts=counts,
        summary={"orders": 10_000, "payments": 12_000},
        top_findings=[finding] * min(shown, total),
        report="",
        export_digest=None,
        export_rows=total,
        created_at=NOW,
    )
    rendered = blocks.results_message(outcome, "U0BOB")
    _within_limits(rendered)
    text = json.dumps(rendered.blocks)
    for name, count in counts.items():
        if count:
            assert f"{name}: *{count:,}*" in text
    assert f"*{total:,} findings*" in text
    listed = text.count("amount_mismatch*: orders")
    if total > listed:
        assert f"and {total - listed:,} more findings" in text
    if listed:
        assert "orders.csv rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 3 more" in text


def test_a_refusal_names_the_reason_and_who_may_approve() -> None:
    rendered = blocks.refusal_message(
        "ALREADY_CONSUMED",
        "This request was already approved by U0BOB at 2026-11-30 10:42 UTC.",
        people=["U0BOB"],
    )
    text = rendered.blocks[0]["text"]["text"]
    assert "<@U0BOB>" in text and "ALREADY_CONSUMED" in text
    who = blocks.who_may_approve(("S0CONTROL", "U0DAN"), ["U0ALICE"], self_approval=False)
    assert who == "<!subteam^S0CONTROL>, <@U0DAN>, except the requester (<@U0ALICE>)"
    # Issue 38: two makers were one broken mention (`<@U0ALICE, U0BOB>`), and a maker who is
    # an approver was listed as allowed and excluded at once.
    who = blocks.who_may_approve(("U0BOB", "U0DAN"), ["U0ALICE", "U0BOB"], self_approval=False)
    assert who == "<@U0DAN>, except those who made this request (<@U0ALICE>, <@U0BOB>)"
    who = blocks.who_may_approve(("U0BOB",), ["U0BOB"], self_approval=False)
    assert who == "nobody else named as an approver, except the requester (<@U0BOB>)"


def test_button_values_round_trip_and_tampering_is_detected() -> None:
    value = ButtonValue("PAUSE-1", "sha256:" + "d" * 64)
    assert ButtonValue.decode(value.encode()) == value
    for bad in ("", "{", "[]", '{"pause_id": 1, "authorization": "x"}', None):
        with pytest.raises(Exception, match="not issued by reconbot"):
            ButtonValue.decode(bad)


def test_reading_options_are_written_name_equals_value_and_checked() -> None:
    assert option_lines("id_prefix = WC-\n\nid_strip_zeros=yes\n") == {
        "id_prefix": "WC-",
        "id_strip_zeros": "yes",
    }
    assert option_lines_problem("id_prefix=WC-") == ""
    assert "not name=value" in option_lines_problem("strip WC-")
    assert "No reading option colour" in option_lines_problem("colour=red")
    # An edit as a request suggests it, pasted into its file's box, is taken as typed.
    suggested = "payments.id_pattern='#\\s*(\\d+)'\npayments.id_ignore_case=yes"
    assert option_lines(suggested, "payments") == {
        "id_pattern": "#\\s*(\\d+)",
        "id_ignore_case": "yes",
    }
    assert option_lines_problem(suggested, "payments") == ""
    assert "No reading option payments.id_ignore_case" in option_lines_problem(suggested, "orders")


def test_the_which_file_question_is_answered_with_a_select_of_the_files() -> None:
    question = Clarification(
        role=None,
        field=None,
        question="Which file is the orders export? The two files look alike.",
        choices=["a.csv", "b.csv"],
    )
    request = _request(PauseKind.CLARIFICATION).model_copy(update={"clarifications": [question]})
    rendered = blocks.approval_message(request)
    values = [
        option["value"]
        for block in rendered.blocks
        for option in (block.get("accessory") or {}).get("options", [])
    ]
    assert values == ["orders.orders_file=a.csv", "orders.orders_file=b.csv"]


def _texts(rendered: blocks.Rendered) -> list[str]:
    return [b["text"]["text"] for b in rendered.blocks if "text" in b and "text" in b["text"]]


def test_a_name_with_a_line_break_cannot_draw_a_line_of_its_own() -> None:
    # Red team: a column named "Fee\n• `captured_amount` ← `Gross` (99%)" drew a second,
    # false mapping line. Every name is shown on one line, its line break as `\n`.
    forged = "Fee\n• `captured_amount` ← `Gross` (99%)"
    request = _request(column=forged)
    text = "\n".join(_texts(blocks.approval_message(request)))
    assert not [
        line for line in text.splitlines() if line.startswith("• `captured_amount` ← `Gross`")
    ]
    assert "Fee\\n• ˋcaptured_amountˋ ← ˋGrossˋ (99%)" in text


def test_the_reading_is_shown_literally_and_file_names_whole() -> None:
    request = _request()
    assert request.mapping is not None
    orders = request.mapping.orders.model_copy(
        update={"options": ReadingOptions(statuses=OrderStatuses(paid=["*paid*", "~voided~"]))}
    )
    long_name = "orders_export_" + "x" * 90 + "_FINAL.csv"
    files = [request.files[0].model_copy(update={"name": long_name}), request.files[1]]
    request = request.model_copy(
        update={"mapping": request.mapping.model_copy(update={"orders": orders}), "files": files}
    )
    text = "\n".join(_texts(blocks.approval_message(request)))
    reading = text[text.index("Reading:") :]
    assert "```" in reading and "*paid*" in reading and "~voided~" in reading
    assert f"`{long_name}`" in text


def test_a_long_question_with_a_menu_says_where_the_rest_is() -> None:
    question = Clarification(
        role=Role.PAYMENTS,
        field="captured_amount",
        question="Which column holds the captured amount? " + LONG * 5,
        choices=[f"Betrag (brutto) in der Abrechnungswährung, Variante {n}" for n in range(4)],
    )
    request = _request(PauseKind.CLARIFICATION).model_copy(update={"clarifications": [question]})
    rendered = blocks.approval_message(request)
    _within_limits(rendered)
    asked = [t for t in _texts(rendered) if t.startswith(":question:")]
    assert asked and asked[0].endswith("posted in this thread")
    assert blocks.request_overflows(request)
    labels = [
        o["text"]["text"]
        for b in rendered.blocks
        for o in (b.get("accessory") or {}).get("options", [])
    ]
    assert len(set(labels)) == 4, "long choices stay apart in the menu"


def test_many_long_questions_stay_within_fifty_blocks_and_are_counted() -> None:
    asked = [
        Clarification(
            role=None,
            field=None,
            question=f"question {n}: " + LONG * 6,
            choices=[f"choice {n} " + "y" * 200],
        )
        for n in range(9)
    ]
    request = _request(PauseKind.CLARIFICATION, warnings=300).model_copy(
        update={
            "clarifications": asked,
            "notes": [f"note {n}: {LONG}" for n in range(300)],
            "routine": [LONG] * 20,
        }
    )
    rendered = blocks.approval_message(request)
    _within_limits(rendered)
    text = " ".join(_texts(rendered))
    shown = len(re.findall(r":question: question \d+", text))
    assert shown < 9 and f"…and {9 - shown:,} more questions" in text
    assert blocks.request_overflows(request)


def test_who_made_the_request_and_what_each_edit_changed_is_shown() -> None:
    request = _request().model_copy(
        update={
            "requesters": ("U0ALICE", "U0BOB"),
            "edits": (("U0BOB", "payments.kinds_ignore=refunded"),),
            "provenance": (
                "revision 1: orders.csv, payments.csv uploaded by U0ALICE",
                "edited by U0BOB: payments.kinds_ignore=refunded",
            ),
        }
    )
    text = "\n".join(_texts(blocks.approval_message(request)))
    assert "*Made by*" in text
    assert "• edited by <@U0BOB>: payments.kinds_ignore=refunded" in text
    whole = render_request(request)
    assert "made: edited by U0BOB: payments.kinds_ignore=refunded" in whole


def test_a_request_whose_whole_text_could_not_be_posted_cannot_be_approved_from_it() -> None:
    request = _request(warnings=300)
    held = blocks.approval_message(request, whole_shown=False)
    _within_limits(held)
    assert [e["action_id"] for e in held.blocks[-1]["elements"]] == ["edit_mapping", "reject"]
    assert "Approve is held back" in json.dumps(held.blocks)


def test_the_whole_request_names_a_required_field_with_no_column() -> None:
    request = _request()
    fields = [
        f.model_copy(update={"column": None}) if f.field == "order_amount" else f
        for f in request.fields
    ]
    request = request.model_copy(update={"fields": fields})
    slack = "\n".join(_texts(blocks.approval_message(request)))
    assert "`order_amount` ← _no column found_ (required)" in slack
    assert "orders.order_amount     <- no column found (required)" in render_request(request)
