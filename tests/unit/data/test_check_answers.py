"""A validation remembers its checks' answers by the columns they read: checking again after an
edit asks again only the checks that read a column read another way, and says what a fresh
validation says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from agent.data.ingest import inspect_csv
from agent.data.normalize import validate
from agent.data.normalize.answers import CheckAnswers, TableAnswers, column_sources
from agent.data.normalize.load import load_dataset
from agent.data.policy import Policy
from agent.data.reconcile import connect
from agent.data.schema import DatasetMapping, Mapping, Role


class _Recording:
    """A connection that keeps the text of every query it is asked."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.asked: list[str] = []

    def execute(self, query: str, *args: Any) -> Any:
        self.asked.append(query)
        return self.con.execute(query, *args)


def _loaded(con: duckdb.DuckDBPyConnection, demo: Path, part: DatasetMapping) -> dict[str, str]:
    """Load the demo's payments under `part`; return what each column was read from."""
    path = demo / "payments.csv"
    load_dataset(con, Role.PAYMENTS, path, path.name, part)
    layout = inspect_csv(path, path.name).layout
    return column_sources(Role.PAYMENTS, layout, part)


def _check(con: duckdb.DuckDBPyConnection, part: DatasetMapping, answers: TableAnswers | None):  # type: ignore[no-untyped-def]
    recording = _Recording(con)
    report = validate(recording, Role.PAYMENTS, "payments.csv", part, Policy(), answers)  # type: ignore[arg-type]
    return report, recording.asked


def _field_checks(asked: list[str]) -> str:
    """The fields' checks: the first query a validation asks."""
    assert asked[0].startswith("SELECT count(*)")
    return asked[0]


def test_checking_again_asks_only_what_an_edit_read_again(demo: Path, mapping: Mapping) -> None:
    con, store = connect(), CheckAnswers()
    part = mapping.payments
    sources = _loaded(con, demo, part)
    first, asked = _check(con, part, store.of_table("payments", sources))
    assert "captured_at IS NULL" in _field_checks(asked)

    again, asked = _check(con, part, store.of_table("payments", sources))

    assert again == first
    assert _field_checks(asked) == "SELECT count(*) FROM payments_rows", "every field answered"
    assert not any("GROUP BY" in q and "payment_status" in q for q in asked), "statuses answered"

    columns = {**part.columns, "captured_amount": "Amount Refunded"}
    edited = part.model_copy(update={"columns": columns})
    assert edited.columns != part.columns
    sources = _loaded(con, demo, edited)
    report, asked = _check(con, edited, store.of_table("payments", sources))

    checks = _field_checks(asked)
    assert "captured_amount_filled AND captured_amount IS NULL" in checks
    assert "captured_at IS NULL" not in checks, "the times were read as before"
    fresh, _ = _check(con, edited, None)
    assert report == fresh


def test_a_column_read_another_way_is_checked_again_whatever_it_is_named(
    demo: Path, mapping: Mapping
) -> None:
    con, store = connect(), CheckAnswers()
    part = mapping.payments
    _check(con, part, store.of_table("payments", _loaded(con, demo, part)))
    # The amounts read as text nobody can read as money: the same names, other values.
    unreadable = part.model_copy(
        update={"columns": {**part.columns, "captured_amount": "Description"}}
    )

    report, _ = _check(con, unreadable, store.of_table("payments", _loaded(con, demo, unreadable)))

    fresh, _ = _check(con, unreadable, None)
    assert report == fresh
    assert any(c.field == "captured_amount" and c.unreadable for c in report.checks)


def test_a_check_that_reads_the_join_keys_is_never_answered_from_memory(
    demo: Path, mapping: Mapping
) -> None:
    con = connect()
    table = CheckAnswers().of_table("payments", _loaded(con, demo, mapping.payments))

    assert table.key("SELECT count(*) FROM payments_rows WHERE ref_key IS NULL") is None
    assert table.key("SELECT count(*) FROM payments_rows WHERE order_id IS NULL") is not None


def test_the_currency_code_is_read_from_the_currency_column_it_was_made_from(
    demo: Path, mapping: Mapping
) -> None:
    con = connect()
    part = mapping.payments
    before = _loaded(con, demo, part)
    other = part.model_copy(update={"columns": {**part.columns, "currency": "Description"}})
    after = column_sources(
        Role.PAYMENTS, inspect_csv(demo / "payments.csv", "payments.csv").layout, other
    )

    store = CheckAnswers()
    query = "SELECT count(*) FROM payments_rows WHERE currency_code = 'USD'"
    assert store.of_table("p", before).key(query) != store.of_table("p", after).key(query)


def test_a_time_read_with_its_zone_follows_the_columns_its_local_time_and_zone_come_from(
    demo: Path, mapping: Mapping
) -> None:
    layout = inspect_csv(demo / "payments.csv", "payments.csv").layout
    stamps = mapping.payments.options.timestamps
    [(field, stamp)] = list(stamps.items())
    zoned = stamp.model_copy(update={"zone_column": "Currency"})
    part = mapping.payments.model_copy(
        update={
            "options": mapping.payments.options.model_copy(update={"timestamps": {field: zoned}})
        }
    )
    other_column = part.model_copy(update={"columns": {**part.columns, field: "Description"}})

    here = column_sources(Role.PAYMENTS, layout, part)[field]
    there = column_sources(Role.PAYMENTS, layout, other_column)[field]

    assert here != there, "the same zone reading of another column is another column"
