"""What every value means, on export pairs nobody on the project wrote (issue 36).

Each pair in tests/fixtures/meanings/ follows a vendor's published column list and status codes
(its README names the sources) and carries a truth file: the columns a person maps, what each
status and row-kind value means, and the findings a finance person expects of the rows. The
columns are given as a person's answers (which column is which is not the subject here); the
meanings are not: inference must propose them from the values, validation must account for
every value of the whole file (a meaning on the request, or a question that proposes one),
and reconciling must give the truth's counts. Where a value means nothing to the vocabulary
(a numeric code, a platform's own state), the question is checked, then answered as the truth
says, as a person would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent.data.evident_reading import take_evident
from agent.data.ingest import CsvSample, inspect_csv
from agent.data.mapping import Proposal, infer_mapping
from agent.data.normalize import ValidationReport
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import Mapping, Role, kind_word
from agent.data.vocabulary import BUILTIN
from agent.data.wording import words_of
from tests.support.bounded_queries import assert_bounded, logged_queries

MEANINGS = Path(__file__).parents[2] / "fixtures" / "meanings"
LIMIT = 1 << 30


@dataclass(frozen=True)
class Asked:
    """A question validation must ask before the pair reconciles, and the person's answer."""

    says: tuple[str, ...]
    answers: dict[Role, dict[str, str]]


# Answers to what the files cannot say by themselves: a currency written `kr` (Swedish,
# Norwegian or Danish crowns) or `zł` beside no currency column, references inside free text.
GIVEN: dict[str, dict[Role, dict[str, str]]] = {
    "lang_pl": {Role.ORDERS: {"currency": "PLN"}},
    "lang_sv": {Role.ORDERS: {"currency": "SEK"}},
}
# Values no word of the vocabulary names: asked, with a proposal where the codes are published.
ASKED: dict[str, Asked] = {
    "bigcommerce_authorizenet": Asked(
        says=(
            '"manual_verification_required"',
            "Authorize.Net response codes (1 = capture, 2 = failed, 3 = failed, 4 = pending)",
            '"1" (15, e.g. rows 1, 2, 4)',
        ),
        answers={
            Role.ORDERS: {
                "statuses_pending": "Manual Verification Required, Awaiting Payment, Pending"
            },
            Role.PAYMENTS: {
                "kinds_capture": "AUTH_CAPTURE, PRIOR_AUTH_CAPTURE, 1",
                "kinds_ignore": "2, 3, 4, AUTH_ONLY",
            },
        },
    ),
}
# The id reading each pair's files show, proposed with its figure instead of asked.
EVIDENT = {
    "odoo_paypal": "(edit payments.id_whole=yes)",
}
NOT_YET = {
    "lang_pl": "an amount written with a currency word (199,60 zł) does not read yet",
    "lang_sv": "an amount written with a currency word (199,60 kr) does not read yet",
}


def _truths() -> list[Any]:
    found = []
    for path in sorted(MEANINGS.glob("*.truth.json")):
        name = path.name.removesuffix(".truth.json")
        marks = [pytest.mark.xfail(reason=NOT_YET[name], strict=True)] if name in NOT_YET else []
        found.append(pytest.param(name, id=name, marks=marks))
    return found


def _truth(name: str) -> dict[str, Any]:
    truth: dict[str, Any] = json.loads((MEANINGS / f"{name}.truth.json").read_text())
    return truth


def _answers(name: str, truth: dict[str, Any], *more: dict[Role, dict[str, str]]) -> Any:
    """The columns of the truth as a person's answers, which file is the orders export, the
    default currency it names, and any further answers."""
    answers: dict[Role, dict[str, str]] = {
        role: {field: column for field, column in truth["columns"][role.value].items() if column}
        for role in Role
    }
    answers[Role.ORDERS]["orders_file"] = truth["orders"]
    for role, code in (truth.get("default_currency") or {}).items():
        answers[Role(role)]["currency"] = code
    for extra in (GIVEN.get(name, {}), *more):
        for role, given in extra.items():
            answers[role].update(given)
    return answers


def _samples(truth: dict[str, Any]) -> tuple[CsvSample, CsvSample]:
    orders, payments = MEANINGS / truth["orders"], MEANINGS / truth["payments"]
    return (
        inspect_csv(orders, orders.name, max_bytes=LIMIT),
        inspect_csv(payments, payments.name, max_bytes=LIMIT),
    )


def _propose(name: str, truth: dict[str, Any], *more: dict[Role, dict[str, str]]) -> Proposal:
    return infer_mapping(*_samples(truth), answers=_answers(name, truth, *more))


def _files(truth: dict[str, Any]) -> dict[Role, tuple[Path, str]]:
    return {
        Role.ORDERS: (MEANINGS / truth["orders"], truth["orders"]),
        Role.PAYMENTS: (MEANINGS / truth["payments"], truth["payments"]),
    }


def _validate(truth: dict[str, Any], mapping: Mapping) -> ValidationReport:
    return load_and_validate(connect(), _files(truth), mapping, policy=Policy())


@pytest.mark.parametrize("name", _truths())
def test_every_value_is_read_as_the_truth_says_and_the_pair_reconciles_to_its_counts(
    name: str, tmp_path: Path
) -> None:
    with logged_queries() as logged:
        reconcile_as_the_truth_says(name, tmp_path)
        # What every query collected stays bounded as such a file grows (10M rows).
        assert_bounded(logged())


def reconcile_as_the_truth_says(name: str, tmp_path: Path) -> None:
    """Propose, validate (the evident reading taken, the questions answered as the truth
    says) and reconcile the pair `name`, asserting every step against its truth."""
    truth = _truth(name)
    proposal = _propose(name, truth)
    assert proposal.clarifications == []
    assert proposal.mapping is not None
    # As the bot does: a reading of the ids the files show (a title's `Order #(\d+)`, ids
    # with separators read whole) is validated in the proposed one's place, not asked.
    proposal, report = take_evident(
        lambda given: infer_mapping(*_samples(truth), answers=given),
        lambda mapping: _validate(truth, mapping),
        _answers(name, truth),
        proposal,
        _validate(truth, proposal.mapping),
    )
    mapping = proposal.mapping
    assert mapping is not None
    evident = EVIDENT.get(name)
    proposed = [
        f for f in words_of(report.facts) if f.startswith("Proposed from the files, not asked")
    ]
    assert (len(proposed) == 1 and evident in proposed[0]) if evident else not proposed, proposed
    asked = ASKED.get(name)
    if asked is not None:
        # The values with no meaning stop the approval, named with what they could be...
        text = " ".join(words_of(report.errors))
        for words in asked.says:
            assert words in text
        # ...until a person says what they are.
        mapping = _propose(name, truth, asked.answers).mapping
        assert mapping is not None
        report = _validate(truth, mapping)
    assert report.errors == []
    statuses = mapping.orders.options.statuses
    for value, meaning in truth.get("statuses", {}).get("orders", {}).items():
        assert statuses is not None and statuses.meaning_of(value) == meaning, value
    # The request shows each order status with its meaning and rows.
    if truth["columns"]["orders"].get("order_status"):
        assert any("order statuses in" in fact for fact in words_of(report.facts))
    result = run_job(_files(truth), mapping, Policy(), tmp_path / "exceptions.csv")
    summary = result.reconciliation.summary()
    for ledger in summary.ledger:
        assert ledger.accounted == ledger.records
    assert {c: n for c, n in summary.counts.items() if n} == truth["findings"]


@pytest.mark.parametrize(
    "name", [n for n in (p.values[0] for p in _truths()) if n.startswith("lang_")]
)
def test_the_nine_languages_need_no_word_from_a_person(name: str) -> None:
    # Every order status and payment value of each language's pair is known: nothing asked.
    truth = _truth(name)
    mapping = _propose(name, truth).mapping
    assert mapping is not None
    statuses = mapping.orders.options.statuses
    assert statuses is not None
    assert set(statuses.values()) == {kind_word(v) for v in truth["statuses"]["orders"]}
    kinds = mapping.payments.options.kinds
    assert kinds is not None
    listed = {*kinds.capture, *kinds.refund, *kinds.ignore, *kinds.refunded}
    policy = Policy()
    known = {*listed, *policy.failed_payment_statuses, *policy.refunded_payment_statuses}
    # A status that says the capture succeeded (`Abgeschlossen`) beside the kind column is read
    # as such, without a list.
    unlisted = {kind_word(v) for v in truth["payment_values"]} - known
    assert all(BUILTIN.row_kind(v) == "capture" for v in unlisted), unlisted
