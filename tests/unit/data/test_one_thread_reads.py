"""Two files of a size read at once are each read on one thread, with the same result.

The first read (`preload`) reads both files straight at once; when neither is more than
`SIMILAR_SIZES` times the other, DuckDB reads each on one thread (`parallel=false`), which on
two cores costs less CPU than two parallel reads side by side. A read on one thread must give
exactly what the parallel read gives: the same rows in file order, the same digest and record
count, the same late fallback to Windows-1252, the same error for a file that does not read.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import pytest

from agent.data.cache import Claim
from agent.data.ingest import inspect_csv
from agent.data.ingest.columnar import read_into
from agent.data.ingest.reader import read_csv_sql
from agent.data.normalize.load import Source
from agent.data.reconcile import connect
from agent.data.reconcile.preload import SIMILAR_SIZES, one_thread_each
from agent.data.schema import Role
from agent.errors import ReconbotError

QUERY = "SELECT * FROM {source}"


def _many(n: int) -> str:
    return "".join(f'A{i},"{i}.50","line {i}, ""quoted""",x\n' for i in range(n))


FILES: dict[str, Callable[[], bytes]] = {
    # Quoted cells with delimiters, quotes and line breaks; CRLF; a BOM; no final line break;
    # blank lines; invalid UTF-8 past the sniffed head (read as Windows-1252).
    "quoted": lambda: (
        'id,amount,note,x\n1,"1,000.00","a ""b"", c",x\n2,3.00,"two\nlines",y\n' + _many(300_000)
    ).encode(),
    "crlf": lambda: ("id,amount,note,x\r\n" + _many(200_000).replace("\n", "\r\n")).encode(),
    "bom": lambda: b"\xef\xbb\xbf" + ("id,amount,note,x\n" + _many(1_000)).encode(),
    "no final line break": lambda: ("id,amount,note,x\n" + _many(1_000)).rstrip("\n").encode(),
    "late cp1252": lambda: ("id,amount,note,x\n" + _many(260_000)).encode() + b"Z,1.0,Jos\xe9,x\n",
}


def _read(path: Path, parallel: bool) -> tuple[str, object, object, list[tuple[object, ...]]]:
    layout = inspect_csv(path, path.name).layout
    con = connect()
    digest, read = read_into(con, "t", QUERY, path, layout, scratch=path.parent, parallel=parallel)
    rows = con.execute("SELECT rowid, * FROM t ORDER BY rowid").fetchall()
    return digest, read.records, (read.encoding, read.notes), rows


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_read_on_one_thread_gives_what_a_parallel_read_gives(name: str, tmp_path: Path) -> None:
    path = tmp_path / "file.csv"
    path.write_bytes(FILES[name]())
    layout = inspect_csv(path, path.name).layout
    assert "parallel=false" in read_csv_sql(path, layout, parallel=False)
    assert "parallel" not in read_csv_sql(path, layout)
    one, parallel = _read(path, parallel=False), _read(path, parallel=True)
    assert one == parallel  # rows by row number, digest, records, encoding and notes


def test_a_file_that_does_not_read_gives_the_same_error_on_one_thread(tmp_path: Path) -> None:
    path = tmp_path / "ragged.csv"
    rows = [f"{i},{i}.00,n,x" for i in range(200_000)]
    rows.insert(150_000, "7,1.00,n,x,extra")  # a ragged row past the sniffed head
    path.write_text("id,amount,note,x\n" + "\n".join(rows) + "\n")
    errors = []
    for parallel in (False, True):
        with pytest.raises(ReconbotError) as caught:
            _read(path, parallel)
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1]
    assert "row 150001" in errors[0][1]  # the row is named


def _sources(orders: int | None, payments: int | None) -> dict[Role, Source]:
    return {
        Role.ORDERS: Source("o.csv", lambda: nullcontext(Path("o.csv")), "sha256:o", orders),
        Role.PAYMENTS: Source("p.csv", lambda: nullcontext(Path("p.csv")), "sha256:p", payments),
    }


CLAIMS: dict[Role, Claim] = {role: object() for role in Role}  # type: ignore[misc]


@pytest.mark.parametrize(
    ("orders", "payments", "claimed", "one_thread"),
    [
        (146_000_000, 134_000_000, tuple(Role), True),  # of a size: one thread each
        (260_000_000, 250_000_000, tuple(Role), False),  # over DuckDB's memory: parallel
        (100, int(100 * SIMILAR_SIZES), tuple(Role), True),
        (100, int(100 * SIMILAR_SIZES) + 1, tuple(Role), False),  # one much larger: parallel
        (400_000_000, 100_000_000, tuple(Role), False),
        (100, 100, (Role.ORDERS,), False),  # one file read straight (the other cached)
        (None, 100, tuple(Role), False),  # a size not known
        (0, 0, tuple(Role), False),
    ],
)
def test_files_of_a_size_read_at_once_are_read_on_one_thread_each(
    orders: int | None, payments: int | None, claimed: tuple[Role, ...], one_thread: bool
) -> None:
    claims = {role: CLAIMS[role] for role in claimed}
    assert one_thread_each(_sources(orders, payments), claims) is one_thread
