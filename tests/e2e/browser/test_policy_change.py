"""A change to the channel's policy in the browser (issue 41): `/recon policy propose` typed in
the local workspace posts the request in the channel, each change in words and Approve drawn
from the bot's Block Kit; the proposer's Approve is refused to her alone (four-eyes); Bob's
puts the rules in force, and `/recon policy` says so. With RECONBOT_SCREENSHOTS the request is
saved as the README's picture of a policy change."""

from __future__ import annotations

from typing import Any

import pytest

from bot.terminal.slack_cli import LocalRun

from .conftest import WAIT_MS
from .test_local_workspace import BOB, act_as, save

expect = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency").expect


def _say(page: Any, text: str) -> None:
    page.locator("#composer-text").fill(text)
    page.locator("#composer-send").click()


def test_a_policy_change_proposed_and_approved_in_the_browser(page: Any, local: LocalRun) -> None:
    _say(page, "/recon policy")
    modal = page.locator("form.modal")
    expect(modal.locator(".dialog-title")).to_have_text("Channel policy")
    rule = modal.locator(".bk-input-block[data-block-id='rule:window_days_after'] input")
    expect(rule).to_have_value("30")
    rule.fill("7")
    modal.locator(".modal-submit").click()
    expect(modal).to_have_count(0)
    channel = page.locator("#channel-messages")
    request = channel.locator(".message", has=page.locator(".bk-header")).filter(
        has_text="A change to the channel's policy"
    )
    expect(request).to_be_visible(timeout=WAIT_MS)
    expect(request).to_contain_text("a capture may be up to 7 days after its order (was 30)")
    expect(request.locator("button[data-action-id=approve].primary")).to_be_visible()
    save(page, "policy-change.png", request)

    request.locator("button[data-action-id=approve]").click()
    dialog = page.locator(".bk-confirm")
    expect(dialog.locator(".dialog-title")).to_have_text("Put these rules in force?")
    dialog.locator("button.confirm").click()
    refused = channel.locator(".message.ephemeral", has_text="NOT_AUTHORIZED")
    expect(refused).to_contain_text("except the requester (@Alice)")

    act_as(page, BOB)
    request.locator("button[data-action-id=approve]").click()
    page.locator(".bk-confirm button.confirm").click()
    expect(request).to_contain_text("Approved by @Bob", timeout=WAIT_MS)
    expect(request).to_contain_text("is in force in this channel")
    expect(request.locator("button")).to_have_count(0)

    _say(page, "/recon policy show")
    expect(channel.locator(".message.ephemeral").last).to_contain_text("window_days_after: 7")


def test_edit_on_a_policy_request_in_the_browser_is_a_new_proposal(
    page: Any, local: LocalRun
) -> None:
    """Edit opens the form holding what the request proposes; a value that does not read is
    said beside its rule while the form stays open; the edit is posted as a new request and
    the edited one says who edited it."""
    _say(page, "/recon policy propose window_days_after=7")
    channel = page.locator("#channel-messages")
    requests = channel.locator(".message", has=page.locator(".bk-header")).filter(
        has_text="A change to the channel's policy"
    )
    first = requests.filter(has_text="7 days after its order").first
    expect(first).to_be_visible(timeout=WAIT_MS)

    act_as(page, BOB)
    first.locator("button[data-action-id=edit_mapping]").click()
    modal = page.locator("form.modal")
    expect(modal.locator(".dialog-title")).to_have_text("Edit the proposal")
    window = modal.locator(".bk-input-block[data-block-id='rule:window_days_after'] input")
    expect(window).to_have_value("7")
    tolerance = modal.locator(".bk-input-block[data-block-id='rule:amount_tolerance_minor']")
    tolerance.locator("input").fill("two")
    modal.locator(".modal-submit").click()
    expect(tolerance.locator(".bk-error")).to_contain_text("must be a whole number")
    tolerance.locator("input").fill("0")
    modal.locator(".modal-submit").click()
    expect(modal).to_have_count(0)

    expect(first).to_contain_text("Edited by @Bob", timeout=WAIT_MS)
    expect(first.locator("button")).to_have_count(0)
    second = requests.filter(has_text="amounts").filter(has=page.locator("button")).first
    expect(second).to_contain_text("7 days after its order (was 30)", timeout=WAIT_MS)
    expect(second.locator("button[data-action-id=approve]")).to_be_visible()
