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
