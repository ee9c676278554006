"""A case's first read: both files straight into the tables of the proposed reading.

The first read (`preload`) parses each file once, writes no Parquet, and serves the validation
and the reconciliation after it; a step of the same process that needs a file again under
another reading reads its bytes again, and another process parses it into the columnar cache.
Whatever path a step took, its report and its reconciliation are those of a step that read
everything itself, and the digests it returns are those of the bytes.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import agent.data.cache as cache_module
import agent.data.reconcile.preload as preload_module
from agent.data.cache import ColumnCache, Reading
from agent.data.ingest import inspect_csv
from agent.data.kept import KeptTables
from agent.data.normalize.load import Source
from agent.data.normalize.memo import ValidationMemo
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate, reconcile, validate_once
from agent.data.reconcile.preload import preload
from agent.data.schema import Mapping, Role
from agent.errors import HeaderOnlyError, UnknownColumnError
from tests.unit.data.test_kept_tables import (
    assert_same_result,
    cache_in,
    files_of,
    kept_of,
    plain_job,
    with_orders,
)


def sources_of(folder: Path) -> dict[Role, Source]:
    """Each demo file with the digest its upload was stored under, and its size (as the bot's
    sources have: two demo files of a size are each read on one thread)."""
    found = {}
    for role, source in files_of(folder).items():
        path = folder / f"{role.value}.csv"
        digest = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
        found[role] = Source(source.name, source.fetch, digest, path.stat().st_size)
    return found


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files parsed into the columnar cache (a Parquet file written), in order."""
    seen: list[str] = []
    real = cache_module.build_columns

    def counting(path: Path, layout: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(layout.file_name)
        return real(path, layout, *args, **kwargs)

    monkeypatch.setattr(cache_module, "build_columns", counting)
    return seen


def memo_in(cache: ColumnCache) -> ValidationMemo:
    return ValidationMemo(cache.folder / "validations", max_age=timedelta(days=2))


def test_the_first_read_parses_each_file_once_and_serves_validation_and_reconciliation(
    demo: Path,
    mapping: Mapping,
    tmp_path: Path,
    loads: list[tuple[Role, ...]],
    parses: list[str],
) -> None:
    cache, files = cache_in(tmp_path / "cache"), sources_of(demo)
    assert preload(files, mapping, cache, kept_of(cache), policy=Policy())
    report = load_and_validate(
        connect(),
        files,
        mapping,
        cache=cache,
        kept=kept_of(cache),
        memo=memo_in(cache),
        policy=Policy(),
    )
    job = run_job(
        files, mapping, Policy(), tmp_path / "first.csv", cache=cache, kept=kept_of(cache)
    )
    assert report.ok
    assert loads == [(), ()]  # the validation and the reconciliation loaded nothing
    assert parses == []
    assert not list(cache.folder.glob("*.parquet"))
    assert job.digests == {role: files[role].digest for role in Role}
    plain = plain_job(demo, mapping, tmp_path / "plain.csv")
    assert_same_result(job, plain, tmp_path / "first.csv", tmp_path / "plain.csv")
    alone = load_and_validate(connect(), files_of(demo), mapping, policy=Policy())
    assert (report.errors, report.warnings, report.facts, report.routine, report.rows) == (
        alone.errors,
        alone.warnings,
        alone.facts,
        alone.routine,
        alone.rows,
    )


def test_a_job_of_its_own_reads_each_file_once_straight_into_its_tables(
    demo: Path,
    mapping: Mapping,
    tmp_path: Path,
    loads: list[tuple[Role, ...]],
    parses: list[str],
) -> None:
    """`reconbot reconcile` (a job without the bot's cache) parses each file once, as a case's
    first read does, instead of into Parquet and then loading it; same result, and the digests
    are those of the files' bytes."""
    job = run_job(files_of(demo), mapping, Policy(), tmp_path / "job.csv")
    assert parses == []  # no Parquet written
    assert loads == [()]  # the reconciliation loaded nothing: the read made its tables
    assert job.digests == {role: source.digest for role, source in sources_of(demo).items()}
    plain = plain_job(demo, mapping, tmp_path / "plain.csv")
    assert parses == ["orders.csv", "payments.csv"] or parses == ["payments.csv", "orders.csv"]
    assert_same_result(job, plain, tmp_path / "job.csv", tmp_path / "plain.csv")


def test_a_job_of_its_own_names_the_file_that_does_not_read(
    demo: Path, mapping: Mapping, tmp_path: Path, parses: list[str]
) -> None:
    payments = tmp_path / "payments.csv"
    payments.write_bytes((demo / "payments.csv").read_bytes().split(b"\n", 1)[0] + b"\n")
    files = {
        Role.ORDERS: (demo / "orders.csv", "orders.csv"),
        Role.PAYMENTS: (payments, "payments.csv"),
    }
    with pytest.raises(HeaderOnlyError) as raised:
        run_job(files, mapping, Policy(), tmp_path / "job.csv")
    assert raised.value.file_name == "payments.csv"
    assert parses == []  # said by the read itself, not by a parse after it


def test_a_job_of_its_own_gives_the_digests_of_the_bytes_it_read(
    demo: Path, mapping: Mapping, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that changed between its hash and its read: the digest returned is the one of
    the bytes read (the caller compares it with the approved one), not the hash before."""
    real = preload_module.hashed_sources

    def stale(files: Any) -> dict[Role, Source]:
        found = real(files)
        found[Role.ORDERS] = replace(found[Role.ORDERS], digest="sha256:" + "0" * 64)
        return found

    monkeypatch.setattr(preload_module, "hashed_sources", stale)
    job = run_job(files_of(demo), mapping, Policy(), tmp_path / "job.csv")
    assert job.digests == {role: source.digest for role, source in sources_of(demo).items()}


def test_a_job_of_its_own_on_one_file_in_both_roles_fails_as_the_plain_job_does(
    demo: Path, mapping: Mapping, tmp_path: Path
) -> None:
    """The same bytes in both roles: one read claims them, the other role's read is left to
    the step (a parse), and the error is the plain job's."""
    same = {role: (demo / "orders.csv", "orders.csv") for role in Role}
    with pytest.raises(UnknownColumnError, match=r"orders\.csv has no column") as plain:
        reconcile(same, mapping, Policy())
    with pytest.raises(UnknownColumnError) as job:
        run_job(same, mapping, Policy(), tmp_path / "job.csv")
    assert str(job.value) == str(plain.value)


def test_an_inspection_of_its_own_reads_each_file_once_and_reports_as_the_plain_one(
    demo: Path, mapping: Mapping, tmp_path: Path, parses: list[str]
) -> None:
    """`reconbot inspect` validates on the files read straight into their tables: the same
    report as a validation that parsed them into Parquet, and no Parquet written."""
    edited = with_orders(mapping, order_amount="Subtotal")  # a reading with warnings or not
    for reading in (mapping, edited):
        report = validate_once(files_of(demo), reading, Policy(), tmp_path)
        assert parses == []
        plain = load_and_validate(connect(), files_of(demo), reading, policy=Policy())
        parses.clear()
        assert (report.errors, report.warnings, report.facts, report.routine, report.rows) == (
            plain.errors,
            plain.warnings,
            plain.facts,
            plain.routine,
            plain.rows,
        )
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_file_needed_again_is_read_again_in_its_process_and_cached_by_another(
    demo: Path,
    mapping: Mapping,
    tmp_path: Path,
    loads: list[tuple[Role, ...]],
    parses: list[str],
) -> None:
    cache, files = cache_in(tmp_path / "cache"), sources_of(demo)
    memo = memo_in(cache)
    assert preload(files, mapping, cache, kept_of(cache), policy=Policy())
    assert load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), memo=memo, policy=Policy()
    ).ok
    edited = with_orders(mapping, order_status="Currency")
    assert load_and_validate(
        connect(), files, edited, cache=cache, kept=kept_of(cache), memo=memo, policy=Policy()
    ).ok
    job = run_job(
        files, edited, Policy(), tmp_path / "edited.csv", cache=cache, kept=kept_of(cache)
    )
    assert loads == [(), (), ()]  # the edited status column was read again in place
    assert parses == []  # the orders file was read again from its bytes: no Parquet written
    # Another process (a fresh cache on the same folder) has neither the tables nor the first
    # read: it parses both files into the columnar cache, and a third reads them from it.
    other = ColumnCache(cache.folder, max_bytes=1 << 30, max_age=timedelta(days=2))
    again = run_job(files, edited, Policy(), tmp_path / "other.csv", cache=other, kept=KeptTables())
    assert sorted(parses) == ["orders.csv", "payments.csv"]  # parsed at once: either first
    third = ColumnCache(cache.folder, max_bytes=1 << 30, max_age=timedelta(days=2))
    run_job(files, edited, Policy(), tmp_path / "third.csv", cache=third, kept=KeptTables())
    assert len(parses) == 2
    plain = plain_job(demo, edited, tmp_path / "plain.csv")
    assert_same_result(job, plain, tmp_path / "edited.csv", tmp_path / "plain.csv")
    assert_same_result(again, plain, tmp_path / "other.csv", tmp_path / "plain.csv")
    assert again.digests == job.digests == {role: files[role].digest for role in Role}


def test_a_file_read_before_is_not_read_straight_again(
    demo: Path, mapping: Mapping, tmp_path: Path
) -> None:
    cache, files = cache_in(tmp_path / "cache"), sources_of(demo)
    assert preload(files, mapping, cache, kept_of(cache), policy=Policy())
    assert load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), policy=Policy()
    ).ok
    assert not preload(
        files, mapping, cache, kept_of(cache), policy=Policy()
    )  # read straight before: nothing to start
    cached = cache_in(tmp_path / "parsed")
    assert load_and_validate(
        connect(), files, mapping, cache=cached, kept=kept_of(cached), policy=Policy()
    ).ok
    assert not preload(
        files, mapping, cached, kept_of(cached), policy=Policy()
    )  # both in the columnar cache
    new = cache_in(tmp_path / "new")
    assert not preload(files_of(demo), mapping, new, kept_of(new), policy=Policy())  # no digests


@pytest.mark.parametrize("outcome", ["read", "failed"])
def test_a_step_waiting_for_the_first_read_gets_its_columns_or_its_error(
    demo: Path, tmp_path: Path, outcome: str
) -> None:
    cache = cache_in(tmp_path / "cache")
    digest, reading = "sha256:" + "0" * 64, Reading("utf-8", ",", 1)
    claim = cache.claim(digest, reading)
    assert claim is not None
    assert cache.claim(digest, reading) is None  # one reader per file
    got: list[Any] = []

    def never() -> Any:
        raise AssertionError("a step waiting for the first read never fetches the file")

    def step() -> None:
        try:
            got.append(cache.columns("orders.csv", reading, never, digest=digest))
        except HeaderOnlyError as error:
            got.append(error)

    waiting = threading.Thread(target=step)
    waiting.start()
    waiting.join(timeout=0.3)
    assert waiting.is_alive() and got == []  # it waits for the read under way
    layout = inspect_csv(demo / "orders.csv", "orders.csv").layout
    if outcome == "read":
        claim.done(claim.columns(digest, replace(layout, records=2_000)))
    else:
        claim.failed(HeaderOnlyError("no data rows", file_name="orders.csv"))
    waiting.join(timeout=10)
    assert not waiting.is_alive()
    if outcome == "failed":
        assert isinstance(got[0], HeaderOnlyError) and got[0].file_name == "orders.csv"
        return
    columns = got[0]
    assert (columns.digest, columns.records) == (digest, 2_000)
    assert columns.parquet.parent == cache.folder and not columns.parquet.exists()
    assert columns.reread is not None  # a load reads the file's bytes again
    # Asked again, the file's columns come straight back, without waiting or fetching.
    assert cache.columns("orders.csv", reading, never, digest=digest) == columns


def test_a_file_read_while_the_other_is_read_is_checked_beside_it_with_the_same_report(
    demo: Path, mapping: Mapping, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file whose first read ends first is checked at once, beside the other's read; the
    validation that follows takes that report instead of checking the file again, and its
    report is the one a validation that read everything itself makes."""
    import agent.data.reconcile.preload as preload_module
    import agent.data.reconcile.run as run_module

    checked_beside: list[Role] = []
    orders_checked = threading.Event()
    real_validate, real_read = preload_module.validate, preload_module.read_file_as

    def validate_beside(con: Any, role: Role, *args: Any) -> Any:
        try:
            return real_validate(con, role, *args)
        finally:
            checked_beside.append(role)
            orders_checked.set()

    def payments_after_orders(con: Any, role: Role, *args: Any, **kwargs: Any) -> Any:
        if role is Role.PAYMENTS:  # the orders are read and checked first
            assert orders_checked.wait(timeout=60)
        return real_read(con, role, *args, **kwargs)

    checked_after: list[Role] = []
    real_run_validate = run_module.validate

    def validate_after(con: Any, role: Role, *args: Any) -> Any:
        checked_after.append(role)
        return real_run_validate(con, role, *args)

    monkeypatch.setattr(preload_module, "validate", validate_beside)
    monkeypatch.setattr(preload_module, "read_file_as", payments_after_orders)
    monkeypatch.setattr(run_module, "validate", validate_after)
    cache, files = cache_in(tmp_path / "cache"), sources_of(demo)
    assert preload(files, mapping, cache, kept_of(cache), policy=Policy())
    report = load_and_validate(
        connect(),
        files,
        mapping,
        cache=cache,
        kept=kept_of(cache),
        memo=memo_in(cache),
        policy=Policy(),
    )
    assert checked_beside == [Role.ORDERS]  # the payments were read last: checked after
    assert checked_after == [Role.PAYMENTS]
    alone = load_and_validate(connect(), files_of(demo), mapping, policy=Policy())
    assert report == alone  # every check, fact, warning and error, in order
    again = load_and_validate(
        connect(),
        files,
        mapping,
        cache=cache,
        kept=kept_of(cache),
        memo=memo_in(cache),
        policy=Policy(),
    )
    assert again == alone  # remembered under the key a check of its own would have used


def test_an_edit_after_the_first_read_loads_from_the_text_it_kept_not_from_the_bytes(
    demo: Path, mapping: Mapping, tmp_path: Path, parses: list[str]
) -> None:
    cache, files = cache_in(tmp_path / "cache"), sources_of(demo)
    fetched: list[str] = []

    def counted(source: Source) -> Source:
        def fetch() -> Any:
            fetched.append(source.name)
            return source.fetch()

        return replace(source, fetch=fetch)

    files = {role: counted(source) for role, source in files.items()}
    assert preload(files, mapping, cache, kept_of(cache), policy=Policy())
    first = load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), policy=Policy()
    )
    assert first.ok
    assert sorted(fetched) == ["orders.csv", "payments.csv"]  # the first read, once each
    # An edit of an amount column: the payments table is made again from the kept text.
    edited = mapping.model_copy(
        update={
            "payments": mapping.payments.model_copy(
                update={"columns": {**mapping.payments.columns, "captured_amount": "Amount"}}
            ),
            "orders": mapping.orders.model_copy(
                update={"columns": {**mapping.orders.columns, "order_amount": "Subtotal"}}
            ),
        }
    )
    assert edited.orders.columns["order_amount"] != mapping.orders.columns["order_amount"]
    report = load_and_validate(
        connect(), files, edited, cache=cache, kept=kept_of(cache), policy=Policy()
    )
    assert sorted(fetched) == ["orders.csv", "payments.csv"], "no file was read again"
    assert parses == []
    fresh = load_and_validate(connect(), files_of(demo), edited, policy=Policy())
    assert (report.errors, report.warnings, report.facts, report.routine) == (
        fresh.errors,
        fresh.warnings,
        fresh.facts,
        fresh.routine,
    )
    kept_job = run_job(
        files, edited, Policy(), tmp_path / "kept.csv", cache=cache, kept=kept_of(cache)
    )
    plain = plain_job(demo, edited, tmp_path / "plain.csv")
    assert (tmp_path / "kept.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
    assert kept_job.reconciliation.summary() == plain.reconciliation.summary()
