"""An edit reads again only the columns it changed, from the text the first read kept: the
tables, the validation and the reconciliation are the ones a whole load under the edited
mapping gives, row for row and byte for byte, and no table is loaded whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent.data.duck import workspace_name
from agent.data.normalize.load import table_name
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.reconcile.preload import preload
from agent.data.schema import IdReading, Mapping, Role
from tests.unit.data.test_first_read import sources_of
from tests.unit.data.test_kept_tables import (
    assert_same_result,
    cache_in,
    files_of,
    kept_of,
    plain_job,
    with_orders,
)


def _payments(mapping: Mapping, **update: object) -> Mapping:
    return mapping.model_copy(update={"payments": mapping.payments.model_copy(update=update)})


def _payment_columns(mapping: Mapping, **columns: str) -> Mapping:
    return _payments(mapping, columns={**mapping.payments.columns, **columns})


def _payment_zone(mapping: Mapping) -> Mapping:
    options = mapping.payments.options
    stamps = {
        name: stamp.model_copy(update={"timezone": "Europe/Paris"})
        for name, stamp in options.timestamps.items()
    }
    return _payments(mapping, options=options.model_copy(update={"timestamps": stamps}))


def _payment_ids(mapping: Mapping) -> Mapping:
    options = mapping.payments.options.model_copy(update={"ids": IdReading(ignore_case=True)})
    return _payments(mapping, options=options)


def _payment_default_currency(mapping: Mapping) -> Mapping:
    options = mapping.payments.options.model_copy(update={"default_currency": "EUR"})
    return _payments(mapping, options=options)


EDITS: dict[str, tuple[Callable[[Mapping], Mapping], bool]] = {
    "a payments amount column": (
        lambda m: _payment_columns(m, captured_amount="Amount Refunded"),
        True,
    ),
    "an orders amount column": (lambda m: with_orders(m, order_amount="Subtotal"), True),
    "the payments' order id column": (lambda m: _payment_columns(m, order_id="Description"), True),
    "the orders' status column": (lambda m: with_orders(m, order_status="Currency"), True),
    "the payments' id reading": (_payment_ids, True),
    "the payments' default currency": (_payment_default_currency, True),
    # UTC times read as naive ones, Paris times as points in time: the column's type changes,
    # so only a whole load gives the table a whole load gives.
    "the zone of the payments' times": (_payment_zone, False),
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_an_edit_reads_again_only_what_it_changed_and_gives_what_a_whole_load_gives(
    edit: str,
    demo: Path,
    mapping: Mapping,
    tmp_path: Path,
    loads: list[tuple[Role, ...]],
) -> None:
    cache, files = cache_in(tmp_path / "cache"), sources_of(demo)
    kept = kept_of(cache)
    assert preload(files, mapping, cache, kept, policy=Policy())
    assert load_and_validate(connect(), files, mapping, cache=cache, kept=kept, policy=Policy())
    change, in_place = EDITS[edit]
    edited = change(mapping)
    assert edited != mapping

    report = load_and_validate(connect(), files, edited, cache=cache, kept=kept, policy=Policy())

    if in_place:
        assert loads == [(), ()], "no table loaded whole: the edit read its columns in place"
    else:
        assert loads == [(), (Role.PAYMENTS,)], "the edited file's table loaded whole"
    whole = connect()
    fresh = load_and_validate(whole, files_of(demo), edited, policy=Policy())
    assert (report.errors, report.warnings, report.facts, report.routine, report.rows) == (
        fresh.errors,
        fresh.warnings,
        fresh.facts,
        fresh.routine,
        fresh.rows,
    )
    [case] = list(kept._kept.values())
    ours, theirs = workspace_name(case.con), workspace_name(whole)
    for role in Role:
        table = table_name(role)
        for a, b in ((ours, theirs), (theirs, ours)):
            differ = case.con.execute(
                f"SELECT count(*) FROM (SELECT rowid, * FROM {a}.main.{table} "
                f"EXCEPT ALL SELECT rowid, * FROM {b}.main.{table})"
            ).fetchone()
            assert differ == (0,), f"{table} differs from a whole load"
    job = run_job(files, edited, Policy(), tmp_path / "kept.csv", cache=cache, kept=kept)
    plain = plain_job(demo, edited, tmp_path / "plain.csv")
    assert_same_result(job, plain, tmp_path / "kept.csv", tmp_path / "plain.csv")
