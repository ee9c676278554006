"""The columnar cache: each file parsed once per case, read again by every later step.

Validations and the reconciliation read the cached columns instead of the file (a cached file is
not even fetched), the digest kept with the columns is that of the bytes parsed, an edit
re-validates only the file whose reading changed, and the cache stays within its bounds.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import timedelta
from pathlib import Path

import pytest

import agent.data.reconcile.run as run_module
from agent.data.cache import ColumnCache, Reading
from agent.data.ingest import columnar, inspect_csv
from agent.data.ingest.counting import RecordCount
from agent.data.normalize.load import Source
from agent.data.normalize.memo import ValidationMemo
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.samples import SampleCache
from agent.data.schema import Mapping, Role
from agent.errors import LedgerError

UTF8_COMMA = Reading("utf-8", ",", 1)


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def cache_in(folder: Path, max_mb: int = 1024) -> ColumnCache:
    return ColumnCache(folder, max_bytes=max_mb << 20, max_age=timedelta(days=2))


class Fetches:
    """Counts how often each file's bytes were fetched (a blob download)."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}

    def source(self, path: Path, *, digest: str | None = None) -> Source:
        @contextmanager
        def fetch() -> Iterator[Path]:
            self.count[path.name] = self.count.get(path.name, 0) + 1
            yield path

        return Source(path.name, fetch, sha(path) if digest is None else digest)


def never() -> AbstractContextManager[Path]:
    raise AssertionError("the file was fetched although its columns are cached")


def test_a_file_is_parsed_once_and_its_digest_is_that_of_the_bytes_parsed(
    demo: Path, tmp_path: Path
) -> None:
    cache = cache_in(tmp_path / "cache")
    orders = demo / "orders.csv"
    first = cache.columns("orders.csv", UTF8_COMMA, lambda: nullcontext(orders), digest=sha(orders))
    assert first.digest == sha(orders)
    assert first.records == len(orders.read_bytes().splitlines()) - 1  # the header excluded
    again = cache.columns("orders.csv", UTF8_COMMA, never, digest=sha(orders))
    assert again.parquet == first.parquet
    assert again.digest == first.digest
    assert again.layout == first.layout
    renamed = cache.columns("Orders (1).csv", UTF8_COMMA, never, digest=sha(orders))
    assert renamed.layout.file_name == "Orders (1).csv"  # messages name this upload


def test_an_entry_is_kept_under_the_digest_of_what_was_read_not_what_was_expected(
    demo: Path, tmp_path: Path
) -> None:
    cache = cache_in(tmp_path / "cache")
    orders = demo / "orders.csv"
    claimed = "sha256:" + "0" * 64  # the blob store handed over other bytes than it should
    columns = cache.columns("orders.csv", UTF8_COMMA, lambda: nullcontext(orders), digest=claimed)
    assert columns.digest == sha(orders)  # the caller sees the difference and refuses
    assert cache.get(claimed, UTF8_COMMA) is None
    assert cache.get(sha(orders), UTF8_COMMA) is not None


def test_another_reading_of_the_same_bytes_is_another_entry(demo: Path, tmp_path: Path) -> None:
    cache = cache_in(tmp_path / "cache")
    orders = demo / "orders.csv"
    cache.columns("orders.csv", UTF8_COMMA, lambda: nullcontext(orders), digest=sha(orders))
    assert cache.get(sha(orders), Reading("utf-8", ";", 1)) is None
    assert cache.get(sha(orders), Reading("cp1252", ",", 1)) is None


def test_an_unreadable_entry_is_parsed_again(demo: Path, tmp_path: Path) -> None:
    cache = cache_in(tmp_path / "cache")
    orders = demo / "orders.csv"
    first = cache.columns("orders.csv", UTF8_COMMA, lambda: nullcontext(orders), digest=sha(orders))
    first.parquet.with_suffix(".json").write_text("{not json")
    again = cache.columns("orders.csv", UTF8_COMMA, lambda: nullcontext(orders), digest=sha(orders))
    assert again.records == first.records


def test_the_validation_and_the_reconciliation_read_the_files_once(
    demo: Path, mapping: Mapping, tmp_path: Path
) -> None:
    cache = cache_in(tmp_path / "cache")
    fetches = Fetches()
    files = {role: fetches.source(demo / f"{role.value}.csv") for role in Role}
    report = load_and_validate(connect(), files, mapping, cache=cache, policy=Policy())
    assert report.ok
    cached = run_job(files, mapping, Policy(), tmp_path / "cached.csv", cache=cache)
    assert fetches.count == {"orders.csv": 1, "payments.csv": 1}
    plain = run_job(
        {role: (demo / f"{role.value}.csv", f"{role.value}.csv") for role in Role},
        mapping,
        Policy(),
        tmp_path / "plain.csv",
    )
    assert cached.digests == {role: sha(demo / f"{role.value}.csv") for role in Role}
    assert cached.reconciliation.summary() == plain.reconciliation.summary()
    assert (tmp_path / "cached.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()


def test_a_file_that_does_not_add_up_is_never_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "orders.csv"
    path.write_text("id,total\n1,2\n3,4\n")
    cache = cache_in(tmp_path / "cache")
    # The independent counts find a record more than DuckDB parsed (a lost row).
    monkeypatch.setattr(columnar, "scan_records", lambda source, progress=None: RecordCount(4, 0))
    monkeypatch.setattr(columnar, "count_csv_records", lambda source, delimiter: 4)
    with pytest.raises(LedgerError, match="gave 2 rows, but it holds 3"):
        cache.columns("orders.csv", UTF8_COMMA, lambda: nullcontext(path), digest=sha(path))
    assert cache.get(sha(path), UTF8_COMMA) is None
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []


def test_rows_read_are_reported_per_file_and_end_at_every_record(
    demo: Path, tmp_path: Path
) -> None:
    seen: list[tuple[str, int, float]] = []
    cache = cache_in(tmp_path / "cache")
    orders = demo / "orders.csv"
    columns = cache.columns(
        "orders.csv",
        UTF8_COMMA,
        lambda: nullcontext(orders),
        digest=sha(orders),
        progress=lambda name, rows, share: seen.append((name, rows, share)),
    )
    assert seen[-1] == ("orders.csv", columns.records, 1.0)


def test_the_cache_evicts_by_age_then_by_size_least_recently_used_first(
    demo: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "cache"
    cache = cache_in(folder)
    entries = []
    for role in Role:
        path = demo / f"{role.value}.csv"
        entries.append(
            cache.columns(path.name, UTF8_COMMA, lambda p=path: nullcontext(p), digest=sha(path))
        )
    orders, payments = entries
    old = time.time() - timedelta(days=3).total_seconds()
    os.utime(orders.parquet, (old, old))
    assert cache.evict() == 1
    assert not orders.parquet.exists()
    assert not orders.parquet.with_suffix(".json").exists()
    assert payments.parquet.exists()
    small = ColumnCache(folder, max_bytes=1, max_age=timedelta(days=2))
    path = demo / "orders.csv"
    again = small.columns(path.name, UTF8_COMMA, lambda: nullcontext(path), digest=sha(path))
    assert again.parquet.exists()  # the entry just built stays
    assert not payments.parquet.exists()  # the least recently used went to make room


def test_an_edit_revalidates_only_the_file_whose_reading_changed(
    demo: Path, mapping: Mapping, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = cache_in(tmp_path / "cache")
    memo = ValidationMemo(tmp_path / "cache" / "validations", max_age=timedelta(days=2))
    files = {role: Source.at(demo / f"{role.value}.csv", f"{role.value}.csv") for role in Role}
    validated: list[Role] = []
    real = run_module.validate

    def counting(con, role, name, dataset, policy, answers=None):  # type: ignore[no-untyped-def]
        validated.append(role)
        return real(con, role, name, dataset, policy, answers)

    monkeypatch.setattr(run_module, "validate", counting)
    first = load_and_validate(connect(), files, mapping, cache=cache, memo=memo, policy=Policy())
    assert validated == [Role.ORDERS, Role.PAYMENTS]
    edited = mapping.model_copy(
        update={
            "orders": mapping.orders.model_copy(
                update={"columns": {**mapping.orders.columns, "order_status": "Currency"}}
            )
        }
    )
    validated.clear()
    second = load_and_validate(connect(), files, edited, cache=cache, memo=memo, policy=Policy())
    assert validated == [Role.ORDERS]
    fresh = load_and_validate(connect(), files, edited, policy=Policy())
    assert (second.errors, second.warnings, second.facts, second.rows) == (
        fresh.errors,
        fresh.warnings,
        fresh.facts,
        fresh.rows,
    )
    validated.clear()
    load_and_validate(connect(), files, mapping, cache=cache, memo=memo, policy=Policy())
    assert validated == []  # back to the first reading: every report is remembered
    assert json.loads(next((tmp_path / "cache" / "validations").glob("*.json")).read_text())
    assert first.ok


def test_leftovers_of_a_process_that_died_mid_parse_are_removed_once_stale(
    demo: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "cache"
    scratch = folder / ".scratch-abc"
    scratch.mkdir(parents=True)
    (scratch / "orders.csv.data.csv").write_text("x")
    partial = folder / ".build-1-2.parquet"
    partial.write_text("x")
    fresh = folder / ".build-3-4.parquet"
    fresh.write_text("x")
    old = time.time() - timedelta(days=3).total_seconds()
    for stale in (scratch, partial):
        os.utime(stale, (old, old))
    cache_in(folder).evict()
    assert not scratch.exists()
    assert not partial.exists()
    assert fresh.exists()  # perhaps another process's parse under way


def test_another_process_inspects_a_file_from_its_kept_head_without_fetching_it(
    demo: Path, tmp_path: Path
) -> None:
    orders = demo / "orders.csv"
    first = SampleCache(folder=tmp_path / "heads")
    sample = first.sample(sha(orders), "orders.csv", lambda: nullcontext(orders))
    assert sample == inspect_csv(orders, "orders.csv")
    assert first.sample(sha(orders), "orders.csv", never) == sample  # this process remembers
    another = SampleCache(folder=tmp_path / "heads")  # a worker that never saw the file
    again = another.sample(sha(orders), "Orders (2).csv", never)
    assert again.rows == sample.rows
    assert again.complete == sample.complete
    assert again.layout.file_name == "Orders (2).csv"
    proposal = another.proposal((again, again), (sha(orders), sha(orders)))
    assert another.proposal((again, again), (sha(orders), sha(orders))) is proposal


def test_an_entry_or_a_report_that_is_not_one_of_ours_is_computed_again(
    demo: Path, mapping: Mapping, tmp_path: Path
) -> None:
    cache = cache_in(tmp_path / "cache")
    orders = demo / "orders.csv"
    first = cache.columns("orders.csv", UTF8_COMMA, lambda: nullcontext(orders), digest=sha(orders))
    first.parquet.with_suffix(".json").write_text('{"digest": "sha256:x"}')  # valid JSON, no layout
    assert cache.get(sha(orders), UTF8_COMMA) is None
    memo = ValidationMemo(tmp_path / "memo", max_age=timedelta(days=2))
    (tmp_path / "memo").mkdir()
    (tmp_path / "memo" / "k.json").write_text('{"rows": {}, "checks": [{"file": 1}]}')
    assert memo.recall("k") is None
