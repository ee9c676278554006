"""An empty input (no bytes, blank lines, a header and no rows) stops `reconcile` and
`investigate` with one sentence naming the file, exit 2 and no traceback; nothing is started."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import reconbot

STATE = Path(".local", "share", "reconbot")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("empty")
    made = reconbot("demo-data", "--rows", "500", "--out", "demo", cwd=path)
    assert made.returncode == 0, made.stderr
    saved = reconbot(
        "inspect", "demo/orders.csv", "demo/payments.csv", "--save-mapping", "m.json", cwd=path
    )
    assert saved.returncode == 0, saved.stderr
    (path / "zero.csv").write_bytes(b"")
    (path / "blank.csv").write_bytes(b"\xef\xbb\xbf\r\n\n  \n")
    header = (path / "demo" / "orders.csv").read_bytes().splitlines(keepends=True)[0]
    (path / "header.csv").write_bytes(header)
    return path


def refused(done: subprocess.CompletedProcess[str]) -> str:
    """The one sentence a refused command says on stderr (exit 2, no traceback)."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr


@pytest.mark.parametrize(
    ("orders", "payments", "said"),
    [
        ("zero.csv", "demo/payments.csv", "reconbot: zero.csv: the file is empty (0 bytes)"),
        ("demo/orders.csv", "zero.csv", "reconbot: zero.csv: the file is empty (0 bytes)"),
        ("blank.csv", "demo/payments.csv", "reconbot: blank.csv: the file is empty (only blank"),
        ("header.csv", "demo/payments.csv", "header.csv: the file has a header row but no data"),
    ],
    ids=["zero-orders", "zero-payments", "blank-lines", "header-only"],
)
def test_reconcile_of_an_empty_file_is_one_sentence(
    folder: Path, orders: str, payments: str, said: str
) -> None:
    done = reconbot(
        "reconcile", orders, payments, "--mapping", "m.json", "--export", "x.csv", cwd=folder
    )
    assert said in refused(done)
    assert done.stdout == ""
    assert not (folder / "x.csv").exists()


def test_reconcile_json_says_the_error_as_a_document(folder: Path) -> None:
    done = reconbot(
        "reconcile", "zero.csv", "demo/payments.csv", "--mapping", "m.json", "--json", cwd=folder
    )
    refused(done)
    [document] = [json.loads(line) for line in done.stdout.splitlines()]
    assert document["type"] == "error"
    assert document["error"] == "EmptyFileError"
    assert document["message"].startswith("zero.csv: the file is empty")


@pytest.mark.parametrize(
    ("orders", "said"),
    [
        ("zero.csv", "reconbot: zero.csv: the file is empty (0 bytes)"),
        ("blank.csv", "reconbot: blank.csv: the file is empty (only blank lines)"),
        ("header.csv", "header.csv: the file has a header row but no data rows"),
    ],
    ids=["zero", "blank-lines", "header-only"],
)
def test_investigate_of_an_empty_file_is_one_sentence(
    tmp_path: Path, folder: Path, orders: str, said: str
) -> None:
    done = reconbot(
        "investigate", str(folder / orders), str(folder / "demo/payments.csv"), cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert said.removeprefix("reconbot: ") in done.stderr
    assert done.stdout == ""
    if orders != "header.csv":  # refused before anything is kept
        assert not (tmp_path / STATE).exists()
