"""Which ids meet, by the evidence of both files (issue 37).

The pairs in tests/fixtures/keys/ are the published-column pairs of tests/fixtures/meanings/
with the id forms found in real exports (their README says which): Klarna references without
Magento's leading zeros, Shopify names with a shop prefix typed in lower case between spaces,
order ids a spreadsheet rewrote as numbers. The columns are given as a person maps them; how
the ids read is not: the files show it, the bot proposes it with its figure (a confirmation,
not a question), and the pair reconciles to the source pair's truth. Smaller files check the
rules around it: a reading that would make two orders one is named, never proposed; two close
readings are asked, both with their figures; a near miss short of clear is named with its edit.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.data.evident_reading import propose_by_evidence
from agent.data.ingest import CsvSample, inspect_csv
from agent.data.keys import read_key, reference_keys
from agent.data.mapping import Proposal
from agent.data.normalize import ValidationReport
from agent.data.normalize.expressions import key_sql, reference_tokens_sql
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.schema import IdReading, Mapping, Role
from agent.data.wording import words_of

KEYS = Path(__file__).parents[2] / "fixtures" / "keys"
LIMIT = 1 << 30
PROPOSED = "Proposed from the files, not asked"


def _pairs() -> list[str]:
    return sorted(p.name.removesuffix(".truth.json") for p in KEYS.glob("*.truth.json"))


def _files(folder: Path, orders: str, payments: str) -> dict[Role, tuple[Path, str]]:
    return {Role.ORDERS: (folder / orders, orders), Role.PAYMENTS: (folder / payments, payments)}


def _samples(files: dict[Role, tuple[Path, str]]) -> tuple[CsvSample, CsvSample]:
    (o, o_name), (p, p_name) = files[Role.ORDERS], files[Role.PAYMENTS]
    return inspect_csv(o, o_name, max_bytes=LIMIT), inspect_csv(p, p_name, max_bytes=LIMIT)


def _as_the_bot_reads(
    files: dict[Role, tuple[Path, str]], answers: dict[Role, dict[str, str]]
) -> tuple[Proposal, ValidationReport]:
    """Propose, validate on the whole files, and take the reading the files show, as the bot."""

    def validate(mapping: Mapping) -> ValidationReport:
        return load_and_validate(connect(), files, mapping, policy=Policy())

    proposal, report = propose_by_evidence(_samples(files), validate, answers)
    assert proposal.mapping is not None and report is not None, proposal.clarifications
    return proposal, report


def _answers(truth: dict[str, Any]) -> dict[Role, dict[str, str]]:
    answers: dict[Role, dict[str, str]] = {
        role: {field: column for field, column in truth["columns"][role.value].items() if column}
        for role in Role
    }
    answers[Role.ORDERS]["orders_file"] = truth["orders"]
    for role, code in (truth.get("default_currency") or {}).items():
        answers[Role(role)]["currency"] = code
    return answers


@pytest.mark.parametrize("name", _pairs())
def test_the_reading_the_files_show_is_proposed_with_its_figure_and_reconciles(
    name: str, tmp_path: Path
) -> None:
    truth = json.loads((KEYS / f"{name}.truth.json").read_text())
    files = _files(KEYS, truth["orders"], truth["payments"])
    proposal, report = _as_the_bot_reads(files, _answers(truth))
    assert report.errors == []
    [proposed] = [fact for fact in words_of(report.facts) if fact.startswith(PROPOSED)]
    # The reading, the edit a person would have typed, and the figures with and without it.
    assert f"(edit {truth['evident']})" in proposed
    named, total = report.references
    assert f"{named:,} of {total:,} payment references name an order under:" in proposed
    assert "Without it, " in proposed
    assert named > int(proposed.split("Without it, ")[1].split(" of ")[0].replace(",", ""))
    assert proposal.mapping is not None
    result = run_job(files, proposal.mapping, Policy(), tmp_path / "exceptions.csv")
    summary = result.reconciliation.summary()
    assert {c: n for c, n in summary.counts.items() if n} == truth["findings"]


def test_the_key_columns_are_the_ones_whose_ids_meet(tmp_path: Path) -> None:
    # PrestaShop's numeric `ID` and Stripe's `id_cart` metadata overlap by chance (carts run
    # three ahead of orders); the 9-letter `Reference` is what `order_reference` names. The
    # pair whose ids meet is chosen, not the one whose numbers look alike: one real finding.
    files = _files(KEYS, "prestashop_orders.csv", "stripe_payments_prestashop.csv")
    proposal, report = _as_the_bot_reads(files, {})
    assert proposal.mapping is not None
    assert proposal.mapping.orders.columns["order_id"] == "Reference"
    assert proposal.mapping.payments.columns["order_id"] == "order_reference (metadata)"
    assert report.errors == []
    assert report.references == [9, 9]
    result = run_job(files, proposal.mapping, Policy(), tmp_path / "exceptions.csv")
    summary = result.reconciliation.summary()
    assert {c: n for c, n in summary.counts.items() if n} == {"amount_mismatch": 1}


def _write(folder: Path, orders: list[str], references: list[str]) -> dict[Role, tuple[Path, str]]:
    (folder / "orders.csv").write_text(
        "Order Number,Total,Currency\n" + "".join(f"{o},10.00,EUR\n" for o in orders)
    )
    (folder / "payments.csv").write_text(
        "Transaction ID,Order Reference,Amount,Currency\n"
        + "".join(f"T{i:05d},{r},10.00,EUR\n" for i, r in enumerate(references))
    )
    return _files(folder, "orders.csv", "payments.csv")


def test_a_reading_that_makes_two_orders_one_is_named_never_proposed(tmp_path: Path) -> None:
    # `ab-7` and `AB-7` are two orders here: ids in any case would make them one.
    orders = [f"AB-{i}" for i in range(40)] + ["ab-7"]
    references = [f"AB-{i}" for i in range(30)] + [f"ab-{i}" for i in range(30, 40)]
    proposal, report = _as_the_bot_reads(_write(tmp_path, orders, references), {})
    assert not any(fact.startswith(PROPOSED) for fact in words_of(report.facts))
    [warning] = [w for w in words_of(report.warnings) if "id_ignore_case" in w]
    assert "30 of 40 payment references" in warning
    assert "40 of 40 would" in warning
    assert "it would read 1 order ids as another order's, so it is not proposed" in warning
    assert proposal.mapping is not None and proposal.mapping.payments.options.ids is None


def test_two_close_readings_are_asked_with_both_figures(tmp_path: Path) -> None:
    # Half the references carry the shop's `INV-`, the other half are padded with zeros: two
    # readings each make about half meet, and neither says which the shop meant.
    orders = [str(1000 + i) for i in range(40)]
    references = [f"INV-{1000 + i}" for i in range(20)] + [f"0{1000 + i}" for i in range(20, 38)]
    _, report = _as_the_bot_reads(_write(tmp_path, orders, references), {})
    [error] = words_of(report.errors)
    assert "Two readings come close" in error
    assert "edit payments.id_prefix=INV- (20 of 38 references name an order)" in error
    assert "id_strip_zeros=yes (18 of 38 references name an order)" in error


def test_readings_that_tie_but_name_other_orders_are_asked(tmp_path: Path) -> None:
    # `PO1000-x invoice #1001`: the purchase order and the invoice number are both in the
    # order range. `#(\d+)` and `(\d{3,})` make every reference meet, but name other orders:
    # one of them is wrong, and only a person knows which.
    orders = [str(1000 + i) for i in range(40)]
    references = [f"PO{1000 + i}-x invoice #{1001 + i}" for i in range(39)]
    _, report = _as_the_bot_reads(_write(tmp_path, orders, references), {})
    assert not any(fact.startswith(PROPOSED) for fact in words_of(report.facts))
    [error] = words_of(report.errors)
    assert "Two readings come close" in error
    assert "payments.id_pattern='#\\s*(\\d+)' (39 of 39" in error
    assert "payments.id_pattern='(\\d{3,})' (39 of 39" in error


def test_a_reading_that_reads_dates_as_orders_is_named_not_proposed(tmp_path: Path) -> None:
    # `Order 2010 paid 2025-10-20` with orders 2000-2039: `(\d{3,})` makes every reference
    # name an order, and 39 of them two (the year is an order number too).
    orders = [str(2000 + i) for i in range(40)]
    references = [f"Order {2000 + i} paid 2025-10-20" for i in range(40)]
    _, report = _as_the_bot_reads(_write(tmp_path, orders, references), {})
    assert not any(fact.startswith(PROPOSED) for fact in words_of(report.facts))
    [error] = words_of(report.errors)
    assert "39 of them would name several orders" in error
    assert "so it is not proposed" in error


def test_letter_codes_typed_in_another_case_meet_in_any_case(tmp_path: Path) -> None:
    # PrestaShop-like references of nine capital letters, ten typed in lower case.
    rng = random.Random(3)
    codes = ["".join(rng.choice(string.ascii_uppercase) for _ in range(9)) for _ in range(40)]
    references = [c if i < 30 else c.lower() for i, c in enumerate(codes)]
    proposal, report = _as_the_bot_reads(_write(tmp_path, codes, references), {})
    [proposed] = [fact for fact in words_of(report.facts) if fact.startswith(PROPOSED)]
    assert "40 of 40 payment references name an order under:" in proposed
    assert "Without it, 30 of 40" in proposed
    assert proposal.mapping is not None


def test_a_near_miss_short_of_clear_is_named_with_its_edit(tmp_path: Path) -> None:
    # 30 of 40 meet; 4 more would in any case; 6 name orders the file does not hold.
    orders = [f"SH{1000 + i}" for i in range(34)]
    references = (
        [f"SH{1000 + i}" for i in range(30)]
        + [f"sh{1000 + i}" for i in range(30, 34)]
        + [f"SH{2000 + i}" for i in range(6)]
    )
    _, report = _as_the_bot_reads(_write(tmp_path, orders, references), {})
    assert report.errors == []
    [warning] = [w for w in words_of(report.warnings) if "would" in w]
    assert "30 of 40 payment references" in warning
    assert "ids compared in any case, 34 of 40 would" in warning
    assert "(edit orders.id_ignore_case=yes payments.id_ignore_case=yes)" in warning


def test_a_persons_own_id_answer_is_never_overridden(tmp_path: Path) -> None:
    orders = [f"SH{1000 + i}" for i in range(40)]
    references = [f"sh{1000 + i}" for i in range(40)]
    files = _write(tmp_path, orders, references)
    answers = {Role.PAYMENTS: {"id_strip_zeros": "no"}}
    proposal, report = _as_the_bot_reads(files, answers)
    assert not any(fact.startswith(PROPOSED) for fact in words_of(report.facts))
    assert proposal.mapping is not None
    assert proposal.mapping.payments.options.ids is None or not (
        proposal.mapping.payments.options.ids.ignore_case
    )


_ID_TEXT = st.text(alphabet="0123456789aAbB#-./,+ eE", max_size=14)


@settings(max_examples=300, deadline=None)
@given(
    value=_ID_TEXT,
    reading=st.builds(
        IdReading,
        prefix=st.sampled_from(["", "WC-", "ab"]),
        strip_zeros=st.booleans(),
        ignore_case=st.booleans(),
        whole=st.booleans(),
        excel_numbers=st.booleans(),
    ),
)
def test_the_engine_reads_every_id_as_inference_does(value: str, reading: IdReading) -> None:
    # Inference weighs readings in Python and the engine joins in DuckDB: the same id under
    # the same reading must be the same key on both sides, or a proposal's figure would lie.
    con = duckdb.connect()
    row = con.execute(
        f"SELECT {key_sql('x', reading)}, {reference_tokens_sql('x', reading)} "
        "FROM (SELECT ?::VARCHAR AS x)",
        [value],
    ).fetchone()
    assert row is not None
    assert (row[0] or "") == read_key(value, reading)
    assert sorted(row[1]) == sorted(reference_keys(value, reading))
