"""A question about a kind of finding, asked through the workflow on the demo data, is answered
with the findings of the reconciled case's exceptions file: their ids, their rows, how many."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from agent.domain import Approver

from .conftest import Demo, World, uploads

BOB = Approver(user="bob")
LINE = re.compile(r"^- orders (\S+) \(orders\.csv row (\d+)\); expected ")


def _exceptions(world: World, investigation_id: str) -> list[dict[str, str]]:
    outcome = world.saved.outcome(investigation_id)
    assert outcome is not None and outcome.export_digest is not None
    with (
        world.blobs.local_copy(outcome.export_digest) as path,
        Path(path).open(newline="", encoding="utf-8") as handle,
    ):
        return list(csv.DictReader(handle))


def test_which_orders_were_never_paid_lists_them_with_their_rows(world: World, demo: Demo) -> None:
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None
    case = started.investigation.id

    before = world.service.questions.ask(case, "which orders were never paid?", actor="carol")
    assert before.text.startswith("This investigation has not been reconciled yet;")

    world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    answer = world.service.questions.ask(case, "which orders were never paid?", actor="carol")
    unpaid = {
        r["order_ids"]: r["orders_rows"]
        for r in _exceptions(world, case)
        if r["category"] == "order_without_capture"
    }
    total = demo.truth["findings"]["order_without_capture"]
    assert len(unpaid) == total > 20, "the demo has more unpaid orders than one list shows"
    lines = answer.text.splitlines()
    assert lines[0] == (
        f"{total} order_without_capture findings; 20 of {total} listed, largest difference "
        f"first; every one is in the exceptions file exceptions-{case}-r1.csv (category "
        "order_without_capture):"
    )
    listed = [LINE.match(line) for line in lines[1:]]
    assert len(listed) == 20 and all(listed), lines
    for match in listed:
        assert match is not None
        assert unpaid[match.group(1)] == match.group(2), "the order's row in orders.csv"
    assert "Rule" not in answer.text, "the answer lists the orders, it does not recite the rule"

    trace = [e.name for e in world.saved.trace(case)]
    assert trace.count("list_findings") == 2


def test_a_short_kind_is_listed_whole_and_an_empty_one_says_so(world: World, demo: Demo) -> None:
    started = world.service.intake.start(uploads(demo.orders, demo.payments), requested_by="alice")
    request = started.request
    assert request is not None
    world.service.decisions.confirm(request.pause_id, request.authorization_identity, BOB)
    case = started.investigation.id
    rows = _exceptions(world, case)

    answer = world.service.questions.ask(case, "what was over-captured?", actor="carol")
    over = [r for r in rows if r["category"] == "over_capture"]
    assert 1 < len(over) <= 20
    lines = answer.text.splitlines()
    assert lines[0] == f"{len(over)} over_capture findings, largest difference first:"
    assert len(lines) == 1 + len(over)
    assert {r["order_ids"] for r in over} == {line.split()[2] for line in lines[1:]}

    none = world.service.questions.ask(case, "list the unreadable_row findings", actor="carol")
    assert none.text.startswith("No finding is unreadable_row:")
