"""The job proposing a policy change never ends in silence: a change that cannot be made, and
a failure on reconbot's side (with the log's reference), are told to the proposer alone."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from agent.errors import PolicyProposalError
from bot.slack.handlers.policy_changes import propose_policy_change


class _Poster:
    def __init__(self) -> None:
        self.told: list[tuple[str, str, str]] = []

    def ephemeral(self, channel: str, user: str, thread_ts: str | None, rendered: Any) -> None:
        self.told.append((channel, user, rendered.text))


class _Messages:
    def __init__(self) -> None:
        self.posted: list[Any] = []

    def post(self, request: Any) -> None:
        self.posted.append(request)

    def log_internal_error(self, what: str) -> str:
        return "ref12345"


def _service(raises: Exception) -> Any:
    def propose(*_args: Any, **_kwargs: Any) -> Any:
        raise raises

    return SimpleNamespace(policy_changes=SimpleNamespace(propose=propose))


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (PolicyProposalError("no such rule", key="window_days"), "window_days: no such rule"),
        (RuntimeError("the database went away"), "ref12345"),
    ],
)
def test_a_proposal_that_fails_is_told_to_its_proposer_alone(raised: Exception, said: str) -> None:
    poster, messages = _Poster(), _Messages()

    propose_policy_change(
        _service(raised),
        messages,
        poster,
        "C1",
        "U1",
        {"window_days": "7"},  # type: ignore[arg-type]
    )

    assert messages.posted == []
    [(channel, user, text)] = poster.told
    assert (channel, user) == ("C1", "U1") and said in text
    assert "the database went away" not in text, "nothing of the failure's text is shown"
