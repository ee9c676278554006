"""A change to a channel's policy in Slack (issue 41): `/recon policy propose` posts a request
in the channel with each change in words; its proposer's Approve is refused (four-eyes); another
member's puts the rules in force in that channel, and `/recon policy` shows the new version."""

from __future__ import annotations

from typing import Any

import pytest

from agent.data.policy import Policy
from tests.standins.slack import Message, SlackStandIn

from .conftest import ALICE, BOB, CAROL, CHANNEL, RunningBot


def _policy_request(standin: SlackStandIn, saying: str = "") -> Message:
    def probe() -> Message | None:
        for message in standin.workspace.messages:
            shown = str(message.blocks)
            if (
                message.channel == CHANNEL
                and "A change to the channel's policy" in shown
                and saying in shown
                and message.action_ids()
            ):
                return message
        return None

    return standin.workspace.wait_for(probe, what="the policy change request")


def _view(standin: SlackStandIn, callback_id: str) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        for view in standin.workspace.views.values():
            if view.get("callback_id") == callback_id:
                return view
        return None

    return standin.workspace.wait_for(probe, what=f"the {callback_id} form")


def test_a_policy_change_is_proposed_approved_by_another_member_and_put_in_force(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    made = standin.command(ALICE, CHANNEL, "/recon", "policy propose window_days_after=7")
    assert made.status == 200

    request = _policy_request(standin)
    shown = str(request.blocks)
    assert "a capture may be up to 7 days after its order (was 30)" in shown
    assert "No reconciliation was approved in this channel yet" in shown
    assert request.action_ids() == ["approve", "edit_mapping", "reject"]

    standin.click(ALICE, request.snapshot(), "approve")
    refusal = standin.workspace.wait_for(
        lambda: [e for e in standin.workspace.ephemerals if "NOT_AUTHORIZED" in str(e)]
    )[0]
    assert "except the requester (<@U0ALICE>)" in str(refusal)

    standin.click(BOB, request.snapshot(), "approve")
    done = standin.workspace.wait_for(
        lambda: (
            "is in force in this channel"
            in str(standin.workspace.message(CHANNEL, request.ts).blocks)
            and standin.workspace.message(CHANNEL, request.ts)
        ),
        what="the request shown approved",
    )
    assert "Approved by <@U0BOB>" in str(done.blocks)
    assert done.action_ids() == []

    before = len(standin.workspace.responses)
    assert standin.command(BOB, CHANNEL, "/recon", "policy show").status == 200
    response = standin.workspace.wait_for(
        lambda: len(standin.workspace.responses) > before and standin.workspace.responses[-1]
    )
    text = str(response)
    assert Policy(window_days_after=7).version.removeprefix("sha256:")[:12] in text
    assert "window_days_after: `7`" in text
    assert "Versions put in force here" in text


def test_recon_policy_opens_a_form_with_today_s_values_and_proposes_what_changed(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    assert standin.command(ALICE, CHANNEL, "/recon", "policy").status == 200

    def form() -> dict[str, Any] | None:
        for view in standin.workspace.views.values():
            if view.get("callback_id") == "policy_view":
                return view
        return None

    view = standin.workspace.wait_for(form, what="the policy form")
    rules = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    assert rules["rule:window_days_after"]["element"]["initial_value"] == "30"
    assert "days after its order" in rules["rule:window_days_after"]["hint"]["text"]

    unchanged = standin.submit_view(ALICE, view["id"], {})
    assert unchanged.json()["response_action"] == "errors"
    done = standin.submit_view(
        ALICE, view["id"], {"rule:window_days_after": {"value": {"value": "7"}}}
    )
    assert done.status == 200

    request = _policy_request(standin)
    assert "a capture may be up to 7 days after its order (was 30)" in str(request.blocks)
    assert "amounts agree" not in str(request.blocks), "only what was changed is proposed"


def test_a_proposal_that_cannot_be_made_is_told_to_its_proposer_alone(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    assert standin.command(ALICE, CHANNEL, "/recon", "policy propose window_days=7").status == 200

    told = standin.workspace.wait_for(
        lambda: [e for e in standin.workspace.ephemerals if "no such rule" in str(e)]
    )[0]
    assert "did you mean window_days_after" in str(told)


def test_edit_on_a_policy_request_opens_its_proposal_and_posts_a_new_one_for_a_third_person(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    """Edit is a new proposal on top of the request's rules: the form holds what it proposes,
    a value that does not read is said beside its rule before the form closes, the edited
    request shows it was edited, and neither the proposer nor the editor may approve."""
    assert standin.command(ALICE, CHANNEL, "/recon", "policy propose window_days_after=7").status
    first = _policy_request(standin, "7 days after")
    seen = first.snapshot()

    standin.click(BOB, seen, "edit_mapping")
    view = _view(standin, "policy_edit_view")
    rules = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    assert rules["rule:window_days_after"]["element"]["initial_value"] == "7", "as proposed"

    unchanged = standin.submit_view(BOB, view["id"], {})
    assert unchanged.json()["response_action"] == "errors"
    wrong = standin.submit_view(
        BOB, view["id"], {"rule:amount_tolerance_minor": {"value": {"value": "two"}}}
    )
    assert wrong.json()["response_action"] == "errors", "said while the form is open"
    said = wrong.json()["errors"]["rule:amount_tolerance_minor"]
    assert "must be a whole number" in said

    done = standin.submit_view(
        BOB, view["id"], {"rule:amount_tolerance_minor": {"value": {"value": "0"}}}
    )
    assert done.status == 200 and not done.body

    second = _policy_request(standin, "amounts")
    shown = str(second.blocks)
    assert "7 days after its order (was 30)" in shown, "the edit is on top of the proposal"
    edited = standin.workspace.wait_for(
        lambda: (
            "Edited by <@U0BOB>" in str(standin.workspace.message(CHANNEL, first.ts).blocks)
            and standin.workspace.message(CHANNEL, first.ts)
        ),
        what="the first request shown edited",
    )
    assert edited.action_ids() == []

    for maker in (ALICE, BOB):
        standin.click(maker, second.snapshot(), "approve")
    standin.workspace.wait_for(
        lambda: len([e for e in standin.workspace.ephemerals if "NOT_AUTHORIZED" in str(e)]) == 2,
        what="the proposer and the editor refused",
    )
    standin.click(CAROL, second.snapshot(), "approve")
    standin.workspace.wait_for(
        lambda: (
            "is in force in this channel"
            in str(standin.workspace.message(CHANNEL, second.ts).blocks)
        ),
        what="the edited proposal approved",
    )
    standin.click(CAROL, seen, "approve")
    standin.workspace.wait_for(
        lambda: [e for e in standin.workspace.ephemerals if "SUPERSEDED" in str(e)],
        what="the edited request refused",
    )


def test_rejecting_a_policy_request_says_the_rules_in_force_stay(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    assert standin.command(ALICE, CHANNEL, "/recon", "policy propose window_days_after=7").status
    request = _policy_request(standin)
    standin.click(BOB, request.snapshot(), "reject")
    view = _view(standin, "reject_view")
    words = str(view["blocks"])
    assert "The rules in force stay as they are" in words
    assert "Nothing will be reconciled" not in words

    standin.submit_view(BOB, view["id"], {"reason": {"reason_input": {"value": "not yet"}}})
    note = standin.workspace.wait_for(
        lambda: [
            m
            for m in standin.workspace.messages
            if "The rules in force stay as they are" in str(m.blocks) and m.thread_ts == request.ts
        ],
        what="the rejection said in the request's thread",
    )
    assert "Rejected by <@U0BOB>" in str(note[0].blocks)


@pytest.mark.parametrize(
    ("refusal", "advice"),
    [("not_in_channel", "Invite reconbot"), ("msg_blocks_too_long", "Propose it again")],
)
def test_a_policy_request_slack_will_not_post_is_withdrawn_and_never_waits_unseen(
    standin: SlackStandIn, bot: RunningBot, refusal: str, advice: str
) -> None:
    standin.workspace.fail_next("chat.postMessage", status=200, retry_after=None, error=refusal)
    assert standin.command(ALICE, CHANNEL, "/recon", "policy propose window_days_after=7").status

    told = standin.workspace.wait_for(
        lambda: [e for e in standin.workspace.ephemerals if "was not proposed" in str(e)],
        what="the proposer told",
    )[0]
    assert refusal in str(told) and advice in str(told), "Slack's words, and what to do"
    service = bot.bot.handlers.decisions.service
    [case] = [c for c in service.queries.recent(channel=CHANNEL) if c.id.startswith("POL")]
    report = service.queries.status(case.id)
    [pause] = report.pauses
    assert pause.status.value == "superseded" and "could not be posted" in (pause.reason or "")
    assert service.queries.pending_request(case.id) is None
