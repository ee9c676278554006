"""The rules of what values mean (issue 36), each on a small export written for its rule.

Order statuses are accounted for as payment statuses are; a word a person gives that the
column never holds is refused; a tender column is no row kind; signs say refunds and credit
notes; a refund whose amount sits in a debit column is read from there; the policy in force
reaches inference and validation; and, for random words in the status and kind columns, every
distinct value either has a meaning on the request or stops the approval (a property).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.data.ingest import inspect_csv
from agent.data.mapping import Proposal, infer_mapping
from agent.data.normalize import ValidationReport
from agent.data.pipeline import JobResult, run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Mapping, Role, kind_word
from agent.data.wording import words_of
from agent.identity import digest

LIMIT = 1 << 30


def _write(folder: Path, orders: str, payments: str) -> dict[Role, tuple[Path, str]]:
    (folder / "orders.csv").write_text(orders, encoding="utf-8")
    (folder / "payments.csv").write_text(payments, encoding="utf-8")
    return {
        Role.ORDERS: (folder / "orders.csv", "orders.csv"),
        Role.PAYMENTS: (folder / "payments.csv", "payments.csv"),
    }


def _propose(
    files: dict[Role, tuple[Path, str]],
    answers: dict[Role, dict[str, str]] | None = None,
    policy: Policy | None = None,
) -> Proposal:
    return infer_mapping(
        *(inspect_csv(path, name, max_bytes=LIMIT) for path, name in files.values()),
        answers=answers,
        vocabulary=(policy or Policy()).vocabulary(),
    )


def _validate(
    files: dict[Role, tuple[Path, str]], mapping: Mapping, policy: Policy | None = None
) -> ValidationReport:
    return load_and_validate(connect(), files, mapping, policy=policy or Policy())


def _run(files: dict[Role, tuple[Path, str]], mapping: Mapping, folder: Path) -> JobResult:
    result = run_job(files, mapping, Policy(), folder / "exceptions.csv")
    for ledger in result.reconciliation.summary().ledger:
        assert ledger.accounted == ledger.records
    return result


def _counts(result: JobResult) -> dict[str, int]:
    return {c: n for c, n in result.reconciliation.summary().counts.items() if n}


def _orders(*rows: tuple[str, str, str]) -> str:
    return "order_id,total,currency,status\n" + "".join(
        f"{oid},{total},EUR,{status}\n" for oid, total, status in rows
    )


def _payments(*rows: tuple[str, str, str, str]) -> str:
    return "payment_id,order_ref,amount,currency,status\n" + "".join(
        f"{pid},{ref},{amount},EUR,{status}\n" for pid, ref, amount, status in rows
    )


PAID = [(f"{100 + i}", f"{10 + i}.00", "paid") for i in range(1, 9)]
CAPTURES = [(f"P{100 + i}", f"{100 + i}", f"{10 + i}.00", "succeeded") for i in range(1, 9)]


def test_an_order_status_no_word_names_stops_the_approval_with_the_meanings_to_choose(
    tmp_path: Path,
) -> None:
    files = _write(
        tmp_path,
        _orders(*PAID, ("109", "19.00", "Holded")),
        _payments(*CAPTURES, ("P109", "109", "19.00", "succeeded")),
    )
    mapping = _propose(files).mapping
    assert mapping is not None
    [error] = words_of(_validate(files, mapping).errors)
    assert '"holded" (1, e.g. rows 9)' in error
    assert "statuses_voided" in error and "statuses_paid" in error
    # Answered, the meaning is part of the mapping approved, and of its digest.
    answered = _propose(files, {Role.ORDERS: {"statuses_pending": "Holded"}}).mapping
    assert answered is not None and _validate(files, answered).errors == []
    voided = _propose(files, {Role.ORDERS: {"statuses_voided": "Holded"}}).mapping
    assert voided is not None
    assert digest(answered.canonical()) != digest(voided.canonical())
    # Read as voided, the order whose capture was kept is a finding; as pending, it is not.
    assert _counts(_run(files, voided, tmp_path)) == {"status_mismatch": 1}
    assert _counts(_run(files, answered, tmp_path)) == {}


def test_a_known_status_found_past_the_sample_is_asked_with_its_meaning_proposed(
    tmp_path: Path,
) -> None:
    # The proposal read the first rows only; the whole file holds one more status.
    files = _write(tmp_path, _orders(*PAID), _payments(*CAPTURES))
    mapping = _propose(files).mapping
    assert mapping is not None
    (tmp_path / "orders.csv").write_text(_orders(*PAID, ("109", "19.00", "Storniert")))
    [error] = words_of(_validate(files, mapping).errors)
    assert 'orders.statuses_voided="storniert"' in error


def test_the_request_shows_every_order_status_with_its_meaning_and_rows(tmp_path: Path) -> None:
    files = _write(
        tmp_path,
        _orders(*PAID, ("109", "19.00", "Remboursé"), ("110", "20.00", "wc-cancelled")),
        _payments(*CAPTURES),
    )
    mapping = _propose(files).mapping
    assert mapping is not None
    report = _validate(files, mapping)
    assert report.errors == []
    [fact] = [f for f in words_of(report.facts) if "order statuses in" in f]
    assert "paid: paid (8)" in fact
    assert "voided: wc-cancelled (1)" in fact and "refunded: remboursé (1)" in fact


def test_a_word_the_column_never_holds_is_refused_with_the_column_s_values(
    tmp_path: Path,
) -> None:
    files = _write(tmp_path, _orders(*PAID), _payments(*CAPTURES, ("P1", "", "", "fee")))
    typo = _propose(files, {Role.ORDERS: {"statuses_refunded": "closd"}}).mapping
    assert typo is not None
    [error] = words_of(_validate(files, typo).errors)
    assert '"closd" (orders.statuses_refunded)' in error and '"paid"' in error
    padded = _propose(files, {Role.PAYMENTS: {"kinds_ignore": "fee, settled_batch_049"}}).mapping
    assert padded is not None
    [error] = words_of(_validate(files, padded).errors)
    assert '"settled_batch_049" (payments.kinds_ignore)' in error


def test_a_tender_column_is_never_read_as_the_row_kind(tmp_path: Path) -> None:
    # Authorize.Net-like: `Payment Type` says how the customer paid, `Status` what happened.
    tender = ("Credit card", "Bank transfer", "PayPal")
    payments = "Transaction ID,Invoice,Amount,Currency,Payment Type,Status\n" + "".join(
        f"T{i},{100 + i},{10 + i}.00,EUR,{tender[i % 3]},Settled\n" for i in range(1, 9)
    )
    files = _write(tmp_path, _orders(*PAID), payments)
    mapping = _propose(files).mapping
    assert mapping is not None
    kinds = mapping.payments.options.kinds
    assert kinds is None or kinds.column != "Payment Type"
    assert _validate(files, mapping).errors == []
    assert _counts(_run(files, mapping, tmp_path)) == {}


def test_kinds_are_found_by_values_under_a_header_in_another_language(tmp_path: Path) -> None:
    payments = "Transaktions-ID,Bestellnummer,Betrag,Waehrung,Art\n" + "".join(
        f"T{i},{100 + i},{10 + i}.00,EUR,Zahlung\n" for i in range(1, 9)
    )
    payments += "R3,103,-13.00,EUR,Rückerstattung\nF1,,-0.50,EUR,Gebühr\n"
    files = _write(tmp_path, _orders(*PAID), payments)
    mapping = _propose(files).mapping
    assert mapping is not None
    kinds = mapping.payments.options.kinds
    # Read by its values: as the status column that says the kind, or as a kind column.
    column = kinds.column if kinds is not None else None
    assert kinds is not None and "Art" in (column, mapping.payments.columns.get("payment_status"))
    assert (kinds.refund, kinds.ignore) == (("rückerstattung",), ("gebühr",))
    assert _validate(files, mapping).errors == []
    # Order 103 says paid while its capture went back in full: the statuses disagree.
    assert _counts(_run(files, mapping, tmp_path)) == {"status_mismatch": 1}


def test_negative_captures_are_refunds_by_their_size_and_the_request_says_how_many(
    tmp_path: Path,
) -> None:
    files = _write(
        tmp_path,
        _orders(*PAID[:7], ("108", "18.00", "partially refunded")),
        _payments(*CAPTURES, ("P108R", "108", "-8.00", "succeeded")),
    )
    mapping = _propose(files).mapping
    assert mapping is not None
    report = _validate(files, mapping)
    assert report.errors == []
    assert any(
        "1 rows have a negative amount" in f and "refunds" in f for f in words_of(report.facts)
    )
    result = _run(files, mapping, tmp_path)
    assert _counts(result) == {}  # not a partial capture of -8.00, not a capture without order
    ledger = result.reconciliation.summary().ledger[1]
    assert (ledger.matched, ledger.findings) == (9, 0)


def test_a_credit_note_is_not_an_order_without_capture(tmp_path: Path) -> None:
    files = _write(
        tmp_path,
        _orders(*PAID, ("CN1", "-20.00", "paid"), ("CN2", "-5.00", "paid")),
        _payments(*CAPTURES, ("R2", "CN2", "-5.00", "succeeded")),
    )
    mapping = _propose(files).mapping
    assert mapping is not None
    report = _validate(files, mapping)
    assert any("credit notes" in f for f in words_of(report.facts))
    result = _run(files, mapping, tmp_path)
    assert _counts(result) == {}  # CN2 was paid out by a refund of its size
    orders = result.reconciliation.summary().ledger[0]
    assert orders.ignored == {"credit_note": 1}


def _adyen(*rows: tuple[str, str, str, str, str]) -> str:
    head = (
        "Psp Reference,Merchant Reference,Type,Gross Currency,Gross Debit (GC),Gross Credit (GC)\n"
    )
    return head + "".join(f"{a},{b},{c},EUR,{d},{e}\n" for a, b, c, d, e in rows)


def test_refunds_in_a_debit_column_count_what_they_returned(tmp_path: Path) -> None:
    orders = _orders(("201", "50.00", "paid"), ("202", "100.00", "refunded"), *PAID)
    rows = [("PSP201", "201", "Settled", "", "50.00"), ("PSP202", "202", "Settled", "", "100.00")]
    rows += [(f"PSP{100 + i}", f"{100 + i}", "Settled", "", f"{10 + i}.00") for i in range(1, 9)]
    rows += [
        ("PSP201", "201", "Refunded", "30.00", ""),  # 30 of 50: the order is still paid
        ("PSP202", "202", "Refunded", "100.00", ""),
        ("PSP202", "202", "Refunded", "100.00", ""),  # refunded twice: 200 of 100
        ("", "", "Fee", "0.25", ""),
    ]
    files = _write(tmp_path, orders, _adyen(*rows))
    mapping = _propose(files).mapping
    assert mapping is not None
    assert mapping.payments.columns["refunded_amount"] == "Gross Debit (GC)"
    assert _validate(files, mapping).errors == []
    result = _run(files, mapping, tmp_path)
    [finding] = result.reconciliation.findings("status_mismatch")
    assert (finding.order_ids, finding.reason) == (["202"], "refunded_more_than_captured")
    assert _counts(result) == {"status_mismatch": 1}


def test_a_refund_whose_amount_does_not_read_refunds_nothing_unsaid(tmp_path: Path) -> None:
    orders = _orders(("201", "50.00", "paid"), *PAID)
    rows = [("PSP201", "201", "Settled", "", "50.00")]
    rows += [(f"PSP{100 + i}", f"{100 + i}", "Settled", "", f"{10 + i}.00") for i in range(1, 9)]
    rows += [("PSP201", "201", "Refunded", "", ""), ("", "", "Fee", "0.25", "")]
    files = _write(tmp_path, orders, _adyen(*rows))
    mapping = _propose(files).mapping
    assert mapping is not None
    result = _run(files, mapping, tmp_path)
    # Not "refunded everything" (which would make order 201 a status mismatch): unreadable.
    [finding] = result.reconciliation.findings("unreadable_row")
    assert finding.reason == "empty_amount"
    assert "status_mismatch" not in _counts(result)


def test_a_capture_in_a_localised_refunded_state_stays_a_capture(tmp_path: Path) -> None:
    files = _write(
        tmp_path,
        _orders(*PAID[:7], ("108", "18.00", "Rimborsato")),
        _payments(*CAPTURES[:7], ("P108", "108", "18.00", "Rimborsato"), ("P1", "", "", "fee")),
    )
    mapping = _propose(files).mapping
    assert mapping is not None
    kinds = mapping.payments.options.kinds
    assert kinds is not None and "rimborsato" in kinds.capture and kinds.refunded == ("rimborsato",)
    assert _validate(files, mapping).errors == []
    # The refunded order and its refunded capture agree: no order counted twice, no finding.
    assert _counts(_run(files, mapping, tmp_path)) == {}


def test_the_policy_in_force_reaches_inference_and_validation(tmp_path: Path) -> None:
    policy = Policy(failed_payment_statuses=["failed"])
    files = _write(
        tmp_path,
        _orders(*PAID, ("109", "19.00", "paid")),
        _payments(*CAPTURES, ("P109", "109", "19.00", "declined")),
    )
    mapping = _propose(files, policy=policy).mapping
    assert mapping is not None
    # `declined` is not this policy's failed word, but the vocabulary's: proposed as ignored.
    kinds = mapping.payments.options.kinds
    assert kinds is not None and kinds.ignore == ("declined",)
    assert _validate(files, mapping, policy).errors == []
    result = run_job(files, mapping, policy, tmp_path / "x.csv")
    assert _counts(result) == {"order_without_capture": 1}
    # A team's own words override the vocabulary, and change the policy's version.
    own = Policy(order_status_words={"Paid": "pending"})
    assert own.vocabulary().order_meaning("paid") == "pending"
    assert own.version != Policy().version


WORDS = st.sampled_from(
    [
        "paid", "settled", "Zahlung", "refund", "Rimborsato", "fee", "payout", "declined",
        "holded", "Foo Bar", "xq7", "1", "2", "Credit card", "pending", "wc-refunded",
        "Closed", "Annulée", "approved", "on review", "TRANSFER", "chargeback",
    ]
)  # fmt: skip


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    order_words=st.lists(WORDS, min_size=8, max_size=8),
    pay_words=st.lists(WORDS, min_size=8, max_size=8),
)
def test_every_value_has_a_meaning_on_the_request_or_stops_the_approval(
    tmp_path_factory: object, order_words: list[str], pay_words: list[str]
) -> None:
    folder = Path(tmp_path_factory.mktemp("prop"))
    orders = _orders(*((f"{100 + i}", f"{10 + i}.00", w) for i, w in enumerate(order_words)))
    payments = _payments(
        *((f"P{i}", f"{100 + i}", f"{10 + i}.00", w) for i, w in enumerate(pay_words))
    )
    files = _write(folder, orders, payments)
    mapping = _propose(files).mapping
    if mapping is None:
        return  # a question before validation: nothing approvable
    report = _validate(files, mapping)
    text = " ".join(words_of([*report.errors, *report.facts]))
    statuses = mapping.orders.options.statuses
    for word in {kind_word(w) for w in order_words}:
        named = f"{word} (" in text or f'"{word}"' in text
        assert named, word  # its meaning on the request, or asked about
        if statuses is None or statuses.meaning_of(word) is None:
            assert report.errors, word  # no meaning: never silently paid
    kinds = mapping.payments.options.kinds
    policy = Policy()
    for word in {kind_word(w) for w in pay_words}:
        listed = kinds is not None and kinds.kind_of(word) is not None
        known = word in policy.failed_payment_statuses or word in policy.refunded_payment_statuses
        captured = policy.vocabulary().row_kind(word) == "capture"
        if not (listed or known or captured):
            assert report.errors, word  # an unknown payment value is never silently a capture


def test_a_status_column_is_found_by_its_values_whatever_its_header(tmp_path: Path) -> None:
    # Magento's `state`, Shopware's `Bestellstatus`: cancelled and refunded orders kept money.
    for header in ("state", "Bestellstatus"):
        orders = f"order_id,grand_total,currency,{header}\n" + "".join(
            f"{oid},{total},EUR,{status}\n"
            for oid, total, status in [
                *PAID,
                ("201", "50.00", "canceled"),
                ("202", "60.00", "closed"),
            ]
        )
        files = _write(
            tmp_path,
            orders,
            _payments(
                *CAPTURES,
                ("P201", "201", "50.00", "succeeded"),
                ("P202", "202", "60.00", "succeeded"),
            ),
        )
        mapping = _propose(files).mapping
        assert mapping is not None and mapping.orders.columns["order_status"] == header
        assert _counts(_run(files, mapping, tmp_path)) == {"status_mismatch": 2}


def test_a_refunded_order_whose_capture_was_kept_is_found_without_a_payment_status(
    tmp_path: Path,
) -> None:
    # A ledger with a kind column and no status column: the capture's refunded state is
    # false, not unknown, so the refunded order that kept its money is a finding.
    payments = "id,reporting_category,order_ref,gross,currency\n" + "".join(
        f"t{i},charge,{100 + i},{10 + i}.00,EUR\n" for i in range(1, 9)
    )
    payments += "t9,charge,205,55.00,EUR\nt10,fee,,-1.00,EUR\n"
    files = _write(tmp_path, _orders(*PAID, ("205", "55.00", "refunded")), payments)
    mapping = _propose(files).mapping
    assert mapping is not None
    assert _validate(files, mapping).errors == []
    assert _counts(_run(files, mapping, tmp_path)) == {"status_mismatch": 1}


def test_money_back_after_a_refund_is_asked_about_never_ignored(tmp_path: Path) -> None:
    payments = "id,type,order_ref,amount,currency\n" + "".join(
        f"t{i},charge,{100 + i},{10 + i}.00,EUR\n" for i in range(1, 9)
    )
    payments += "r1,refund,105,-15.00,EUR\nr2,refund_failure,105,15.00,EUR\nf1,fee,,-1.00,EUR\n"
    files = _write(tmp_path, _orders(*PAID[:4], ("105", "15.00", "refunded"), *PAID[5:]), payments)
    mapping = _propose(files).mapping
    assert mapping is not None
    [error] = words_of(_validate(files, mapping).errors)
    assert '"refund_failure" (1, e.g. rows 10)' in error


def test_a_backorder_state_says_in_brackets_whether_it_was_paid(tmp_path: Path) -> None:
    files = _write(
        tmp_path,
        _orders(*PAID, ("201", "20.00", "Artikel nicht auf Lager (bezahlt)")),
        _payments(*CAPTURES),
    )
    mapping = _propose(files).mapping
    assert mapping is not None and _validate(files, mapping).errors == []
    # Paid, and nobody captured it: a finding, not an order awaiting payment.
    assert _counts(_run(files, mapping, tmp_path)) == {"order_without_capture": 1}


def test_a_failed_status_listed_as_a_capture_is_refused(tmp_path: Path) -> None:
    files = _write(
        tmp_path,
        _orders(*PAID, ("109", "19.00", "paid")),
        _payments(*CAPTURES, ("P109", "109", "19.00", "declined"), ("F", "", "", "fee")),
    )
    edited = _propose(files, {Role.PAYMENTS: {"kinds_capture": "succeeded, declined"}}).mapping
    assert edited is not None
    [error] = words_of(_validate(files, edited).errors)
    assert '"declined" (payments.kinds_capture) is a failed attempt under the policy' in error


def test_rows_the_kinds_ignore_do_not_count_against_the_references(tmp_path: Path) -> None:
    # A statement's fee and deposit rows carry text where a sale carries its order: they name
    # no order and need not (issue 37: no dead ends).
    payments = "id,type,title,amount,currency\n" + "".join(
        f"s{i},sale,{100 + i},{10 + i}.00,EUR\n" for i in range(1, 5)
    )
    payments += "".join(f"f{i},fee,Transaction fee item {i},-0.50,EUR\n" for i in range(1, 9))
    files = _write(tmp_path, _orders(*PAID[:4]), payments)
    mapping = _propose(files, {Role.PAYMENTS: {"order_id": "title"}}).mapping
    assert mapping is not None
    report = _validate(files, mapping)
    assert report.errors == []
    assert "4 of 4 payment references in payments.csv name an order in orders.csv" in words_of(
        report.routine
    )


def test_the_request_shows_every_payment_status_with_what_it_is_read_as(tmp_path: Path) -> None:
    files = _write(
        tmp_path,
        _orders(*PAID),
        _payments(
            *CAPTURES[:7], ("P108", "108", "18.00", "refunded"), ("X", "108", "18.00", "declined")
        ),
    )
    mapping = _propose(files).mapping
    assert mapping is not None
    report = _validate(files, mapping)
    [fact] = [f for f in words_of(report.facts) if "payment statuses in" in f]
    assert "succeeded = capture (7)" in fact
    assert "refunded = capture, refunded (1)" in fact
    assert "declined = failed attempt (1)" in fact
