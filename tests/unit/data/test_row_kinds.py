"""Row kinds: which values of a status or type column are captures, refunds, or rows to ignore.

Each test writes an orders file and a payments file, infers the mapping as the bot would (with a
person's answers where the test says so), validates it, reconciles, and checks where each row
went: the findings, the ledger and the exceptions CSV.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from agent.data.ingest import inspect_csv
from agent.data.mapping import Proposal, infer_mapping
from agent.data.normalize import ValidationReport, meanings
from agent.data.pipeline import JobResult, run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import READING_OPTIONS, Mapping, Role, RowKinds
from agent.data.vocabulary import BUILTIN
from agent.data.wording import words_of
from agent.errors import MappingError, UnknownColumnError

ORDERS = "order_id,total,currency,status\n" + "".join(
    f"{1000 + i},{10 + i}.00,EUR,paid\n" for i in range(1, 9)
)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _settlement(rows: list[tuple[str, str, str, str, str]]) -> str:
    """An Adyen-like settlement report: psp reference, merchant reference, type, amount."""
    body = "".join(f"{psp},{ref},{kind},{amount},{ccy}\n" for psp, ref, kind, amount, ccy in rows)
    return "Psp Reference,Merchant Reference,Type,Amount,Currency\n" + body


def _captures(*extra: tuple[str, str, str, str, str]) -> list[tuple[str, str, str, str, str]]:
    rows = [(f"PSP{i}", str(1000 + i), "Settled", f"{10 + i}.00", "EUR") for i in range(1, 9)]
    return rows + list(extra)


def _propose(tmp_path: Path, payments: str, answers: dict[str, str] | None = None) -> Proposal:
    orders = _write(tmp_path / "orders.csv", ORDERS)
    pay = _write(tmp_path / "payments.csv", payments)
    return infer_mapping(
        inspect_csv(orders, orders.name, max_bytes=1 << 30),
        inspect_csv(pay, pay.name, max_bytes=1 << 30),
        answers={Role.PAYMENTS: answers} if answers else None,
    )


def _files(tmp_path: Path) -> dict[Role, tuple[Path, str]]:
    return {
        Role.ORDERS: (tmp_path / "orders.csv", "orders.csv"),
        Role.PAYMENTS: (tmp_path / "payments.csv", "payments.csv"),
    }


def _validate(tmp_path: Path, mapping: Mapping) -> ValidationReport:
    return load_and_validate(connect(), _files(tmp_path), mapping, policy=Policy())


def _run(tmp_path: Path, mapping: Mapping, policy: Policy | None = None) -> JobResult:
    result = run_job(_files(tmp_path), mapping, policy or Policy(), tmp_path / "exceptions.csv")
    for ledger in result.reconciliation.summary().ledger:
        assert ledger.accounted == ledger.records
    return result


def _exceptions(tmp_path: Path) -> list[dict[str, str]]:
    with (tmp_path / "exceptions.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def _found(result: JobResult) -> dict[str, int]:
    return {c: n for c, n in result.reconciliation.summary().counts.items() if n}


def test_the_kind_options_are_answerable_by_name() -> None:
    for name in ("kinds_column", "kinds_capture", "kinds_refund", "kinds_ignore"):
        assert READING_OPTIONS[name]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("Settled", "capture"),
        ("SALE", "capture"),
        ("Express Checkout Payment", "capture"),
        ("Refunded", "refund"),
        ("Payment Refund", "refund"),
        ("credit", "refund"),
        ("Chargeback", "refund"),
        ("Fee", "ignore"),
        ("MerchantPayout", "ignore"),
        ("General Withdrawal", "ignore"),
        ("General Authorization", "ignore"),
        ("Pending", "ignore"),
        ("open", "ignore"),
        ("Denied", "ignore"),
        ("Balance adjustment", "ignore"),
        ("Holdback", None),
    ],
)
def test_values_are_read_by_the_words_they_are_made_of(value: str, kind: str | None) -> None:
    assert BUILTIN.row_kind(value) == kind


def test_fees_payouts_and_refunds_of_a_settlement_report_are_not_captures(
    tmp_path: Path,
) -> None:
    report = _settlement(
        _captures(
            ("PSP3", "1003", "Refunded", "-13.00", "EUR"),
            ("", "", "Fee", "", "EUR"),
            ("", "", "MerchantPayout", "", "EUR"),
        )
    )
    proposal = _propose(tmp_path, report)
    mapping = proposal.mapping
    assert mapping is not None, proposal.clarifications
    assert mapping.payments.options.kinds == RowKinds(
        capture=("settled",), refund=("refunded",), ignore=("fee", "merchantpayout")
    )
    assert _validate(tmp_path, mapping).errors == []
    result = _run(tmp_path, mapping)
    # Order 1003 is still "paid" while its only capture was refunded in full.
    assert _found(result) == {"status_mismatch": 1}
    [finding] = result.reconciliation.findings("status_mismatch")
    assert finding.order_ids == ["1003"]
    assert finding.evidence[1].rows == [3, 9]  # the capture and its refund
    _, payments = result.reconciliation.summary().ledger
    assert payments.ignored == {"row_kind": 2}
    assert (payments.matched, payments.findings) == (7, 2)
    ignored = [r for r in _exceptions(tmp_path) if r["category"] == "ignored"]
    assert [(r["reason"], r["payments_rows"]) for r in ignored] == [
        ("row_kind:fee", "10"),
        ("row_kind:merchantpayout", "11"),
    ]


def test_a_refunded_order_with_a_refund_row_is_no_finding(tmp_path: Path) -> None:
    _write(tmp_path / "orders.csv", ORDERS.replace("1003,13.00,EUR,paid", "1003,13.00,EUR,closed"))
    report = _settlement(_captures(("PSP3", "1003", "Refunded", "13.00", "EUR")))
    pay = _write(tmp_path / "payments.csv", report)
    proposal = infer_mapping(
        inspect_csv(tmp_path / "orders.csv", "orders.csv", max_bytes=1 << 30),
        inspect_csv(pay, pay.name, max_bytes=1 << 30),
    )
    assert proposal.mapping is not None
    result = _run(tmp_path, proposal.mapping)
    assert _found(result) == {}
    _, payments = result.reconciliation.summary().ledger
    assert payments.matched == 9


def test_a_partial_refund_is_no_finding(tmp_path: Path) -> None:
    # The refund is matched by the order reference: its own id names no capture.
    proposal = _propose(
        tmp_path,
        _settlement(
            _captures(("RF1", "1004", "Refunded", "-4.00", "EUR"), ("", "", "Fee", "0.10", "EUR"))
        ),
    )
    assert proposal.mapping is not None
    result = _run(tmp_path, proposal.mapping)
    assert _found(result) == {}


def test_a_refund_of_nothing_in_the_files_is_a_finding(tmp_path: Path) -> None:
    proposal = _propose(
        tmp_path,
        _settlement(
            _captures(("RF9", "1999", "Refunded", "-5.00", "EUR"), ("", "", "Fee", "", "EUR"))
        ),
    )
    assert proposal.mapping is not None
    result = _run(tmp_path, proposal.mapping)
    assert _found(result) == {"capture_without_order": 1}
    [finding] = result.reconciliation.findings("capture_without_order")
    assert (finding.reason, finding.payment_ids, finding.evidence[0].rows, finding.actual) == (
        "refund",
        ["RF9"],
        [9],
        "5.00",
    )


def test_a_status_word_for_a_capture_state_stays_a_capture(tmp_path: Path) -> None:
    # Stripe's "refunded" is the state of a charge (its own id, its amount captured): no kinds.
    rows = "".join(f"ch_{i},{1000 + i},{10 + i}.00,EUR,succeeded\n" for i in range(1, 8))
    payments = "id,order_id,amount,currency,status\n" + rows + "ch_8,1008,18.00,EUR,refunded\n"
    proposal = _propose(tmp_path, payments)
    assert proposal.mapping is not None
    assert proposal.mapping.payments.options.kinds is None
    assert "kinds" not in proposal.mapping.canonical()["payments"]["options"]


def test_an_unknown_row_kind_is_an_error_with_the_edit_and_an_unreadable_row(
    tmp_path: Path,
) -> None:
    proposal = _propose(tmp_path, _settlement(_captures(("", "", "Fee", "", "EUR"))))
    mapping = proposal.mapping
    assert mapping is not None
    # The next export has a value nobody classified.
    _write(
        tmp_path / "payments.csv",
        _settlement(_captures(("", "", "Fee", "", "EUR"), ("PSPX", "1002", "Holdback", "", ""))),
    )
    [error] = words_of(_validate(tmp_path, mapping).errors)
    assert '"holdback" (1, e.g. rows 10)' in error
    assert 'edit payments.kinds_ignore="fee, holdback"' in error
    result = _run(tmp_path, mapping)
    _, payments = result.reconciliation.summary().ledger
    assert payments.unreadable == {"unknown_row_kind": 1}
    [finding] = result.reconciliation.findings("unreadable_row")
    assert finding.reason == "unknown_row_kind:holdback"


def test_a_person_classifies_the_values_by_name(tmp_path: Path) -> None:
    report = _settlement(
        _captures(("", "", "Fee", "", "EUR"), ("PSPX", "1002", "Holdback", "", ""))
    )
    # Unanswered, the value no known word names is in no list: validation asks about it...
    unanswered = _propose(tmp_path, report).mapping
    assert unanswered is not None
    assert unanswered.payments.options.kinds == RowKinds(capture=("settled",), ignore=("fee",))
    [error] = words_of(_validate(tmp_path, unanswered).errors)
    assert 'edit payments.kinds_ignore="fee, holdback"' in error
    # ...until a person says what the values are.
    proposal = _propose(
        tmp_path,
        report,
        {"kinds_capture": "Settled", "kinds_ignore": "Fee, Holdback"},
    )
    mapping = proposal.mapping
    assert mapping is not None
    kinds = mapping.payments.options.kinds
    assert kinds == RowKinds(capture=("settled",), ignore=("fee", "holdback"))
    assert _validate(tmp_path, mapping).errors == []
    result = _run(tmp_path, mapping)
    assert _found(result) == {}
    assert result.reconciliation.summary().ledger[1].ignored == {"row_kind": 2}


def test_an_answer_moves_a_value_out_of_the_proposed_lists(tmp_path: Path) -> None:
    report = _settlement(_captures(("", "", "Fee", "", "EUR"), ("", "", "MerchantPayout", "", "")))
    proposal = _propose(tmp_path, report, {"kinds_refund": "MerchantPayout"})
    kinds = proposal.payments.options.kinds
    assert kinds is not None
    assert (kinds.refund, kinds.ignore) == (("merchantpayout",), ("fee",))


def test_the_kinds_column_is_answerable(tmp_path: Path) -> None:
    # A Square-like export: every status is Complete; the Event Type says refund.
    rows = [f"T{i},{1000 + i},{10 + i}.00,EUR,Complete,Payment,Online\n" for i in range(1, 9)] + [
        "T3,1003,-13.00,EUR,Complete,Refund,Online\n"
    ]
    payments = "Transaction ID,Order Reference ID,Total Collected,Currency,Status,Event,Src\n"
    payments += "".join(rows)
    # Found by its values, whatever its header says; the same when a person names it.
    found = _propose(tmp_path, payments).payments.options.kinds
    assert found == RowKinds(column="Event", capture=("payment",), refund=("refund",))
    proposal = _propose(tmp_path, payments, {"kinds_column": "Event"})
    mapping = proposal.mapping
    assert mapping is not None
    assert mapping.payments.options.kinds == RowKinds(
        column="Event", capture=("payment",), refund=("refund",)
    )
    result = _run(tmp_path, mapping)
    assert _found(result) == {"status_mismatch": 1}  # 1003 is still paid, refunded in full
    assert result.reconciliation.summary().ledger[1].findings == 2
    with pytest.raises(UnknownColumnError, match="kinds_column"):
        _propose(tmp_path, payments, {"kinds_column": "Nope"})


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ({"kinds_capture": "Settled, Fee"}, '"fee" is in kinds_capture and kinds_ignore'),
        ({"kinds_capture": ""}, "kinds_capture is empty"),
    ],
)
def test_lists_that_cannot_work_are_clear_errors(
    tmp_path: Path, answers: dict[str, str], message: str
) -> None:
    report = _settlement(_captures(("", "", "Fee", "", "EUR")))
    with pytest.raises(MappingError, match=message):
        _propose(tmp_path, report, {**answers, "kinds_ignore": "Fee"})


def test_row_kinds_are_part_of_the_mapping_digest(tmp_path: Path) -> None:
    report = _settlement(_captures(("", "", "Fee", "", "EUR")))
    first = _propose(tmp_path, report).mapping
    second = _propose(tmp_path, report, {"kinds_capture": "Settled, Sale"}).mapping
    assert first is not None and second is not None
    assert first.canonical()["payments"]["options"]["kinds"] == {
        "column": None,
        "capture": ["settled"],
        "refund": [],
        "ignore": ["fee"],
    }
    assert first.canonical() != second.canonical()


def test_a_refund_whose_amount_or_currency_does_not_read_is_an_unreadable_row(
    tmp_path: Path,
) -> None:
    # Not "refunded in full": an unreadable value is reported, never read as the whole capture.
    proposal = _propose(
        tmp_path,
        _settlement(
            _captures(
                ("RF4", "1004", "Refunded", "four euros", "EUR"),
                ("RF5", "1005", "Refunded", "-15.00", "XQQ"),
            )
        ),
    )
    assert proposal.mapping is not None
    result = _run(tmp_path, proposal.mapping)
    reasons = sorted(f.reason for f in result.reconciliation.findings("unreadable_row"))
    assert reasons == ["unreadable_amount", "unreadable_currency"]
    _, payments = result.reconciliation.summary().ledger
    assert payments.matched == 8


def test_a_refund_of_an_order_no_capture_paid_is_a_finding(tmp_path: Path) -> None:
    # Order 1009 was cancelled and never captured, yet money went back on it.
    _write(tmp_path / "orders.csv", ORDERS + "1009,19.00,EUR,cancelled\n")
    pay = _write(
        tmp_path / "payments.csv",
        _settlement(_captures(("RF9", "1009", "Refunded", "-19.00", "EUR"))),
    )
    proposal = infer_mapping(
        inspect_csv(tmp_path / "orders.csv", "orders.csv", max_bytes=1 << 30),
        inspect_csv(pay, pay.name, max_bytes=1 << 30),
    )
    assert proposal.mapping is not None
    result = _run(tmp_path, proposal.mapping)
    [finding] = result.reconciliation.findings("order_without_capture")
    assert (finding.reason, finding.order_ids, finding.payment_ids) == (
        "refund_without_capture",
        ["1009"],
        ["RF9"],
    )
    assert [e.rows for e in finding.evidence] == [[9], [9]]


def test_a_refund_in_another_currency_than_its_order_is_a_finding(tmp_path: Path) -> None:
    # 400 JPY are not 4.00 EUR: the refund is reported, not subtracted from the order's capture.
    proposal = _propose(
        tmp_path, _settlement(_captures(("RF4", "1004", "Refunded", "-400", "JPY")))
    )
    assert proposal.mapping is not None
    result = _run(tmp_path, proposal.mapping)
    [finding] = result.reconciliation.findings("currency_mismatch")
    assert (finding.reason, finding.order_ids, finding.payment_ids) == ("refund", ["1004"], ["RF4"])
    assert _found(result) == {"currency_mismatch": 1}


def _stripe(statuses: dict[int, str]) -> str:
    """A Stripe-like charges export paying the eight orders, with the given statuses."""
    rows = "".join(
        f"ch_{i},{1000 + i},{10 + i}.00,EUR,{statuses.get(i, 'succeeded')}\n" for i in range(1, 9)
    )
    return "id,order_id,amount,currency,status\n" + rows


@pytest.mark.parametrize(
    "value",
    [
        "requires_capture",
        "processing",
        "Payment Failed",
        "Charge canceled",
        "Not paid",
        "Nicht bezahlt",
        "Payment Refused",
        "Payment Unsuccessful",
    ],
)
def test_money_not_taken_is_never_read_as_a_capture(tmp_path: Path, value: str) -> None:
    # A capture word inside the status ("capture", "payment", "charge") does not make it one.
    assert BUILTIN.row_kind(value) == "ignore"
    mapping = _propose(tmp_path, _stripe({2: value, 3: value})).mapping
    assert mapping is not None
    kinds = mapping.payments.options.kinds
    assert kinds is not None and kinds.ignore == (value.lower().replace(" ", "_"),)
    assert not _validate(tmp_path, mapping).errors
    result = _run(tmp_path, mapping)
    orders = {tuple(f.order_ids) for f in result.reconciliation.findings("order_without_capture")}
    assert orders == {("1002",), ("1003",)}


def test_a_status_no_word_names_stops_the_approval_with_the_edit(tmp_path: Path) -> None:
    # The proposal saw only captures; the next export has a status nobody classified, and a
    # failed word padded with a no-break space (a Windows-1252 export), which reads as failed.
    mapping = _propose(tmp_path, _stripe({})).mapping
    assert mapping is not None and mapping.payments.options.kinds is None
    _write(tmp_path / "payments.csv", _stripe({4: "on_review", 6: "on_review", 7: "Failed\xa0"}))
    [error] = words_of(_validate(tmp_path, mapping).errors)
    assert '"on_review" (2, e.g. rows 4, 6)' in error
    assert 'payments.kinds_capture="succeeded, on_review" if they took money' in error
    assert 'payments.kinds_capture="succeeded" payments.kinds_ignore="on_review" if they' in error
    # The edit it names is a mapping that reads: those rows are ignored, the orders unpaid.
    answered = _propose(
        tmp_path,
        _stripe({4: "on_review", 6: "on_review", 7: "Failed\xa0"}),
        {"kinds_capture": "succeeded", "kinds_ignore": "on_review"},
    ).mapping
    assert answered is not None and not _validate(tmp_path, answered).errors
    result = _run(tmp_path, answered)
    orders = {tuple(f.order_ids) for f in result.reconciliation.findings("order_without_capture")}
    assert orders == {("1004",), ("1006",), ("1007",)}


def test_shopify_s_kind_column_says_an_authorization_took_no_money(tmp_path: Path) -> None:
    # Shopify's transactions export: `Kind` (authorization, capture, sale, refund, void) says
    # what each row is; every `Status` is success.
    rows = [("#1001", "authorization", "20.00"), ("#1001", "capture", "20.00")]
    rows += [(f"#{1000 + i}", "sale", f"{10 + i}.00") for i in range(2, 8)]
    rows += [("#1008", "authorization", "18.00")]
    payments = "Name,Kind,Status,Amount,Currency,Transaction ID\n" + "".join(
        f"{name},{kind},success,{amount},EUR,t{n}\n" for n, (name, kind, amount) in enumerate(rows)
    )
    orders = "order_id,total,currency,status\n" + "".join(
        f"{1000 + i},{10 + i}.00,EUR,paid\n" for i in range(1, 9)
    ).replace("1001,11.00", "1001,20.00")
    _write(tmp_path / "orders.csv", orders)
    mapping = _propose(tmp_path, payments).mapping
    assert mapping is not None
    kinds = mapping.payments.options.kinds
    assert kinds is not None and kinds.column == "Kind"
    assert "authorization" in kinds.ignore
    _write(tmp_path / "orders.csv", orders)
    result = _run(tmp_path, mapping)
    assert _found(result) == {"order_without_capture": 1}
    [unpaid] = result.reconciliation.findings("order_without_capture")
    assert unpaid.order_ids == ["1008"]


def test_a_status_beside_a_type_column_is_asked_about_when_no_word_names_it(
    tmp_path: Path,
) -> None:
    # PayPal: `Type` says the kind; a `Held` status that no word of the vocabulary names.
    rows = [("Express Checkout Payment", "Completed")] * 6 + [("General Withdrawal", "Completed")]
    rows += [("Express Checkout Payment", "Held")]
    payments = "Transaction ID,Invoice,Type,Status,Gross,Currency\n" + "".join(
        f"T{i},{1001 + i},{kind},{status},{10 + i}.00,EUR\n"
        for i, (kind, status) in enumerate(rows)
    )
    mapping = _propose(tmp_path, payments).mapping
    assert mapping is not None
    [error] = words_of(_validate(tmp_path, mapping).errors)
    assert '"held" (1, e.g. rows 8)' in error
    assert 'payments.kinds_ignore="general_withdrawal, held"' in error
    answered = _propose(tmp_path, payments, {"kinds_ignore": "general_withdrawal, held"}).mapping
    assert answered is not None and not _validate(tmp_path, answered).errors
    result = _run(tmp_path, answered)
    # 1007's row is a withdrawal, 1008's an uncleared payment: neither order was paid.
    unpaid = result.reconciliation.findings("order_without_capture")
    assert [f.order_ids for f in unpaid] == [["1007"], ["1008"]]


@pytest.mark.parametrize("value", ["submitted_for_settlement", "settling", "Disputed"])
def test_statuses_of_money_taken_are_captures(tmp_path: Path, value: str) -> None:
    # Braintree's captures before they settle, and a Stripe charge under dispute: money taken.
    assert BUILTIN.row_kind(value) == "capture"
    mapping = _propose(tmp_path, _stripe({2: value})).mapping
    assert mapping is not None and not _validate(tmp_path, mapping).errors
    assert _found(_run(tmp_path, mapping)) == {}


def test_a_status_column_of_too_many_values_to_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the most common statuses are looked at; past that bound the rest would have been
    # read as captures unchecked.
    mapping = _propose(tmp_path, _stripe({})).mapping
    assert mapping is not None
    monkeypatch.setattr(meanings, "MAX_VALUES", 3)
    _write(tmp_path / "payments.csv", _stripe({2: "paid", 3: "captured", 4: "settled"}))
    [error] = words_of(_validate(tmp_path, mapping).errors)
    assert "holds more than 3 different statuses" in error
