"""The exceptions CSV a terminal names is a `.csv` file a person can open: after reconciling
(`investigate`, `decide`) and in `reconbot status INV`, a copy kept under the cases home as
`exceptions/exceptions-INV-…-rN.csv`, never a blob's key without an extension."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent.domain import Outcome
from agent.errors import StorageError
from bot.config import Settings
from bot.terminal.exceptions_file import locate_exceptions
from tests.support.cli import demo_folder, reconbot

HOME = Path(".local", "share", "reconbot")
WHERE = re.compile(r"^Exceptions CSV \(([\d,]+) rows\): (.+)$", re.M)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_folder(tmp_path_factory.mktemp("exceptions"), 2000)


def named(output: str) -> tuple[int, Path]:
    """The rows and the path of the one `Exceptions CSV (N rows): PATH` line of `output`."""
    [(rows, where)] = WHERE.findall(output)
    return int(rows.replace(",", "")), Path(where)


def data_rows(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as handle:
        return sum(1 for _ in csv.reader(handle)) - 1


def test_investigate_and_status_name_the_same_csv_under_the_cases_home(folder: Path) -> None:
    run = reconbot(
        "investigate", "demo/orders.csv", "demo/payments.csv", cwd=folder, stdin="approve\n"
    )
    assert run.returncode == 0, run.stderr
    investigation = re.search(r"INV-[0-9A-F]+", run.stdout)
    assert investigation is not None
    rows, path = named(run.stdout)
    assert path == folder / HOME / "exceptions" / f"exceptions-{investigation.group()}-r1.csv"
    assert path.suffix == ".csv" and path.is_file()
    assert rows > 0 and data_rows(path) == rows

    status = reconbot("status", investigation.group(), cwd=folder)
    assert status.returncode == 0, status.stderr
    assert named(status.stdout) == (rows, path)

    kept = path.read_bytes()
    path.unlink()  # removed by hand: status keeps it again, the same bytes
    status = reconbot("status", investigation.group(), cwd=folder)
    assert named(status.stdout) == (rows, path)
    assert path.read_bytes() == kept

    path.write_text("not the exceptions\n")  # changed by hand: written again from the store
    shown = reconbot("status", investigation.group(), "--json", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["exceptions_csv"] == str(path)
    assert path.read_bytes() == kept


def test_decide_in_another_process_names_the_kept_csv(folder: Path) -> None:
    paused = reconbot("investigate", "demo/orders.csv", "demo/payments.csv", "--json", cwd=folder)
    assert paused.returncode == 0, paused.stderr
    request = json.loads(paused.stdout.splitlines()[0])
    decided = reconbot(
        "decide",
        request["pause_id"],
        "approve",
        "--authorization",
        request["authorization_identity"],
        cwd=folder,
    )
    assert decided.returncode == 0, decided.stderr
    rows, path = named(decided.stdout)
    name = f"exceptions-{request['investigation_id']}-r1.csv"
    assert path == folder / HOME / "exceptions" / name
    assert data_rows(path) == rows


def test_a_status_with_no_outcome_names_no_csv(folder: Path) -> None:
    paused = reconbot("investigate", "demo/orders.csv", "demo/payments.csv", "--json", cwd=folder)
    investigation = json.loads(paused.stdout.splitlines()[0])["investigation_id"]
    status = reconbot("status", investigation, cwd=folder)
    assert status.returncode == 0, status.stderr
    assert "Exceptions CSV" not in status.stdout
    shown = reconbot("status", investigation, "--json", cwd=folder)
    assert json.loads(shown.stdout)["exceptions_csv"] is None


def outcome(digest: str) -> Outcome:
    return Outcome(
        investigation_id="INV-ABC",
        pause_id="PAUSE-1",
        revision=2,
        mapping_digest="sha256:m",
        input_identity="sha256:i",
        counts={},
        summary={},
        top_findings=[],
        report="",
        export_digest=digest,
        export_rows=1,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


class Store:
    """The use cases' one query `locate_exceptions` needs, over a file or a failing store."""

    def __init__(self, source: Path | None) -> None:
        self.source = source
        self.queries = self

    @contextmanager
    def exceptions_file(self, _: Outcome) -> Iterator[Path]:
        if self.source is None:
            raise StorageError("the file store could not be reached (log ref 1)")
        yield self.source


def locate(store: Store, settings: Settings, result: Outcome, export: Path | None) -> str | None:
    service: Any = SimpleNamespace(queries=store)
    return locate_exceptions(service, settings, result, export)


def test_a_blob_from_any_store_is_kept_as_a_named_csv(tmp_path: Path) -> None:
    source = tmp_path / "blob"
    source.write_bytes(b"category,order\namount_mismatch,#1\n")
    digest = "sha256:" + hashlib.sha256(source.read_bytes()).hexdigest()
    settings = Settings(RECONBOT_HOME=tmp_path / "home", RECONBOT_BLOB_URL="s3://bucket/p")
    where = locate(Store(source), settings, outcome(digest), None)
    kept = tmp_path / "home" / "exceptions" / "exceptions-INV-ABC-r2.csv"
    assert where == str(kept)
    assert kept.read_bytes() == source.read_bytes()
    # Kept already: the store is not asked again.
    assert locate(Store(None), settings, outcome(digest), None) == str(kept)


def test_a_store_that_cannot_be_read_is_said_beside_where_the_file_is(tmp_path: Path) -> None:
    settings = Settings(RECONBOT_HOME=tmp_path / "home", RECONBOT_BLOB_URL="s3://bucket/p")
    where = locate(Store(None), settings, outcome("sha256:abc"), tmp_path / "out.csv")
    assert where is not None
    assert where.startswith("sha256:abc in s3://bucket/p")
    assert f"not written to {tmp_path / 'out.csv'}" in where
    assert "could not be reached" in where
    assert not (tmp_path / "out.csv").exists()
