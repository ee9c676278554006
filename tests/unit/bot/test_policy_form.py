"""The policy forms read back what the person changed, and say a value that does not read
beside its rule before the form closes (`bot.slack.policy_form`)."""

from __future__ import annotations

from typing import Any

from agent.data.policy import Policy
from agent.usecases.policies import ChannelPolicy
from bot.slack.blocks.policy import policy_modal
from bot.slack.policy_form import form_problems, submitted_rules


def _form() -> dict[str, Any]:
    shown = ChannelPolicy(channel="C1", policy=Policy(), history=[])
    return policy_modal(shown, "C1")


def _submitted(view: dict[str, Any], typed: dict[str, str]) -> dict[str, Any]:
    values = {f"rule:{key}": {"value": {"value": text}} for key, text in typed.items()}
    return {**view, "state": {"values": values}}


def test_only_the_rules_whose_text_changed_are_proposed() -> None:
    view = _submitted(_form(), {"window_days_after": "7", "amount_tolerance_minor": " 1 "})
    every, changed = submitted_rules(view)
    assert changed == {"window_days_after": "7"}, "the same value with spaces is no change"
    assert every["window_days_after"] == "7"
    assert every["window_hours_before"] == str(Policy().window_hours_before), "as shown"


def test_a_value_that_does_not_read_is_said_beside_its_rule() -> None:
    view = _submitted(_form(), {"window_days_after": "a week"})
    problems = form_problems(view)
    assert list(problems) == ["rule:window_days_after"]
    assert "must be a whole number" in problems["rule:window_days_after"]


def test_word_meanings_written_without_a_meaning_are_said_beside_their_rule() -> None:
    view = _submitted(_form(), {"order_status_words": "Erledigt"})
    assert "word:meaning" in form_problems(view)["rule:order_status_words"]


def test_readable_values_have_no_problem() -> None:
    view = _submitted(_form(), {"window_days_after": "7", "order_status_words": "Erledigt:paid"})
    assert form_problems(view) == {}
