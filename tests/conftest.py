"""What every test shares: a state home of its own, and a word on skipped PostgreSQL tests."""

from __future__ import annotations

from pathlib import Path

import pytest

POSTGRES_VARIABLE = "RECONBOT_TEST_POSTGRES_URL"


@pytest.fixture(autouse=True)
def own_state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test keeps cases in a home of its own (`RECONBOT_HOME`), never in the user's data
    folder, also for the processes it starts with this environment."""
    home = tmp_path / "reconbot-home"
    monkeypatch.setenv("RECONBOT_HOME", str(home))
    return home


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how many tests were skipped for want of PostgreSQL, and how to run them."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if POSTGRES_VARIABLE in str(getattr(report, "longrepr", ""))
    ]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} PostgreSQL tests skipped: {POSTGRES_VARIABLE} is not set. Run them "
            f"with {POSTGRES_VARIABLE}=postgresql://postgres@127.0.0.1:5432/test make test "
            "(any server you may create schemas in; .ci/run sets it)."
        )
