"""The in-memory caches of the data engine (cachetools underneath) keep what they kept before:
how many entries, which one goes first, how long a kept workspace lasts."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from agent.data.cache import DIRECT_READS_KEPT, ColumnCache, Reading
from agent.data.ingest import CsvLayout
from agent.data.kept import KeptTables, KeptWorkspace
from agent.data.mapping.by_object import ByObjects
from agent.data.samples import SampleCache
from agent.data.schema import Role


def _files(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in range(count):
        path = folder / f"f{n}.csv"
        path.write_text(f"id,amount\n{n},1.00\n", encoding="utf-8")
        paths.append(path)
    return paths


def test_the_sample_cache_keeps_the_most_recently_used_samples(tmp_path: Path) -> None:
    fetched: list[str] = []

    def fetch(path: Path) -> Callable[[], AbstractContextManager[Path]]:
        def opened() -> AbstractContextManager[Path]:
            fetched.append(path.name)
            return nullcontext(path)

        return opened

    a, b, c = _files(tmp_path, 3)
    cache = SampleCache(size=2)
    for path in (a, b, a, c):  # `a` used again: `b` is the least recently used
        cache.sample(f"sha256:{path.stem}", path.name, fetch(path))
    assert fetched == ["f0.csv", "f1.csv", "f2.csv"]
    cache.sample("sha256:f0", "f0.csv", fetch(a))
    cache.sample("sha256:f1", "f1.csv", fetch(b))
    assert fetched[3:] == ["f1.csv"]


class _Sample:
    """An object results are worked out from (weakly referenced, as `CsvSample`s are)."""


def test_by_objects_keeps_the_most_recently_used_results() -> None:
    kept: ByObjects[_Sample, str] = ByObjects(2)
    a, b, c = _Sample(), _Sample(), _Sample()
    kept.put((a,), "a")
    kept.put((b,), "b")
    assert kept.get((a,)) == "a"
    kept.put((c,), "c")
    assert (kept.get((a,)), kept.get((b,)), kept.get((c,))) == ("a", None, "c")


def _workspace() -> KeptWorkspace:
    return KeptWorkspace(duckdb.connect(), loaded={Role.ORDERS: "key"})


def test_kept_tables_drop_the_oldest_for_room_and_say_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="agent.data.kept")
    kept = KeptTables(max_kept=2)
    first, second, third = _workspace(), _workspace(), _workspace()
    kept.keep("first", first)
    kept.keep("second", second)
    kept.keep("first", first)  # kept anew: `second` is now the oldest
    kept.keep("third", third)
    assert "a kept workspace was dropped for room" in caplog.text
    assert kept.take("second") is None
    assert kept.take("first") is first
    assert kept.take("first") is None  # taken: one step at a time
    assert kept.take("third") is third


def test_kept_tables_keep_nothing_past_their_age_nor_when_told_to_keep_none() -> None:
    stale = KeptTables(max_age=timedelta(0))
    stale.keep("files", _workspace())
    assert stale.take("files") is None
    none = KeptTables(max_kept=0)
    none.keep("files", _workspace())
    assert none.take("files") is None
    unloaded = KeptTables()
    unloaded.keep("files", KeptWorkspace(duckdb.connect()))
    assert unloaded.take("files") is None


def test_the_column_cache_remembers_the_last_direct_reads(tmp_path: Path) -> None:
    cache = ColumnCache(tmp_path / "cache", max_bytes=1 << 20, max_age=timedelta(days=1))
    reading = Reading("utf-8", ",", 0)
    layout = CsvLayout("f.csv", "utf-8", ",", 0, ("id",), records=1)
    digests = [f"sha256:{n:064x}" for n in range(DIRECT_READS_KEPT + 1)]
    for digest in digests:
        claim = cache.claim(digest, reading)
        assert claim is not None
        claim.done(claim.columns(digest, layout))
    # The first read is forgotten (a step would parse the file), the later ones remembered.
    assert cache.claim(digests[0], reading) is not None
    assert all(cache.claim(d, reading) is None for d in digests[1:])
    cache.close()
