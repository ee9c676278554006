"""A question asked in the terminal shows the mapping it is about, as text and with `--json`,
and approving it from another process is refused (the console script, a clean environment).

The pair is Shopify's orders export and Stripe's Dashboard payments export with both `Amount`
and `Amount Captured` (one partial capture), as in `tests/unit/test_clarification_mapping.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import documents, reconbot
from tests.unit.test_clarification_mapping import FORMATS, stripe_unified_payments

QUESTION = "Which column of stripe_unified_payments.csv holds the captured_amount"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("clarification")
    (path / "shopify_orders.csv").write_bytes((FORMATS / "shopify_orders.csv").read_bytes())
    (path / "stripe_unified_payments.csv").write_bytes(stripe_unified_payments())
    return path


def test_the_terminal_and_json_show_the_partial_mapping_and_approval_is_refused(
    folder: Path,
) -> None:
    files = ("shopify_orders.csv", "stripe_unified_payments.csv")
    text = reconbot("investigate", *files, cwd=folder)
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert "A question before approval" in out
    assert "mapping proposed so far (not approvable):" in out
    assert "payments.order_id         <- 'order_id (metadata)'" in out
    assert "payments.captured_amount  <- ? (asked)" in out
    assert "payments read as: utf-8" in out and "orders read as: utf-8" in out
    assert f"question: {QUESTION}" in out

    paused = reconbot("investigate", *files, "--json", cwd=folder)
    assert paused.returncode == 0, paused.stderr
    request, pending = documents(paused.stdout)
    assert request["kind"] == "clarification" and pending["type"] == "pending"
    assert request["mapping"] is None and request["approvable"] is False
    proposed = request["proposed_mapping"]
    assert proposed["orders"]["columns"]["order_id"] == "Name"
    assert proposed["payments"]["columns"]["order_id"] == "order_id (metadata)"
    assert proposed["payments"]["asked"] == ["captured_amount"]
    assert request["questions"][0]["question"].startswith(QUESTION)

    decided = reconbot(
        "decide",
        request["pause_id"],
        "approve",
        "--json",
        "--authorization",
        request["authorization_identity"],
        cwd=folder,
    )
    assert decided.returncode == 2, decided.stderr
    [refusal] = documents(decided.stdout)
    assert refusal["type"] == "refusal" and refusal["reason"] == "NOT_APPROVABLE"

    status = reconbot("status", request["investigation_id"], "--json", cwd=folder)
    assert status.returncode == 0, status.stderr
    [report] = documents(status.stdout)
    [pause] = report["pauses"]
    assert pause["status"] == "pending"
    assert pause["request"]["proposed"]["payments"]["asked"] == ["captured_amount"]
    assert report["outcome"] is None
