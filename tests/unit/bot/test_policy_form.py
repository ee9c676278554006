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


def test_a_value_the_person_did_not_change_never_holds_the_form() -> None:
    """A policy file's word list may be longer than a form's value: left as shown, it is not
    the person's to mend; the proposal decides on the policy in force."""
    long_words = {f"Zustand-{n:04d}": "paid" for n in range(100)}
    shown = ChannelPolicy(channel="C1", policy=Policy(order_status_words=long_words), history=[])
    view = policy_modal(shown, "C1")
    typed = {"window_days_after": "7"}
    assert form_problems(_submitted(view, typed)) == {}


def test_a_value_longer_than_an_input_holds_is_said_not_cut() -> None:
    long_words = {f"Zustand-{n:04d}": "paid" for n in range(400)}  # about 8,000 characters
    shown = ChannelPolicy(channel="C1", policy=Policy(order_status_words=long_words), history=[])
    view = policy_modal(shown, "C1")
    inputs = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    assert "rule:order_status_words" not in inputs, "never an input holding a cut value"
    said = " ".join(b["text"]["text"] for b in view["blocks"] if b["type"] == "section")
    assert "order_status_words" in said and "/recon policy show" in said
    assert all(
        len(b["element"].get("initial_value") or "") <= b["element"]["max_length"] <= 3000
        for b in inputs.values()
    )
    assert form_problems(_submitted(view, {"window_days_after": "7"})) == {}
