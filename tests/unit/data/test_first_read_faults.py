"""Faults around a case's first read (`preload`, `read_into`, `ColumnCache.claim`).

A step never waits forever for a first read; a result is never reported under the digest of
other bytes than those it was computed from; the first read reads a file as the columnar cache
reads it, and blames the file only for the file's faults; an error of one reading is never
handed to a step under another; and the first read never fails the agent's turn.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from contextlib import nullcontext
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import duckdb
import pytest

from agent.casefiles import CaseFiles
from agent.data.ingest import inspect_csv
from agent.data.ingest.columnar import build_columns, read_into
from agent.data.kept import KeptTables
from agent.data.mapping import infer_mapping
from agent.data.normalize.load import (
    Source,
    load_columns_as,
    read_file_as,
    reading_of,
)
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.reconcile.preload import preload
from agent.data.schema import Mapping, Role
from agent.domain import DatasetRef
from agent.errors import InputFileError, ReconbotError, StorageError
from agent.runtime.turns import AgentTurns
from tests.unit.data.test_kept_tables import cache_in, kept_of, with_orders


def digest_of(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def copied(demo: Path, folder: Path) -> dict[Role, Source]:
    """The demo pair copied to `folder` (so that a test may change a file's bytes later)."""
    folder.mkdir(parents=True, exist_ok=True)
    found = {}
    for role in Role:
        path = folder / f"{role.value}.csv"
        shutil.copyfile(demo / f"{role.value}.csv", path)
        size = path.stat().st_size
        found[role] = Source(path.name, lambda p=path: nullcontext(p), digest_of(path), size)
    return found


def test_a_file_read_again_with_other_bytes_than_its_first_read_is_refused(
    demo: Path, mapping: Mapping, tmp_path: Path
) -> None:
    """A file read again after its first read (a step needs it under another reading once the
    workspace that kept its text went) whose
    bytes changed in between (the blob store gave other bytes) is refused, and the refusal
    names the file: never a result under the first read's digest for other bytes."""
    cache, files = cache_in(tmp_path / "cache"), copied(demo, tmp_path / "files")
    assert preload(files, mapping, cache, kept_of(cache), policy=Policy())
    assert load_and_validate(
        connect(), files, mapping, cache=cache, kept=kept_of(cache), policy=Policy()
    ).ok
    orders = tmp_path / "files" / "orders.csv"
    text = orders.read_bytes()
    header_end = text.index(b"\n") + 1
    # Same rows, other bytes: a data row's content changed (one digit of the file).
    at = next(i for i in range(header_end, len(text)) if text[i : i + 1].isdigit())
    changed = text[:at] + (b"7" if text[at : at + 1] != b"7" else b"3") + text[at + 1 :]
    orders.write_bytes(changed)
    edited = with_orders(mapping, order_status="Currency")  # the kept orders table is not it
    # The workspace with the text kept went (evicted, or its hour passed): the file's bytes
    # are read again.
    with pytest.raises(StorageError, match=r"orders\.csv: the file store handed back other bytes"):
        run_job(files, edited, Policy(), tmp_path / "edited.csv", cache=cache, kept=KeptTables())
    assert not (tmp_path / "edited.csv").exists()  # nothing reported


def test_the_first_read_reads_late_invalid_utf8_in_an_unread_column_as_the_cache_does(
    tmp_path: Path,
) -> None:
    """`read_into` reads a file as `build_columns` does. DuckDB only decodes the columns a
    query reads, so invalid UTF-8 past the sniffed head in a column the mapping does not read
    (a customer's name, never read) must still make the direct read Windows-1252, as the cache
    build of every column does. Otherwise one entry name (and so one kept-table and
    validation-memo key) would hold two readings: a non-
    ASCII id reads "Ä1" in the validated tables and "Ã„1" in a reconciliation of another
    process."""
    rows = ["order_id,amount,customer"]
    rows += [f"Ä{i},{i}.50,Name {i}" for i in range(260_000)]  # past the 4 MiB sniffed head
    path = tmp_path / "orders.csv"
    path.write_bytes(("\n".join(rows) + "\n").encode() + b"Z9,1.00,Jos\xe9\n")
    layout = inspect_csv(path, path.name).layout
    assert layout.encoding == "utf-8"  # the head is valid UTF-8
    built = build_columns(path, layout, tmp_path / "columns.parquet", scratch=tmp_path)
    con = connect()
    _, read = read_into(con, "t", "SELECT c0 FROM {source}", path, layout, scratch=tmp_path)
    first_cached = con.execute(f"SELECT c0 FROM {built.sql()} LIMIT 1").fetchone()
    first_direct = con.execute("SELECT c0 FROM t LIMIT 1").fetchone()
    assert first_direct == first_cached  # ('Ä0',) read straight, ('Ã\x840',) from the cache
    assert (read.encoding, read.notes) == (built.layout.encoding, built.layout.notes)


def _mapping_under(demo: Path, answers: dict[Role, dict[str, str]]) -> Mapping:
    proposal = infer_mapping(
        inspect_csv(demo / "orders.csv", "orders.csv"),
        inspect_csv(demo / "payments.csv", "payments.csv"),
        answers=answers,
    )
    assert proposal.mapping is not None  # the proposal accepts the answer
    return proposal.mapping


@pytest.mark.parametrize(
    "answers",
    [
        {Role.ORDERS: {"timestamp_pattern": "%Q"}},  # Python accepts it, DuckDB's strptime not
        {Role.PAYMENTS: {"id_pattern": r"(?=\d)(\d+)"}},  # Python's re accepts it, RE2 not
    ],
    ids=["timestamp_pattern", "id_pattern"],
)
def test_a_reading_duckdb_refuses_is_not_reported_as_a_file_that_is_not_csv(
    demo: Path, tmp_path: Path, answers: dict[Role, dict[str, str]]
) -> None:
    """A reading DuckDB refuses (a pattern) read straight from the bytes is not blamed on a
    well-formed file ("could not be read as CSV"): it raises what loading the same reading from
    the cache's columns raises, DuckDB's own error, which names the pattern."""
    mapping = _mapping_under(demo, answers)
    (role,) = answers
    path, part = demo / f"{role.value}.csv", mapping.for_role(role)
    layout = inspect_csv(path, path.name).layout
    built = build_columns(path, layout, tmp_path / "columns.parquet", scratch=tmp_path)
    with pytest.raises((duckdb.Error, ReconbotError)) as cached:
        load_columns_as(connect(), role, built, part)
    with pytest.raises((duckdb.Error, ReconbotError)) as direct:
        read_file_as(connect(), role, path, layout, part, scratch=tmp_path)
    assert not isinstance(cached.value, InputFileError)
    assert not isinstance(direct.value, InputFileError), (
        f"the direct read blamed the file: {direct.value!r}; the cache path said {cached.value!r}"
    )


def test_a_step_under_another_mapping_does_not_get_the_first_reads_mapping_error(
    demo: Path, mapping: Mapping, tmp_path: Path
) -> None:
    """A claim is keyed by the file and its layout only, but a first read can fail for reasons
    of its mapping. A validation of another mapping that waited for that read (here: the
    model's change undid a person's id_pattern that DuckDB refuses) reads the file itself and
    succeeds, since nothing is wrong with the file or with the mapping it validates."""
    refused = _mapping_under(demo, {Role.PAYMENTS: {"id_pattern": r"(?=\d)(\d+)"}})
    assert reading_of(refused.payments) == reading_of(mapping.payments)
    cache, files = cache_in(tmp_path / "cache"), copied(demo, tmp_path / "files")
    gate = threading.Event()

    def gated(source: Source) -> Source:
        def fetch() -> Any:
            gate.wait(10)
            return source.fetch()

        return Source(source.name, fetch, source.digest)

    assert preload(
        {role: gated(s) for role, s in files.items()},
        refused,
        cache,
        kept_of(cache),
        policy=Policy(),
    )
    threading.Timer(0.3, gate.set).start()  # the validation below waits for the first read
    try:
        report = load_and_validate(
            connect(), files, mapping, cache=cache, kept=kept_of(cache), policy=Policy()
        )
    except ReconbotError as error:
        pytest.fail(f"the validation of a mapping that reads the file failed: {error!r}")
    assert report.ok


def test_the_first_read_of_one_file_in_both_roles_is_settled(
    demo: Path, mapping: Mapping, tmp_path: Path
) -> None:
    """The same bytes in both roles (one reading, one claim): the first read does not start
    (it would wait, inside itself, for its own claim), its claim is released, and a step that
    asks for the file parses it itself instead of waiting forever."""
    path = demo / "orders.csv"
    digest = digest_of(path)
    same = mapping
    assert reading_of(same.orders) == reading_of(same.payments)
    files = {
        Role.ORDERS: Source("orders.csv", lambda: nullcontext(path), digest),
        Role.PAYMENTS: Source("payments.csv", lambda: nullcontext(path), digest),
    }
    cache = cache_in(tmp_path / "cache")
    assert not preload(
        files, same, cache, kept_of(cache), policy=Policy()
    )  # one file, two roles: left to the steps
    got: list[Any] = []

    def step() -> None:
        try:
            got.append(
                cache.columns(
                    "orders.csv", reading_of(same.orders), files[Role.ORDERS].fetch, digest=digest
                )
            )
        except BaseException as error:
            got.append(error)

    waiting = threading.Thread(target=step, daemon=True)
    waiting.start()
    waiting.join(timeout=15)
    stuck = waiting.is_alive()
    if stuck:  # unblock the first read so that the test process can end
        with cache._lock:
            futures = list(cache._building.values())
        for future in futures:
            if not future.done():
                future.set_exception(RuntimeError("unblocked by the test"))
        waiting.join(timeout=15)
    assert not stuck, "the first read never settled its claim: the step waited forever"
    assert got[0].digest == digest and got[0].parquet.exists()  # the step parsed it itself


def test_prefetch_never_fails_the_turn_when_the_first_read_cannot_start(
    demo: Path, tmp_path: Path
) -> None:
    """`AgentTurns.prefetch` runs before the agent and outside any error handling, and
    `preload` makes the cache folder on the turn's thread: a folder that cannot be made must
    not fail the investigation turn (the tool that needs the files says why)."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "columns").write_text("not a folder")  # the cache folder cannot be made
    paths = {role: demo / f"{role.value}.csv" for role in Role}
    digests = {role: digest_of(path) for role, path in paths.items()}
    by_digest = {digests[role]: paths[role] for role in Role}
    blobs: Any = SimpleNamespace(local_copy=lambda digest: nullcontext(by_digest[digest]))
    door = CaseFiles(blobs, workdir, policy=Policy(), max_age=timedelta(days=1))
    deps: Any = SimpleNamespace(files=door)
    turns = AgentTurns(deps)
    refs = {
        role: DatasetRef(
            role=role, name=paths[role].name, size=paths[role].stat().st_size, digest=digests[role]
        )
        for role in Role
    }
    try:
        turns.prefetch(refs)
    except OSError as error:
        pytest.fail(f"prefetch failed the turn: {error!r}")
