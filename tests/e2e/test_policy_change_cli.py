"""A change to a channel's policy from the terminal (issue 41): `reconbot policy propose` makes
a request with each change in words and how to decide it; its proposer may not approve it
(four-eyes, whatever the bot's self-approval setting); an edit is a new proposal; a rejection
keeps the policy in force; `reconbot explain --channel` shows what is in force there."""

from __future__ import annotations

from pathlib import Path

from agent.data.policy import Policy
from tests.support.cli import documents, reconbot


def _proposed(cwd: Path, *changes: str) -> dict[str, object]:
    made = reconbot("policy", "propose", *changes, "--channel", "C-TEAM", "--json", cwd=cwd)
    assert made.returncode == 0, made.stderr
    [request] = [d for d in documents(made.stdout) if d["type"] == "request"]
    return request


def test_a_proposal_prints_its_changes_in_words_and_how_someone_else_decides_it(
    tmp_path: Path,
) -> None:
    made = reconbot("policy", "propose", "window_days_after=7", "--channel", "C-TEAM", cwd=tmp_path)

    assert made.returncode == 0, made.stderr
    out = made.stdout
    assert "A change to the channel's policy" in out
    assert "a capture may be up to 7 days after its order (was 30)" in out
    assert f"version in force {Policy().version}" in out
    assert f"version proposed {Policy(window_days_after=7).version}" in out
    assert "no reconciliation approved in this channel yet" in out
    assert "Someone else decides it, from any shell, with `reconbot decide PAUSE-" in out


def test_the_proposer_may_not_approve_and_an_edit_is_a_new_proposal_that_can_be_rejected(
    tmp_path: Path,
) -> None:
    request = _proposed(tmp_path, "window_days_after=7")
    pause, authorization = str(request["pause_id"]), str(request["authorization_identity"])

    own = reconbot("decide", pause, "approve", "--authorization", authorization, cwd=tmp_path)
    assert own.returncode == 2, own.stdout + own.stderr
    assert "NOT_AUTHORIZED" in own.stdout and "may not approve" in own.stdout

    edited = reconbot(
        "decide",
        pause,
        "edit",
        "amount_tolerance_minor=0",
        "--authorization",
        authorization,
        "--json",
        cwd=tmp_path,
    )
    assert edited.returncode == 0, edited.stdout + edited.stderr
    [again] = [d for d in documents(edited.stdout) if d["type"] == "request"]
    keys = {c["key"] for c in again["policy_change"]["changes"]}  # type: ignore[index]
    assert keys == {"window_days_after", "amount_tolerance_minor"}
    stale = reconbot("decide", pause, "approve", "--authorization", authorization, cwd=tmp_path)
    assert "SUPERSEDED" in stale.stdout

    rejected = reconbot(
        "decide",
        str(again["pause_id"]),
        "reject",
        "a week is too short",
        "--authorization",
        str(again["authorization_identity"]),
        cwd=tmp_path,
    )
    assert rejected.returncode == 3, rejected.stdout + rejected.stderr
    shown = reconbot("explain", "--channel", "C-TEAM", cwd=tmp_path)
    assert shown.stdout.startswith(f"policy {Policy().version}")
    assert "in force in C-TEAM: the configured policy (no change approved there)" in shown.stdout


def test_a_change_that_cannot_be_made_names_the_rule_and_makes_nothing(tmp_path: Path) -> None:
    typo = reconbot("policy", "propose", "window_days=7", cwd=tmp_path)
    assert typo.returncode == 2
    assert "window_days: no such rule; did you mean window_days_after?" in typo.stderr
    words = reconbot("policy", "propose", "window_days_after", cwd=tmp_path)
    assert words.returncode == 2
    assert "is not KEY=VALUE" in words.stderr
