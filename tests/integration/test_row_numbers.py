"""Row numbers are evidence: on a file large enough for DuckDB to read in parallel, data row n
of the file must be row n of the loaded table, for both roles."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.data.normalize import load_dataset, table_name
from agent.data.reconcile import connect
from agent.data.schema import AmountReading, DatasetMapping, ReadingOptions, Role, TimestampReading

ROWS = 600_000
CURRENCIES = ["USD", "JPY", "KWD", "EUR", "GBP", "CHF", "XYZ"]


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rows") / "big.csv"
    with path.open("w", encoding="utf-8") as out:
        out.write("ref,amount_ref,amount,currency,when,status\n")
        for i in range(1, ROWS + 1):
            ref = f"#{i}, #{i + 1}" if i % 97 == 0 else f"#{i}"
            amount = f"1,{i % 1000:03d}.50"
            out.write(f'R{i},"{ref}","{amount}",{CURRENCIES[i % 7]},2025-10-07 09:50:26,paid\n')
    return path


def options() -> ReadingOptions:
    return ReadingOptions(
        amounts={
            "order_amount": AmountReading(thousands=","),
            "captured_amount": AmountReading(thousands=","),
        },
        timestamps={
            "order_date": TimestampReading(pattern="%Y-%m-%d %H:%M:%S", timezone="UTC"),
            "captured_at": TimestampReading(pattern="%Y-%m-%d %H:%M:%S", timezone="UTC"),
        },
    )


@pytest.mark.parametrize("role", list(Role))
def test_rowid_plus_one_is_the_data_row_number(big_file: Path, role: Role) -> None:
    columns = (
        {"order_id": "ref", "order_amount": "amount", "currency": "currency", "order_date": "when"}
        if role is Role.ORDERS
        else {
            "payment_id": "ref",
            "order_id": "amount_ref",
            "captured_amount": "amount",
            "currency": "currency",
            "captured_at": "when",
        }
    )
    con = connect()
    load_dataset(
        con, role, big_file, big_file.name, DatasetMapping(columns=columns, options=options())
    )
    key = "order_id" if role is Role.ORDERS else "payment_id"
    wrong = con.execute(
        f"SELECT count(*) FROM {table_name(role)} WHERE {key} <> 'R' || CAST(rowid + 1 AS VARCHAR)"
    ).fetchone()
    total = con.execute(f"SELECT count(*) FROM {table_name(role)}").fetchone()
    assert total == (ROWS,)
    assert wrong == (0,)
