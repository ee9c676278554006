"""Tables a validation loaded are reused by the steps after it, and never under another reading.

The validation's workspace is kept for the pair of files it read: an edit loads only the file
whose part of the mapping changed, the reconciliation after the approval loads nothing it
already has, and whatever it reuses, its findings, ledger and exceptions CSV are those of a
reconciliation that loaded everything itself.
"""

from __future__ import annotations

import hashlib
import weakref
from datetime import timedelta
from pathlib import Path

import pytest

import agent.data.reconcile.run as run_module
from agent.data.cache import ColumnCache
from agent.data.demo import generate
from agent.data.kept import KeptTables, KeptWorkspace
from agent.data.normalize.load import Source
from agent.data.normalize.memo import ValidationMemo
from agent.data.pipeline import JobResult, run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate, reconcile
from agent.data.schema import IdReading, Mapping, OrderStatuses, Role
from agent.errors import UnknownColumnError


def files_of(demo: Path) -> dict[Role, Source]:
    return {role: Source.at(demo / f"{role.value}.csv", f"{role.value}.csv") for role in Role}


_KEPT: weakref.WeakKeyDictionary[ColumnCache, KeptTables] = weakref.WeakKeyDictionary()


def cache_in(folder: Path, kept: KeptTables | None = None) -> ColumnCache:
    """A columnar cache in `folder`, paired with its own kept tables (`kept_of`), as a
    case's door pairs them."""
    cache = ColumnCache(folder, max_bytes=1 << 30, max_age=timedelta(days=2))
    _KEPT[cache] = kept if kept is not None else KeptTables()
    return cache


def kept_of(cache: ColumnCache) -> KeptTables:
    """The kept tables paired with `cache` by `cache_in`."""
    return _KEPT[cache]


# The demo's currencies: an edit that reads them as the order status says they mean paid, as a
# person editing the status column says what its values mean (else validation asks).
DEMO_CURRENCIES = ("usd", "eur", "gbp", "jpy", "kwd")


def with_orders(mapping: Mapping, **columns: str) -> Mapping:
    """`mapping` with the orders' `columns` changed (the demo's `Currency` as a status column
    comes with its values' meanings)."""
    update: dict[str, object] = {"columns": {**mapping.orders.columns, **columns}}
    if columns.get("order_status") == "Currency":
        statuses = OrderStatuses(paid=DEMO_CURRENCIES)
        update["options"] = mapping.orders.options.model_copy(update={"statuses": statuses})
    orders = mapping.orders.model_copy(update=update)
    return mapping.model_copy(update={"orders": orders})


def assert_same_result(job: JobResult, plain: JobResult, exported: Path, fresh: Path) -> None:
    """The reconciliation's summary, findings, ledger and CSV bytes equal those of one that
    loaded both files itself."""
    assert job.reconciliation.summary() == plain.reconciliation.summary()
    assert job.reconciliation.findings(limit=None) == plain.reconciliation.findings(limit=None)
    assert job.reconciliation.ledger == plain.reconciliation.ledger
    assert exported.read_bytes() == fresh.read_bytes()


def plain_job(demo: Path, mapping: Mapping, export: Path) -> JobResult:
    """The job done the plain way: each file parsed into Parquet of its own and loaded from
    there (`reconcile` without a cache), nothing kept or read straight."""
    paths = {role: (demo / f"{role.value}.csv", f"{role.value}.csv") for role in Role}
    run = reconcile(paths, mapping, Policy())
    digests = {
        role: "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
        for role, (path, _) in paths.items()
    }
    return JobResult(run, digests, run.export_csv(export))


def test_an_edit_loads_only_its_file_and_the_reconciliation_loads_nothing(
    demo: Path, mapping: Mapping, tmp_path: Path, loads: list[tuple[Role, ...]]
) -> None:
    cache = cache_in(tmp_path / "cache")
    memo = ValidationMemo(tmp_path / "cache" / "validations", max_age=timedelta(days=2))
    files = files_of(demo)
    assert load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), memo=memo, policy=Policy()
    ).ok
    edited = with_orders(mapping, order_status="Currency")
    assert load_and_validate(
        connect(), files, edited, cache=cache, kept=kept_of(cache), memo=memo, policy=Policy()
    ).ok
    job = run_job(files, edited, Policy(), tmp_path / "kept.csv", cache=cache, kept=kept_of(cache))
    assert loads == [(Role.ORDERS, Role.PAYMENTS), (Role.ORDERS,), ()]
    plain = plain_job(demo, edited, tmp_path / "plain.csv")
    assert_same_result(job, plain, tmp_path / "kept.csv", tmp_path / "plain.csv")


def test_an_edit_of_a_text_field_alone_loads_and_validates_nothing_but_its_column_must_exist(
    demo: Path, mapping: Mapping, tmp_path: Path, loads: list[tuple[Role, ...]]
) -> None:
    cache = cache_in(tmp_path / "cache")
    memo = ValidationMemo(tmp_path / "cache" / "validations", max_age=timedelta(days=2))
    files = files_of(demo)
    first = load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), memo=memo, policy=Policy()
    )
    edited = with_orders(mapping, customer="Lineitem name")
    assert edited.orders.columns["customer"] != mapping.orders.columns.get("customer")
    second = load_and_validate(
        connect(), files, edited, cache=cache, kept=kept_of(cache), memo=memo, policy=Policy()
    )
    assert (second.errors, second.facts, second.routine) == (
        first.errors,
        first.facts,
        first.routine,
    )
    with pytest.raises(UnknownColumnError, match="no column"):
        load_and_validate(
            connect(),
            files,
            with_orders(mapping, customer="Nope"),
            cache=cache,
            kept=kept_of(cache),
            memo=memo,
            policy=Policy(),
        )
    job = run_job(files, edited, Policy(), tmp_path / "kept.csv", cache=cache, kept=kept_of(cache))
    assert loads == [(Role.ORDERS, Role.PAYMENTS), (), ()]
    plain = plain_job(demo, edited, tmp_path / "plain.csv")
    assert_same_result(job, plain, tmp_path / "kept.csv", tmp_path / "plain.csv")


def test_an_id_reading_reads_the_join_keys_again_in_place_and_loads_nothing(
    demo: Path, mapping: Mapping, tmp_path: Path, loads: list[tuple[Role, ...]]
) -> None:
    # The id reading the files show (the demo's references typed in lower case) is validated
    # in the proposed one's place: its keys are read again in the kept tables, not the files.
    cache = cache_in(tmp_path / "cache")
    files = files_of(demo)
    first = load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), policy=Policy()
    )
    any_case = IdReading(ignore_case=True)
    edited = mapping.model_copy(
        update={
            role.value: mapping.for_role(role).model_copy(
                update={
                    "options": mapping.for_role(role).options.model_copy(update={"ids": any_case})
                }
            )
            for role in Role
        }
    )
    second = load_and_validate(
        connect(), files, edited, cache=cache, kept=kept_of(cache), policy=Policy()
    )
    fresh = load_and_validate(connect(), files, edited, policy=Policy())
    assert (second.errors, second.warnings, second.facts, second.routine) == (
        fresh.errors,
        fresh.warnings,
        fresh.facts,
        fresh.routine,
    )
    assert second.references[0] > first.references[0]
    job = run_job(files, edited, Policy(), tmp_path / "kept.csv", cache=cache, kept=kept_of(cache))
    # Loaded by the first validation and by the fresh one only: not by the edit, nor the job.
    both = (Role.ORDERS, Role.PAYMENTS)
    assert loads == [both, (), both, ()]
    plain = plain_job(demo, edited, tmp_path / "plain.csv")
    assert_same_result(job, plain, tmp_path / "kept.csv", tmp_path / "plain.csv")


def test_a_table_loaded_under_another_reading_is_loaded_again(
    demo: Path, mapping: Mapping, tmp_path: Path, loads: list[tuple[Role, ...]]
) -> None:
    cache = cache_in(tmp_path / "cache")
    files = files_of(demo)
    assert load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), policy=Policy()
    ).ok
    # The orders' amount read from another column than the one validated: the orders table
    # the validation loaded says other amounts, and is not used.
    other = with_orders(mapping, order_amount="Subtotal")
    job = run_job(files, other, Policy(), tmp_path / "kept.csv", cache=cache, kept=kept_of(cache))
    assert loads == [(Role.ORDERS, Role.PAYMENTS), (Role.ORDERS,)]
    plain = plain_job(demo, other, tmp_path / "plain.csv")
    assert (
        job.reconciliation.summary().counts
        != plain_job(demo, mapping, tmp_path / "first.csv").reconciliation.summary().counts
    ), "the two readings must give different results"
    assert_same_result(job, plain, tmp_path / "kept.csv", tmp_path / "plain.csv")


def test_a_kept_workspace_serves_one_step_only(
    demo: Path, mapping: Mapping, tmp_path: Path, loads: list[tuple[Role, ...]]
) -> None:
    cache = cache_in(tmp_path / "cache")
    files = files_of(demo)
    assert load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), policy=Policy()
    ).ok
    first = run_job(
        files, mapping, Policy(), tmp_path / "first.csv", cache=cache, kept=kept_of(cache)
    )
    second = run_job(
        files, mapping, Policy(), tmp_path / "second.csv", cache=cache, kept=kept_of(cache)
    )
    assert loads == [tuple(Role), (), tuple(Role)]
    assert_same_result(first, second, tmp_path / "first.csv", tmp_path / "second.csv")


def test_only_the_most_recent_validations_are_kept_and_not_for_long(
    demo: Path, mapping: Mapping, tmp_path: Path, loads: list[tuple[Role, ...]]
) -> None:
    other = tmp_path / "other"
    generate(500, other, seed=3)
    cache = cache_in(tmp_path / "cache", KeptTables(max_kept=1))
    assert load_and_validate(
        connect(), files_of(demo), mapping, cache=cache, kept=kept_of(cache), policy=Policy()
    ).ok
    assert load_and_validate(
        connect(), files_of(other), mapping, cache=cache, kept=kept_of(cache), policy=Policy()
    ).ok
    run_job(
        files_of(demo), mapping, Policy(), tmp_path / "demo.csv", cache=cache, kept=kept_of(cache)
    )
    assert loads[-1] == tuple(Role)  # dropped for the other pair's validation
    stale = cache_in(tmp_path / "cache", KeptTables(max_age=timedelta(0)))
    assert load_and_validate(
        connect(), files_of(demo), mapping, cache=stale, kept=kept_of(stale), policy=Policy()
    ).ok
    run_job(
        files_of(demo), mapping, Policy(), tmp_path / "stale.csv", cache=stale, kept=kept_of(stale)
    )
    assert loads[-1] == tuple(Role)


class Recording(KeptTables):
    """Kept tables that remember every workspace they were given."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list[KeptWorkspace] = []

    def keep(self, files: str, workspace: KeptWorkspace) -> None:
        self.kept.append(workspace)
        super().keep(files, workspace)


@pytest.mark.parametrize("unmapped", [(), ("customer", "order_date")])
def test_a_kept_table_holds_what_reconciling_reads_and_no_more(
    demo: Path, mapping: Mapping, tmp_path: Path, unmapped: tuple[str, ...]
) -> None:
    orders = mapping.orders.model_copy(
        update={"columns": {k: v for k, v in mapping.orders.columns.items() if k not in unmapped}}
    )
    reading = mapping.model_copy(update={"orders": orders})
    recording = Recording()
    cache = cache_in(tmp_path / "cache", recording)
    files = files_of(demo)
    assert load_and_validate(
        connect(), files, reading, cache=cache, kept=kept_of(cache), policy=Policy()
    ).ok
    kept = recording.kept[-1]
    fresh = connect()
    with run_module.file_columns(files, reading, cache=cache) as columns:
        run_module.load_both(fresh, columns, reading)  # type: ignore[attr-defined]
    for role in Role:
        described = f"SELECT column_name, column_type FROM (DESCRIBE {role.value}_rows)"
        assert kept.con.execute(described).fetchall() == fresh.execute(described).fetchall()
