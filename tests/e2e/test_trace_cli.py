"""The trace across processes: a pause in one, the approval in another, `status` in a third
shows inspect and validate once each, then one reconcile on resume; never a replayed tool
counted again. Storage is named explicitly, so the test does not depend on default locations.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.support.cli import documents, reconbot


def test_status_shows_the_trace_of_a_pause_and_an_approval_in_separate_processes(
    tmp_path: Path,
) -> None:
    var = tmp_path / "var"
    env = {
        "RECONBOT_DATABASE_URL": f"sqlite:///{var / 'reconbot.db'}",
        "RECONBOT_BLOB_URL": f"file://{var / 'blobs'}",
        "RECONBOT_WORK_DIR": str(var / "work"),
    }
    made = reconbot("demo-data", "--rows", "500", "--out", "demo", cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr

    paused = reconbot(
        "investigate", "demo/orders.csv", "demo/payments.csv", "--json", cwd=tmp_path, env=env
    )
    assert paused.returncode == 0, paused.stderr
    request, pending = documents(paused.stdout)
    assert pending["type"] == "pending"
    investigation = request["investigation_id"]

    decided = reconbot(
        "decide",
        request["pause_id"],
        "approve",
        "--authorization",
        request["authorization_identity"],
        "--json",
        cwd=tmp_path,
        env=env,
    )
    assert decided.returncode == 0, decided.stderr
    assert documents(decided.stdout)[-1]["type"] == "outcome"

    status = reconbot("status", investigation, "--json", cwd=tmp_path, env=env)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    trace = report["trace"]
    assert [(e["phase"], e["name"], e["status"]) for e in trace] == [
        ("investigate", "inspect_datasets", "success"),
        ("investigate", "validate_mapping", "success"),
        ("resume", "reconcile", "success"),
    ]
    assert all(e["investigation_id"] == investigation for e in trace)
    assert all(isinstance(e["duration_ms"], int) and e["duration_ms"] >= 0 for e in trace)
    first, resumed = report["trace_phases"]
    assert (first["phase"], first["tools"]) == (
        "investigate",
        [{"name": "inspect_datasets", "count": 1}, {"name": "validate_mapping", "count": 1}],
    )
    assert (resumed["phase"], resumed["tools"]) == ("resume", [{"name": "reconcile", "count": 1}])
    assert first["invocation_id"] != resumed["invocation_id"], "two processes, two invocations"
    uses = Counter(e["tool_use_id"] for e in trace)
    assert max(uses.values()) == 1, "no tool execution counted twice"
    bound = report["bound_approval"]
    assert bound["pause_id"] == request["pause_id"]
    assert bound["authorization_identity"] == request["authorization_identity"]
    assert bound["mapping_digest"] == report["outcome"]["mapping_digest"]
    assert bound["approved_by"] and bound["approved_by"].startswith("os:")

    text = reconbot("status", investigation, cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    assert "How this was computed" in text.stdout
    counted = "inspect_datasets 1, validate_mapping 1"
    assert f"investigate ({first['invocation_id'][:8]}): {counted}" in text.stdout
    assert f"resume ({resumed['invocation_id'][:8]}): reconcile 1" in text.stdout
    assert f"Reconciled under request {request['pause_id']}, approved by os:" in text.stdout
