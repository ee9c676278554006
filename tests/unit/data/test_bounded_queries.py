"""Every query the engine runs keeps what it collects bounded as the files grow
(`tests.support.bounded_queries`): the engine's steps on a demo pair (the first read,
validation, an edit, the reconciliation), and the guard itself. The vendor pairs of
tests/fixtures/meanings are watched by their own test (`test_value_meanings`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.reconcile.preload import preload
from agent.data.schema import Mapping
from tests.support.bounded_queries import assert_bounded, collecting, logged_queries, statements
from tests.unit.data.test_first_read import sources_of
from tests.unit.data.test_kept_tables import cache_in, kept_of


def test_no_step_of_the_engine_collects_a_list_that_grows_with_the_file(
    demo: Path, mapping: Mapping, tmp_path: Path
) -> None:
    cache, files = cache_in(tmp_path / "cache"), sources_of(demo)
    kept = kept_of(cache)
    payments = mapping.payments
    columns = {**payments.columns, "captured_amount": "Amount Refunded"}
    edited = mapping.model_copy(
        update={"payments": payments.model_copy(update={"columns": columns})}
    )
    with logged_queries() as logged:
        assert preload(files, mapping, cache, kept, policy=Policy())
        assert load_and_validate(connect(), files, mapping, cache=cache, kept=kept, policy=Policy())
        load_and_validate(connect(), files, edited, cache=cache, kept=kept, policy=Policy())
        run_job(files, mapping, Policy(), tmp_path / "demo.csv", cache=cache, kept=kept)
        queries = logged()

    assert len(statements(queries)) > 100, "the engine's queries were logged"
    assert_bounded(queries)


def test_the_guard_refuses_a_list_of_every_row_of_a_status_or_of_a_table() -> None:
    by_status = "SELECT payment_status, list(rowid) FROM payments_rows GROUP BY 1"
    whole = "SELECT list(r + 1 ORDER BY r)[1:5] FROM several"
    per_order = "SELECT order_r AS r, list(c.row ORDER BY c.row) FROM x c GROUP BY order_r"
    per_id = "CREATE TABLE v AS SELECT payment_id, currency, list(r) FROM k GROUP BY ALL"
    first_rows = "SELECT payment_status, count(*), min(rowid + 1, 3) FROM t GROUP BY 1"

    assert collecting(by_status) == [("list", ["payment_status"])]
    assert collecting(whole) == [("list", [])]
    assert [k for _, k in collecting(per_order)] == [["order_r"]]
    assert [k for _, k in collecting(per_id)] == [["payment_id", "currency"]]
    assert collecting(first_rows) == []
    with pytest.raises(AssertionError, match="payment_status"):
        assert_bounded([by_status])
