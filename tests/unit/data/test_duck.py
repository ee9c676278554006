"""The process's one DuckDB instance: shared by every step, its limits set once, its workspaces
isolated from each other and given back, concurrent work still right."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from agent.data import duck
from agent.data.demo import generate
from agent.data.ingest import inspect_csv
from agent.data.mapping import infer_mapping
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import MEMORY_LIMIT, connect, load_and_validate
from agent.data.schema import Mapping, Role


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A process without a DuckDB instance yet (the test's own, spilling by default into the
    test's folder, closed afterwards)."""
    monkeypatch.setattr(duck, "_current", None)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    yield
    if duck._current is not None:
        duck._current.base.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[Role, tuple[Path, str]], Mapping]:
    out = tmp_path_factory.mktemp("demo")
    generate(1_500, out, seed=11)
    files = {role: (out / f"{role.value}.csv", f"{role.value}.csv") for role in Role}
    proposal = infer_mapping(
        inspect_csv(out / "orders.csv", "orders.csv"),
        inspect_csv(out / "payments.csv", "payments.csv"),
    )
    assert proposal.mapping is not None
    return files, proposal.mapping


def setting(con: duckdb.DuckDBPyConnection, name: str) -> object:
    row = con.execute("SELECT current_setting(?)", [name]).fetchone()
    assert row is not None
    return row[0]


def databases(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {
        str(r[0]) for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()
    }


def test_every_connection_is_one_instance_with_the_limit_set_once(
    fresh: None, tmp_path: Path
) -> None:
    work = duck.workspace(tmp_path / "work")
    parse = duck.session(tmp_path / "elsewhere")
    assert duck.instance(tmp_path / "other") is duck.instance()
    limit = setting(duck.instance(), "memory_limit")
    assert setting(work, "memory_limit") == setting(parse, "memory_limit") == limit
    expected = duckdb.connect(config={"memory_limit": MEMORY_LIMIT})
    assert limit == setting(expected, "memory_limit")
    expected.close()
    # The first caller's folder holds the spill; the others' are never used.
    folder = tmp_path / "work" / f"duckdb-spill-{os.getpid()}"
    for con in (work, parse):
        assert setting(con, "temp_directory") == str(folder)
    assert not (tmp_path / "elsewhere").exists() and not (tmp_path / "other").exists()
    # One buffer pool: a table of one workspace is in the memory every connection sees.
    work.execute(
        "CREATE TABLE big AS SELECT range AS i, md5(range::VARCHAR) AS s FROM range(200000)"
    )
    used = parse.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
    assert used is not None and int(used[0]) > 1_000_000


def test_no_step_opens_a_database_of_its_own(
    demo: tuple[dict[Role, tuple[Path, str]], Mapping],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    files, mapping = demo
    duck.instance()
    opened: list[object] = []
    connect_duckdb = duckdb.connect

    def counting(*args: object, **kwargs: object) -> duckdb.DuckDBPyConnection:
        opened.append(args)
        return connect_duckdb(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(duckdb, "connect", counting)
    assert load_and_validate(
        connect(), files, mapping, tmp_path, policy=Policy()
    ).ok  # parses and validates
    job = run_job(files, mapping, Policy(), tmp_path / "exceptions.csv", workdir=tmp_path)
    assert job.exported > 0
    assert opened == []


def test_workspaces_keep_their_tables_and_macros_apart(fresh: None) -> None:
    first, second = duck.workspace(), duck.workspace()
    first.execute("CREATE TABLE t AS SELECT 1 AS v")
    second.execute("CREATE TABLE t AS SELECT 2 AS v")
    first.execute("CREATE MACRO m(x) AS x + 10")
    second.execute("CREATE MACRO m(x) AS x + 20")
    assert first.execute("SELECT m(v) FROM t").fetchall() == [(11,)]
    assert second.execute("SELECT m(v) FROM t").fetchall() == [(22,)]
    other = duck.cursor(first)  # another thread's connection to the first workspace
    assert other.execute("SELECT m(v) FROM t").fetchall() == [(11,)]


def test_a_workspace_is_given_back_when_its_connection_goes(fresh: None) -> None:
    base = duck.instance()
    con = duck.workspace()
    name = duck.workspace_name(con)
    assert name is not None and name in databases(base)
    con.execute(
        "CREATE TABLE big AS SELECT range AS i, md5(range::VARCHAR) AS s FROM range(300000)"
    )
    del con
    gc.collect()
    assert name not in databases(base)
    used = base.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
    assert used is not None and int(used[0]) < 1_000_000


def test_insertion_order_is_a_setting_of_each_connection(fresh: None) -> None:
    engine, load = duck.workspace(), duck.workspace()
    engine.execute("SET SESSION preserve_insertion_order = false")  # what the engine sets
    assert setting(engine, "preserve_insertion_order") is False
    assert setting(load, "preserve_insertion_order") is True
    assert setting(duck.cursor(engine), "preserve_insertion_order") is True
    assert setting(duck.session(), "preserve_insertion_order") is True
    assert setting(duck.session(), "TimeZone") == "UTC"


def test_a_reconciliation_leaves_insertion_order_to_the_other_connections(
    demo: tuple[dict[Role, tuple[Path, str]], Mapping], tmp_path: Path
) -> None:
    files, mapping = demo
    run = run_job(files, mapping, Policy(), tmp_path / "exceptions.csv", workdir=tmp_path)
    assert run.exported > 0
    for con in (duck.session(), duck.workspace()):
        assert setting(con, "preserve_insertion_order") is True
    instance = duck.instance().execute(
        "SELECT value FROM duckdb_settings() WHERE name = 'preserve_insertion_order'"
    )
    assert instance.fetchone() == ("true",)


def test_the_spill_folder_is_made_by_spilling_and_again_when_removed(
    fresh: None, tmp_path: Path
) -> None:
    con = duck.workspace(tmp_path / "work")
    folder = Path(str(setting(con, "temp_directory")))
    assert folder == duck.spill_folder(tmp_path / "work")
    assert not folder.exists()  # nothing spilled: no folder left behind by a process
    con.execute("SET memory_limit = '64MB'")  # this test's own instance
    big = "SELECT range AS i, md5(range::VARCHAR) AS s FROM range(2000000)"
    con.execute(f"CREATE TABLE big AS {big}")  # more than the limit: spills
    assert folder.is_dir()
    duck.workspace()
    shutil.rmtree(tmp_path / "work")
    again = duck.workspace()
    assert folder.is_dir()
    # Spilling works again (before, DuckDB failed to spill into a folder removed under it).
    # Whether it writes a new file into the folder made again or into a temporary file it
    # still holds open from before the removal is DuckDB's choice: not asserted.
    again.execute(f"CREATE TABLE big AS {big}")
    assert folder.is_dir()


def test_a_job_without_a_cache_leaves_the_instance_a_spill_folder_that_lasts(
    fresh: None, tmp_path: Path, demo: tuple[dict[Role, tuple[Path, str]], Mapping]
) -> None:
    files, mapping = demo
    # The process's first DuckDB work is a job that parses its files into a folder of its own,
    # removed when it ends: the instance must not spill into that folder.
    (tmp_path / "work").mkdir()
    result = run_job(files, mapping, Policy(), tmp_path / "out.csv", workdir=tmp_path / "work")
    con = result.reconciliation._con
    folder = Path(str(setting(con, "temp_directory")))
    assert folder == duck.spill_folder(tmp_path / "work")
    con.execute("SET memory_limit = '64MB'")  # this test's own instance
    big = "SELECT range AS i, md5(range::VARCHAR) AS s FROM range(2000000)"
    con.execute(f"CREATE TABLE big AS {big}")
    assert any(folder.iterdir())  # it spilled, after the job's folder went
    assert result.reconciliation.export_csv(tmp_path / "again.csv") == result.exported


def test_a_forked_process_gets_an_instance_of_its_own(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = duck.instance()
    monkeypatch.setattr(os, "getpid", lambda: -1)
    child = duck.instance()
    assert child is not parent and duck.instance() is child
    assert parent in duck._kept_after_fork  # never closed by the child
    duck._kept_after_fork.remove(parent)
    parent.close()


def test_concurrent_reconciliations_give_what_one_at_a_time_gives(
    demo: tuple[dict[Role, tuple[Path, str]], Mapping], tmp_path: Path
) -> None:
    files, mapping = demo
    report = load_and_validate(connect(), files, mapping, tmp_path, policy=Policy())
    alone = run_job(files, mapping, Policy(), tmp_path / "alone.csv", workdir=tmp_path)
    expected = (tmp_path / "alone.csv").read_bytes()

    def job(n: int) -> tuple[object, object, bytes, object]:
        """Parse, validate and reconcile, while other threads do the same."""
        export = tmp_path / f"together-{n}.csv"
        checked = load_and_validate(connect(), files, mapping, tmp_path, policy=Policy())
        done = run_job(files, mapping, Policy(), export, workdir=tmp_path)
        return checked, done.reconciliation.summary(), export.read_bytes(), done.digests

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(job, range(3)))
    for checked, summary, exported, digests in results:
        assert checked == report
        assert summary == alone.reconciliation.summary()
        assert exported == expected
        assert digests == alone.digests
