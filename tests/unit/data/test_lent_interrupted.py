"""A sealed reconciliation interrupted while it reads the join keys of the tables it borrowed
gives them back saying their keys are unknown: the next step reads them again, and its result
is the one a plain job gives."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

import agent.data.reconcile.run as run_module
from agent.data.normalize.load import key_columns, table_name
from agent.data.normalize.memo import ValidationMemo
from agent.data.pipeline import run_job
from agent.data.policy import Policy
from agent.data.reconcile import connect, load_and_validate
from agent.data.reconcile.preload import preload
from agent.data.reconcile.run import file_columns
from agent.data.schema import IdReading, Mapping, Role
from tests.unit.data.test_first_read import sources_of
from tests.unit.data.test_kept_tables import assert_same_result, cache_in, kept_of, plain_job


def _digits(mapping: Mapping) -> Mapping:
    """The orders' ids read as their digits only."""
    options = mapping.orders.options.model_copy(update={"ids": IdReading(pattern=r"(\d+)")})
    return mapping.model_copy(
        update={"orders": mapping.orders.model_copy(update={"options": options})}
    )


def test_keys_half_read_when_the_seal_is_interrupted_are_read_again(
    demo: Path, mapping: Mapping, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, files, policy = cache_in(tmp_path / "cache"), sources_of(demo), Policy()
    kept = kept_of(cache)
    memo = ValidationMemo(tmp_path / "memo", max_age=timedelta(days=1))
    digits = _digits(mapping)
    assert preload(files, mapping, cache, kept, policy=policy)
    for reading in (mapping, digits, mapping):  # the last one remembered: keys left as digits
        load_and_validate(
            connect(), files, reading, cache=cache, kept=kept, policy=policy, memo=memo
        )

    def interrupted(con: Any, role: Role, part: Any) -> None:
        """The keys' UPDATE done, the interrupt lands on the index after it."""
        keys = key_columns(role, part)
        sets = ", ".join(f"{name} = {expression}" for name, expression in keys.items())
        con.execute(f"UPDATE {table_name(role)} SET {sets}")
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(run_module, "rekey", interrupted)
    with (
        file_columns(files, mapping, cache=cache) as columns,
        pytest.raises(duckdb.InterruptException),
    ):
        run_module.reconcile_lent(columns, mapping, policy, kept, connect())
    monkeypatch.undo()

    [case] = list(kept._kept.values())
    assert Role.ORDERS not in case.keyed, "keys half read are not said to be read"
    load_and_validate(connect(), files, digits, cache=cache, kept=kept, policy=policy, memo=memo)
    job = run_job(files, digits, policy, tmp_path / "kept.csv", cache=cache, kept=kept)
    plain = plain_job(demo, digits, tmp_path / "plain.csv")
    assert_same_result(job, plain, tmp_path / "kept.csv", tmp_path / "plain.csv")
