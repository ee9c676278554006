"""The workflow commands as separate processes: pause in one, decide in another, read in a third.

Every process uses the embedded defaults (SQLite and local blobs in the user's data folder), as
`make run` does; each test's HOME is its own folder.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bot.terminal import console as terminal
from storage.database import head_revision
from tests.support.cli import demo_folder, documents, os_identity, reconbot

STATE = Path(".local", "share", "reconbot")
"""Where the embedded defaults keep cases for a user whose HOME is the test's folder."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_folder(tmp_path_factory.mktemp("cli"), 3000)


def test_investigate_approve_on_stdin_prints_request_then_outcome(folder: Path) -> None:
    truth = json.loads((folder / "demo" / "truth.json").read_text())["findings"]
    run = reconbot(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--json",
        cwd=folder,
        stdin="approve\n",
    )
    assert run.returncode == 0, run.stderr
    request, outcome = documents(run.stdout)
    assert request["type"] == "request"
    assert request["kind"] == "confirmation"
    assert request["investigation_id"].startswith("INV-")
    assert request["authorization_identity"].startswith("sha256:")
    assert all(f["digest"].startswith("sha256:") for f in request["files"])
    assert request["mapping"]["orders"]["columns"]["order_id"] == "Name"
    assert outcome["type"] == "outcome"
    assert outcome["investigation_id"] == request["investigation_id"]
    assert outcome["counts"] == truth

    text = reconbot(
        "investigate", "demo/orders.csv", "demo/payments.csv", cwd=folder, stdin="approve\n"
    )
    assert text.returncode == 0, text.stderr
    assert "Approval needed" in text.stdout
    assert f"{sum(truth.values()):,} findings" in text.stdout


def test_pause_decide_and_status_in_three_processes(folder: Path) -> None:
    truth = json.loads((folder / "demo" / "truth.json").read_text())["findings"]
    paused = reconbot("investigate", "demo/orders.csv", "demo/payments.csv", "--json", cwd=folder)
    assert paused.returncode == 0, paused.stderr
    request, pending = documents(paused.stdout)
    assert pending == {
        "type": "pending",
        "pause_id": request["pause_id"],
        "investigation_id": request["investigation_id"],
        "decide": f"reconbot decide {request['pause_id']} approve --authorization "
        f"{request['authorization_identity']}",
    }

    approve = ("decide", request["pause_id"], "approve", "--json")
    authorization = ("--authorization", request["authorization_identity"])
    decided = reconbot(*approve, *authorization, cwd=folder)
    assert decided.returncode == 0, decided.stderr
    [outcome] = documents(decided.stdout)
    assert outcome["counts"] == truth

    again = reconbot(*approve, *authorization, cwd=folder)
    assert again.returncode == 2
    assert documents(again.stdout)[0]["reason"] == "ALREADY_CONSUMED"

    status = reconbot("status", request["investigation_id"], "--json", cwd=folder)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    [pause] = report["pauses"]
    assert pause["status"] == "consumed"
    assert pause["request"]["authorization_identity"] == request["authorization_identity"]
    assert pause["request"]["mapping"] == request["mapping"]
    assert [d["accepted"] for d in report["decisions"]] == [True, False]
    assert report["outcome"]["counts"] == truth


def test_reject_exits_3_and_edit_makes_a_new_request(folder: Path) -> None:
    run = reconbot(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--json",
        cwd=folder,
        stdin='edit orders.customer="Lineitem name"\nreject not this month\n',
    )
    assert run.returncode == 3, run.stderr
    first, edited, rejected = documents(run.stdout)
    assert edited["kind"] == "confirmation"
    assert edited["pause_id"] != first["pause_id"]
    assert edited["mapping"]["orders"]["columns"]["customer"] == "Lineitem name"
    assert rejected == {
        "type": "rejected",
        "pause_id": edited["pause_id"],
        "reason": "not this month",
    }


def test_the_terminal_reads_files_over_the_upload_limit_and_shows_rows_read(
    tmp_path: Path,
) -> None:
    made = reconbot("demo-data", "--rows", "10000", "--out", "big", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "big" / "orders.csv").stat().st_size > 1 << 20
    limit = {"RECONBOT_MAX_UPLOAD_MB": "1"}  # Slack's upload limit: not for a local file
    run = reconbot(
        "investigate",
        "big/orders.csv",
        "big/payments.csv",
        "--json",
        cwd=tmp_path,
        stdin="approve\n",
        env=limit,
    )
    assert run.returncode == 0, run.stderr
    _, outcome = documents(run.stdout)
    assert (
        outcome["counts"] == json.loads((tmp_path / "big" / "truth.json").read_text())["findings"]
    )
    read = re.findall(r"^(orders|payments)\.csv: ([\d,]+) rows read \(100%\)$", run.stderr, re.M)
    rows = {name: int(count.replace(",", "")) for name, count in read}
    lines = {
        name: sum(1 for _ in (tmp_path / "big" / f"{name}.csv").open("rb")) - 1
        for name in ("orders", "payments")
    }
    assert rows == lines
    inspected = reconbot("inspect", "big/orders.csv", "big/payments.csv", cwd=tmp_path, env=limit)
    assert inspected.returncode == 0, inspected.stderr


def test_audit_verify_detects_a_row_changed_behind_its_back(folder: Path) -> None:
    ok = reconbot("audit", "verify", cwd=folder)
    assert ok.returncode == 0, ok.stderr
    assert "chain intact" in ok.stdout
    with sqlite3.connect(folder / STATE / "reconbot.db") as db:
        db.execute("UPDATE audit_log SET actor = 'mallory' WHERE seq = 2")
    broken = reconbot("audit", "verify", cwd=folder)
    assert broken.returncode == 2
    assert "BROKEN at entry 2" in broken.stdout


def test_migrate_and_bad_input_messages(folder: Path) -> None:
    migrated = reconbot("migrate", cwd=folder)
    assert migrated.returncode == 0, migrated.stderr
    assert f"revision {head_revision()}" in migrated.stdout
    (folder / "empty.csv").write_bytes(b"")
    bad = reconbot("investigate", "empty.csv", "demo/payments.csv", cwd=folder)
    assert bad.returncode == 2
    assert "empty.csv: the file is empty" in bad.stderr
    missing = reconbot("status", "INV-NOPE", cwd=folder)
    assert missing.returncode == 2
    assert "There is no investigation INV-NOPE" in missing.stderr


def _prefixed_files(folder: Path) -> None:
    (folder / "wc_orders.csv").write_text(
        "order_id,total,currency\n" + "".join(f"WC-{5100 + i},{10 + i}.00,EUR\n" for i in range(30))
    )
    (folder / "wc_payments.csv").write_text(
        "payment_id,reference,amount,currency\n"
        + "".join(f"ch_{i},{5100 + i},{10 + i}.00,EUR\n" for i in range(30))
    )


def test_a_reading_the_files_show_is_proposed_not_asked_in_the_terminal(folder: Path) -> None:
    # Every reference names an order once the orders' `WC-` is stripped: the files say so,
    # so the request is a confirmation with that reading and the figure, not a question.
    _prefixed_files(folder)
    run = reconbot("investigate", "wc_orders.csv", "wc_payments.csv", cwd=folder, stdin="approve\n")
    assert run.returncode == 0, run.stderr
    asked, _, after = run.stdout.partition("Approval needed")
    assert "A question before approval" not in asked
    assert "Proposed from the files, not asked: 30 of 30 payment references name an order" in after
    assert "(edit orders.id_prefix=WC-)" in after
    assert "Without it, 0 of 30 payment references in wc_payments.csv name an order" in after
    assert "prefix 'WC-' removed" in after
    assert "30 of 30 payment references in wc_payments.csv name an order" in after
    assert "wc_orders.csv: 30 rows = 30 matched" in after


def _unclear_files(folder: Path) -> None:
    """`WC-` on the orders, and 9 of 30 references that name no order whatever is stripped:
    the fix is likely, not clear, so it is asked."""
    (folder / "wc_orders.csv").write_text(
        "order_id,total,currency\n" + "".join(f"WC-{5100 + i},{10 + i}.00,EUR\n" for i in range(30))
    )
    (folder / "wc_payments.csv").write_text(
        "payment_id,reference,amount,currency\n"
        + "".join(f"ch_{i},{5100 + i if i < 21 else 9900 + i},{10 + i}.00,EUR\n" for i in range(30))
    )


def test_decide_edit_from_another_process_answers_the_question(folder: Path) -> None:
    _unclear_files(folder)
    paused = reconbot("investigate", "wc_orders.csv", "wc_payments.csv", "--json", cwd=folder)
    request = documents(paused.stdout)[0]
    assert request["kind"] == "clarification"
    # Every note the terminal shows is in the document too (issue 38), in full.
    assert any("payment references in wc_payments.csv" in note for note in request["routine"])
    assert request["rows"] == {"orders": 30, "payments": 30}
    edited = reconbot(
        "decide",
        request["pause_id"],
        "edit",
        "orders.id_prefix=WC-",
        "--json",
        "--authorization",
        request["authorization_identity"],
        cwd=folder,
    )
    assert edited.returncode == 0, edited.stderr
    [new] = documents(edited.stdout)
    assert new["kind"] == "confirmation"
    assert new["mapping"]["orders"]["options"]["ids"]["prefix"] == "WC-"
    decided = reconbot(
        "decide",
        new["pause_id"],
        "approve",
        "--json",
        "--authorization",
        new["authorization_identity"],
        cwd=folder,
    )
    assert decided.returncode == 0, decided.stderr
    [outcome] = documents(decided.stdout)
    # The 9 references that name no order, and the 9 orders nobody paid.
    assert outcome["total_findings"] == 18
    assert [ledger["matched"] for ledger in outcome["ledger"]] == [21, 21]


# Terminal identities: the operating-system account, never USER or LOGNAME.

IMPERSONATE = {"LOGNAME": "boss", "USER": "boss"}


def _paused(folder: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """A fresh investigation left pending (no decision on stdin): its request document."""
    run = reconbot(
        "investigate", "demo/orders.csv", "demo/payments.csv", "--json", cwd=folder, env=env
    )
    assert run.returncode == 0, run.stderr
    request, pending = documents(run.stdout)
    assert pending["type"] == "pending"
    return request


def _status(folder: Path, investigation_id: str) -> dict[str, Any]:
    shown = reconbot("status", investigation_id, "--json", cwd=folder)
    assert shown.returncode == 0, shown.stderr
    report: dict[str, Any] = json.loads(shown.stdout)
    return report


def _decide(
    folder: Path, request: dict[str, Any], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return reconbot(
        "decide",
        request["pause_id"],
        "approve",
        "--json",
        "--authorization",
        request["authorization_identity"],
        cwd=folder,
        env=env,
    )


def test_decide_acts_as_the_os_account_whatever_logname_and_user_say(folder: Path) -> None:
    approvers = {"RECONBOT_APPROVERS": "boss"}
    request = _paused(folder, approvers)
    decided = _decide(folder, request, {**approvers, **IMPERSONATE})
    assert decided.returncode == 2, decided.stderr
    [refusal] = documents(decided.stdout)
    assert refusal["reason"] == "NOT_AUTHORIZED"
    assert refusal["message"].startswith(f"{os_identity()} may not approve")

    report = _status(folder, request["investigation_id"])
    assert [(d["actor"], d["accepted"], d["refusal"]) for d in report["decisions"]] == [
        (os_identity(), False, "NOT_AUTHORIZED")
    ]
    assert [p["status"] for p in report["pauses"]] == ["pending"]
    assert report["outcome"] is None


def test_an_approver_list_naming_the_os_account_lets_it_approve(folder: Path) -> None:
    approvers = {"RECONBOT_APPROVERS": f"U0SLACK,{os_identity()}"}
    request = _paused(folder, approvers)
    decided = _decide(folder, request, approvers)
    assert decided.returncode == 0, decided.stderr
    assert documents(decided.stdout)[0]["type"] == "outcome"
    report = _status(folder, request["investigation_id"])
    assert [(d["actor"], d["accepted"]) for d in report["decisions"]] == [(os_identity(), True)]


def test_decide_without_the_authorization_identity_exits_2_and_records_nothing(
    folder: Path,
) -> None:
    request = _paused(folder)
    for action in (("approve",), ("reject", "not", "this", "month")):
        refused = reconbot("decide", request["pause_id"], *action, "--json", cwd=folder)
        assert refused.returncode == 2, refused.stdout
        error = json.loads(refused.stdout)  # one document: the error, for a reading program
        assert error["type"] == "error" and "--authorization" in error["message"]
        assert refused.stderr.count("\n") == 1, refused.stderr
        assert "--authorization" in refused.stderr
        assert "reconbot status INV-" in refused.stderr
    report = _status(folder, request["investigation_id"])
    assert report["decisions"] == []
    assert [p["status"] for p in report["pauses"]] == ["pending"]


def test_investigate_records_the_os_account_as_requester_and_approver(folder: Path) -> None:
    run = reconbot(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--json",
        cwd=folder,
        stdin="approve\n",
        env=IMPERSONATE,
    )
    assert run.returncode == 0, run.stderr
    request, outcome = documents(run.stdout)
    assert outcome["type"] == "outcome"
    report = _status(folder, request["investigation_id"])
    assert report["investigation"]["requested_by"] == os_identity()
    assert report["pauses"][0]["request"]["requested_by"] == os_identity()
    assert report["pauses"][0]["decided_by"] == os_identity()
    assert [(d["actor"], d["accepted"]) for d in report["decisions"]] == [(os_identity(), True)]


def test_without_self_approval_the_requesting_os_account_cannot_approve(folder: Path) -> None:
    no_self = {"RECONBOT_SELF_APPROVAL": "false"}
    request = _paused(folder, {**no_self, "LOGNAME": "alice", "USER": "alice"})
    decided = _decide(folder, request, {**no_self, "LOGNAME": "bob", "USER": "bob"})
    assert decided.returncode == 2, decided.stderr
    [refusal] = documents(decided.stdout)
    assert refusal["reason"] == "NOT_AUTHORIZED"
    assert f"except the requester ({os_identity()})" in refusal["message"]
    report = _status(folder, request["investigation_id"])
    assert [(d["actor"], d["refusal"]) for d in report["decisions"]] == [
        (os_identity(), "NOT_AUTHORIZED")
    ]
    assert [p["status"] for p in report["pauses"]] == ["pending"]


def test_the_authorization_identity_is_printed_for_a_person_to_copy(folder: Path) -> None:
    paused = reconbot("investigate", "demo/orders.csv", "demo/payments.csv", cwd=folder)
    assert paused.returncode == 0, paused.stderr
    shown = re.search(r"^  authorization (sha256:[0-9a-f]{64})$", paused.stdout, re.MULTILINE)
    assert shown is not None, paused.stdout
    identity = shown.group(1)
    found = re.search(r"(INV-\w+), revision 1\n  request (PAUSE-\w+)", paused.stdout)
    assert found is not None, paused.stdout
    investigation_id, pause_id = found.groups()
    assert f"reconbot decide {pause_id} approve --authorization {identity}" in paused.stdout

    status = reconbot("status", investigation_id, cwd=folder)
    assert status.returncode == 0, status.stderr
    assert f"requested by {os_identity()}" in status.stdout
    assert f"    authorization {identity}\n" in status.stdout

    decided = reconbot("decide", pause_id, "approve", "--authorization", identity, cwd=folder)
    assert decided.returncode == 0, decided.stderr
    assert "Every row accounted for" in decided.stdout
    after = reconbot("status", investigation_id, cwd=folder)
    assert "authorization" not in after.stdout


def test_a_uid_without_a_passwd_entry_is_named_by_its_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_entry(uid: int) -> Any:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setenv("LOGNAME", "boss")
    monkeypatch.setattr("os.getuid", lambda: 54321)
    monkeypatch.setattr("pwd.getpwuid", no_entry)
    assert terminal.terminal_identity() == "os:uid-54321"
