"""The terminal as a newcomer meets it (issue 15): ordinary mistakes are one sentence and exit 2,
state is found from any folder, the exceptions CSV is named, questions follow the outcome, and
what is printed reads as money and as one JSON document per line.

Every command is a separate process with a clean environment whose HOME is the test's folder
(`tests.support.cli.reconbot`), so the embedded defaults keep state under that HOME.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import ROOT, demo_folder, documents, reconbot

STATE = Path(".local", "share", "reconbot")


def one_sentence(done: subprocess.CompletedProcess[str]) -> str:
    """The refusal of a command: exit 2, one line on stderr, no traceback."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_folder(tmp_path_factory.mktemp("newcomer"), 2000)


@pytest.fixture(scope="module")
def mapping(folder: Path) -> Path:
    saved = reconbot(
        "inspect", "demo/orders.csv", "demo/payments.csv", "--save-mapping", "m.json", cwd=folder
    )
    assert saved.returncode == 0, saved.stderr
    return folder / "m.json"


@pytest.mark.parametrize(
    "command",
    [
        ("investigate", "nope.csv", "demo/payments.csv"),
        ("investigate", "demo/orders.csv", "demo"),
        ("inspect", "demo/orders.csv", "missing/payments.csv"),
        ("reconcile", "nope.csv", "demo/payments.csv", "--mapping", "m.json"),
    ],
    ids=["investigate-missing", "investigate-folder", "inspect-missing", "reconcile-missing"],
)
def test_a_path_that_is_not_a_file_is_one_sentence(folder: Path, command: tuple[str, ...]) -> None:
    said = one_sentence(reconbot(*command, cwd=folder))
    assert said.startswith("reconbot: ")
    assert "nope.csv" in said or "missing/payments.csv" in said or "demo is a folder" in said
    assert not (folder / STATE / "reconbot.db").exists() or command[0] != "investigate"


def test_an_unreachable_database_in_migrate_is_one_sentence(folder: Path) -> None:
    url = "postgresql://postgres:secret-pw@127.0.0.1:9/test"  # port 9 (discard): refused
    said = one_sentence(reconbot("migrate", cwd=folder, env={"RECONBOT_DATABASE_URL": url}))
    assert "could not be reached" in said and "127.0.0.1:9" in said
    assert "secret-pw" not in said


def test_demo_data_out_naming_a_file_is_one_sentence(folder: Path) -> None:
    (folder / "taken").write_text("something\n")
    said = one_sentence(reconbot("demo-data", "--rows", "10", "--out", "taken", cwd=folder))
    assert "--out taken is a file" in said
    assert (folder / "taken").read_text() == "something\n"


def closed_stdout(folder: Path, *args: str, stdin: str = "") -> tuple[int, str]:
    """Run `reconbot ARGS` with its stdout a pipe that nobody reads any more (`| head` gone)."""
    read, write = os.pipe()
    os.close(read)  # closed before the process writes: every write meets a closed pipe
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(folder)}
    done = subprocess.run(
        [sys.executable, "-m", "bot.terminal.cli", *args],
        cwd=folder,
        input=stdin,
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    os.close(write)
    return done.returncode, done.stderr


def test_output_to_a_closed_pipe_ends_quietly_also_after_an_approval(folder: Path) -> None:
    code, stderr = closed_stdout(folder, "explain")
    assert (code, stderr) == (0, "")
    started = reconbot("investigate", "demo/orders.csv", "demo/payments.csv", "--json", cwd=folder)
    request = documents(started.stdout)[0]
    code, stderr = closed_stdout(
        folder,
        "decide",
        request["pause_id"],
        "approve",
        "--authorization",
        request["authorization_identity"],
    )
    assert code == 0 and "Traceback" not in stderr and "Error" not in stderr, stderr
    status = reconbot("status", request["investigation_id"], "--json", cwd=folder)
    assert json.loads(status.stdout)["outcome"] is not None, "the approval went through"


def test_state_is_found_from_any_folder_and_reading_commands_create_nothing(
    folder: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = {"HOME": str(folder)}
    fresh = {"HOME": str(tmp_path / "nobody")}
    empty = reconbot("status", "INV-NOPE", cwd=elsewhere, env=fresh)
    said = one_sentence(empty)
    assert "no reconbot database at" in said and str(tmp_path / "nobody") in said
    assert not (tmp_path / "nobody" / STATE / "reconbot.db").exists(), "status created nothing"
    started = reconbot("investigate", "demo/orders.csv", "demo/payments.csv", "--json", cwd=folder)
    request = documents(started.stdout)[0]
    where = reconbot("status", cwd=elsewhere, env=home)
    assert where.returncode == 0, where.stderr
    assert str(folder / STATE / "reconbot.db") in where.stdout
    assert request["investigation_id"] in where.stdout
    decided = reconbot(
        "decide",
        request["pause_id"],
        "approve",
        "--authorization",
        request["authorization_identity"],
        "--json",
        cwd=elsewhere,
        env=home,
    )
    assert decided.returncode == 0, decided.stderr
    assert documents(decided.stdout)[0]["type"] == "outcome"
    assert not (elsewhere / "var").exists(), "nothing is kept relative to the working folder"


def test_investigate_export_writes_the_file_and_says_where(folder: Path) -> None:
    done = reconbot(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--export",
        "out.csv",
        cwd=folder,
        stdin="approve\n",
    )
    assert done.returncode == 0, done.stderr
    written = folder / "out.csv"
    assert f"Exceptions CSV ({rows(written):,} rows): {written}" in done.stdout
    without = reconbot(
        "investigate", "demo/orders.csv", "demo/payments.csv", cwd=folder, stdin="approve\n"
    )
    shown = re.search(r"Exceptions CSV \(([\d,]+) rows\): (\S+)", without.stdout)
    assert shown is not None, without.stdout
    assert Path(shown.group(2)).read_bytes() == written.read_bytes()


def rows(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as handle:
        return sum(1 for _ in csv.reader(handle)) - 1


def test_reconcile_without_export_says_where_it_wrote(folder: Path, mapping: Path) -> None:
    done = reconbot(
        "reconcile", "demo/orders.csv", "demo/payments.csv", "--mapping", "m.json", cwd=folder
    )
    assert done.returncode == 0, done.stderr
    assert f"rows: findings, then ignored rows): {folder / 'exceptions.csv'}" in done.stdout


def test_questions_follow_the_outcome_until_the_end_of_input(folder: Path, mapping: Path) -> None:
    first = reconbot(
        "reconcile",
        "demo/orders.csv",
        "demo/payments.csv",
        "--mapping",
        "m.json",
        "--export",
        "flagged.csv",
        cwd=folder,
    )
    assert first.returncode == 0, first.stderr
    with (folder / "flagged.csv").open(newline="", encoding="utf-8") as handle:
        flagged = next(r for r in csv.DictReader(handle) if r["category"] == "amount_mismatch")
    order = flagged["order_ids"].split(";")[0].strip()
    done = reconbot(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--json",
        cwd=folder,
        stdin=f"approve\nask why is {order} flagged?\napprove\n",
    )
    assert done.returncode == 0, done.stderr
    kinds = [d["type"] for d in documents(done.stdout)]
    assert kinds == ["request", "outcome", "answer", "error"], kinds
    answer = documents(done.stdout)[2]["text"]
    assert f"{order} is flagged as amount_mismatch" in answer


def test_money_reads_as_money(folder: Path, mapping: Path) -> None:
    done = reconbot(
        "reconcile", "demo/orders.csv", "demo/payments.csv", "--mapping", "m.json", cwd=folder
    )
    assert done.returncode == 0, done.stderr
    assert "None" not in done.stdout
    assert "expected nothing" in done.stdout or "found nothing" in done.stdout
    assert re.search(r"\d,\d{3}\.\d{2} (USD|GBP|EUR)", done.stdout), done.stdout


def test_inspect_says_all_rows_were_read_when_they_were(folder: Path) -> None:
    done = reconbot("inspect", "demo/orders.csv", "demo/payments.csv", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "(all 2,612 rows read)" in done.stdout, done.stdout
    assert "rows sampled" not in done.stdout


def test_json_is_one_document_per_line_and_errors_are_documents(
    folder: Path, mapping: Path
) -> None:
    for command in (
        ("inspect", "demo/orders.csv", "demo/payments.csv", "--json"),
        ("reconcile", "demo/orders.csv", "demo/payments.csv", "--mapping", "m.json", "--json"),
    ):
        done = reconbot(*command, cwd=folder)
        assert done.returncode == 0, done.stderr
        assert len(done.stdout.splitlines()) == 1, done.stdout[:200]
        json.loads(done.stdout)
    failed = reconbot("inspect", "nope.csv", "demo/payments.csv", "--json", cwd=folder)
    assert failed.returncode == 2
    error = json.loads(failed.stdout)
    assert error["type"] == "error" and "nope.csv" in error["message"]


def test_the_test_run_names_skipped_postgresql_tests_and_how_to_run_them(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RECONBOT_TEST_POSTGRES_URL"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/integration/test_postgres_queue.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert re.search(
        r"\d+ PostgreSQL tests skipped: RECONBOT_TEST_POSTGRES_URL is not set\. Run them with "
        r"RECONBOT_TEST_POSTGRES_URL=postgresql://\S+ make test",
        done.stdout,
    ), done.stdout[-2000:]


def _ambiguous_files(folder: Path) -> None:
    """Payments with two plausible captured amounts: the agent must ask which one."""
    (folder / "q_orders.csv").write_text(
        "Name,Total,Currency\n" + "".join(f"#{1001 + i},{100 + i}.00,USD\n" for i in range(40))
    )
    (folder / "q_payments.csv").write_text(
        "id,Amount,Amount Refunded,Amount Captured,Currency,order_id\n"
        + "".join(
            f"py_{i:06d},{100 + i}.00,0.00,{100 + i - (i % 3)}.00,USD,#{1001 + i}\n"
            for i in range(40)
        )
    )


def test_a_question_left_pending_is_answered_from_another_shell_as_printed(
    folder: Path, tmp_path: Path
) -> None:
    _ambiguous_files(folder)
    paused = reconbot("investigate", "q_orders.csv", "q_payments.csv", cwd=folder)
    assert paused.returncode == 0, paused.stderr
    assert "A question before approval" in paused.stdout
    printed = re.search(r"from any shell, with `(reconbot decide [^`]+)`", paused.stdout)
    assert printed is not None, paused.stdout
    command = printed.group(1)
    assert " edit 'payments.captured_amount=" in command, command
    elsewhere = tmp_path / "other-shell"
    elsewhere.mkdir()
    words = shlex.split(command)[1:]
    answered = reconbot(*words, "--json", cwd=elsewhere, env={"HOME": str(folder)})
    assert answered.returncode == 0, answered.stderr
    [request] = documents(answered.stdout)
    assert request["kind"] == "confirmation"
    chosen = words[3].partition("=")[2]
    assert request["mapping"]["payments"]["columns"]["captured_amount"] == chosen


def test_an_export_never_overwrites_an_input_or_the_state(folder: Path, mapping: Path) -> None:
    before = (folder / "demo" / "payments.csv").read_bytes()
    for command in (
        ("investigate", "demo/orders.csv", "demo/payments.csv", "--export", "demo/payments.csv"),
        (
            "reconcile",
            "demo/orders.csv",
            "demo/payments.csv",
            "--mapping",
            "m.json",
            "--export",
            "./demo/../demo/payments.csv",
        ),
        ("inspect", "demo/orders.csv", "demo/payments.csv", "--save-mapping", "demo/orders.csv"),
        (
            "investigate",
            "demo/orders.csv",
            "demo/payments.csv",
            "--export",
            str(STATE / "reconbot.db"),
        ),
    ):
        said = one_sentence(reconbot(*command, cwd=folder, stdin="approve\n"))
        assert "would overwrite" in said, said
    assert (folder / "demo" / "payments.csv").read_bytes() == before


def test_secrets_in_a_database_url_are_never_shown(folder: Path) -> None:
    url = "postgresql://alice:userinfo-pw@127.0.0.1:9/db?password=query-pw&sslmode=disable"
    for command in (("migrate",), ("status",), ("status", "INV-X", "--json")):
        done = reconbot(*command, cwd=folder, env={"RECONBOT_DATABASE_URL": url})
        shown = done.stdout + done.stderr
        assert "userinfo-pw" not in shown and "query-pw" not in shown, shown


@pytest.mark.parametrize(
    "setting",
    [
        {"RECONBOT_APPROVAL_TTL": "abc"},
        {"RECONBOT_MODEL": "gpt"},
        {"RECONBOT_DATABASE_URL": "not a url"},
        {"RECONBOT_HOME": "demo/orders.csv"},
    ],
    ids=["duration", "model", "database-url", "home-is-a-file"],
)
def test_a_setting_that_cannot_work_is_one_sentence(folder: Path, setting: dict[str, str]) -> None:
    said = one_sentence(reconbot("status", cwd=folder, env=setting))
    assert next(iter(setting)) in said or "database URL" in said, said


def test_cells_cannot_drive_the_terminal_or_forge_lines(folder: Path) -> None:
    forged = "#1001\x1b[2K\x1b[1A\x1b]52;c;ZWNobyBwd25lZA==\x07"
    (folder / "x_orders.csv").write_text(
        "Name,Total,Currency\n"
        + f'"{forged}",10.00,EUR\n'
        + '"#1002\n  authorization sha256:0000",11.00,EUR\n'
        + "".join(f"#{1003 + i},{12 + i}.00,EUR\n" for i in range(30))
    )
    (folder / "x_payments.csv").write_text(
        "id,order_id,Amount,Currency\n"
        + "".join(f"ch_{i},#{1001 + i},{10 + i}.00,EUR\n" for i in range(32))
    )
    done = reconbot("investigate", "x_orders.csv", "x_payments.csv", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\e[2K" in done.stdout
    assert not [
        line
        for line in done.stdout.splitlines()
        if "authorization sha256:0000" in line and line.lstrip().startswith("authorization")
    ]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_an_export_that_fails_to_write_keeps_the_outcome_and_says_where_it_is(
    folder: Path,
) -> None:
    done = reconbot(
        "investigate",
        "demo/orders.csv",
        "demo/payments.csv",
        "--export",
        "/dev/full",
        "--json",
        cwd=folder,
        stdin="approve\n",
    )
    assert done.returncode == 0, done.stderr
    outcome = documents(done.stdout)[1]
    assert outcome["type"] == "outcome"
    assert "not written to /dev/full" in outcome["exceptions_csv"]
    stored = Path(outcome["exceptions_csv"].split(" (")[0])
    assert stored.is_file(), "the stored exceptions CSV is named"
