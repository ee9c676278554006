"""A kept workspace lent to a step that changes none of its tables: a step that takes it waits
until it is given back, and one kept meanwhile by a step that stopped waiting stays."""

from __future__ import annotations

import threading
import time

import duckdb

from agent.data.kept import KeptTables, KeptWorkspace
from agent.data.schema import Role


def _workspace() -> KeptWorkspace:
    return KeptWorkspace(duckdb.connect(), loaded={Role.ORDERS: "load"})


def test_a_step_that_takes_a_lent_workspace_waits_until_it_is_given_back() -> None:
    kept, lent = KeptTables(), _workspace()
    kept.keep("files", lent)
    borrowed = kept.lend("files")
    assert borrowed is lent
    assert kept.lend("files") is None, "lent once at a time"
    taken: list[KeptWorkspace | None] = []
    taker = threading.Thread(target=lambda: taken.append(kept.take("files", wait=10)))
    taker.start()
    time.sleep(0.2)
    assert taken == [], "still lent: the step waits"

    kept.give_back("files", borrowed)
    taker.join(10)

    assert taken == [lent]


def test_a_step_that_stopped_waiting_keeps_its_own_and_the_lent_one_does_not_replace_it() -> None:
    kept, lent, newer = KeptTables(), _workspace(), _workspace()
    kept.keep("files", lent)
    borrowed = kept.lend("files")
    assert borrowed is not None

    began = time.monotonic()
    assert kept.take("files", wait=0.2) is None, "not given back in time"
    assert time.monotonic() - began < 5
    kept.keep("files", newer)  # the step loaded the files itself
    kept.give_back("files", borrowed)

    assert kept.take("files") is newer
