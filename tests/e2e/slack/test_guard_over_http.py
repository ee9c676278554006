"""What Slack delivers is checked: signatures, timestamps, button values, who clicks, expiry.
A refused click is answered to the clicker alone and nothing runs."""

from __future__ import annotations

import json
import time

from tests.standins.slack import SlackStandIn
from tests.standins.slack.server import sign

from .conftest import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    BotFactory,
    DemoFiles,
    RunningBot,
    request_message,
    upload_pair,
    wait_ephemeral,
    wait_text,
)


def _event_body(standin: SlackStandIn) -> bytes:
    return json.dumps(
        standin.envelope({"type": "app_home_opened", "user": ALICE, "tab": "home"})
    ).encode()


def test_a_forged_signature_gets_401(standin: SlackStandIn, bot: RunningBot) -> None:
    body = _event_body(standin)
    stamp = int(time.time())
    forged = sign("not-the-signing-secret", str(stamp), body)
    answer = standin.deliver(body, "application/json", timestamp=stamp, signature=forged)
    assert answer.status == 401
    assert standin.workspace.calls_to("views.publish") == []


def test_a_timestamp_older_than_five_minutes_gets_401(
    standin: SlackStandIn, bot: RunningBot
) -> None:
    body = _event_body(standin)
    old = int(time.time()) - 6 * 60
    signed = sign(standin.workspace.signing_secret, str(old), body)
    answer = standin.deliver(body, "application/json", timestamp=old, signature=signed)
    assert answer.status == 401


def test_a_properly_signed_event_is_accepted(standin: SlackStandIn, bot: RunningBot) -> None:
    answer = standin.open_home(ALICE)
    assert answer.status == 200
    view = standin.workspace.wait_for(lambda: standin.workspace.home_views.get(ALICE))
    assert view["type"] == "home"


def _nothing_ran(standin: SlackStandIn) -> bool:
    return standin.workspace.calls_to("files.completeUploadExternal") == []


def test_a_tampered_button_value_is_refused_and_nothing_runs(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    _, button = request.element("approve")
    value = json.loads(button["value"])
    value["authorization"] = "sha256:" + "0" * 64
    standin.click(BOB, request, "approve", value=json.dumps(value))
    standin.click(BOB, request, "approve", value="{not json")
    refusals = wait_ephemeral(standin, BOB, count=2)
    texts = " ".join(r["text"] for r in refusals)
    assert "IDENTITY_MISMATCH" in texts
    assert "not issued by reconbot" in texts
    time.sleep(0.5)
    assert _nothing_ran(standin)
    assert standin.workspace.message(CHANNEL, request.ts).action_ids() == [
        "approve",
        "edit_mapping",
        "reject",
    ]


def test_a_clicker_who_may_not_approve_is_told_who_may(
    standin: SlackStandIn, make_bot: BotFactory, demo_files: DemoFiles
) -> None:
    group = standin.workspace.add_usergroup("S0CONTROLLERS", [CAROL, ALICE])
    make_bot(RECONBOT_APPROVERS=group, RECONBOT_SELF_APPROVAL="false")
    upload = upload_pair(standin, demo_files, user=CAROL)
    request = request_message(standin, upload.ts)

    standin.click(BOB, request, "approve")
    refusal = wait_ephemeral(standin, BOB)[0]
    assert "NOT_AUTHORIZED" in refusal["text"]
    assert "<!subteam^S0CONTROLLERS>" in refusal["text"]
    standin.click(CAROL, request, "approve")
    refusal = wait_ephemeral(standin, CAROL)[0]
    assert "NOT_AUTHORIZED" in refusal["text"], "the requester may not approve her own case"
    assert "except the requester" in refusal["text"]
    time.sleep(0.5)
    assert _nothing_ran(standin)

    standin.click(ALICE, request, "approve")
    wait_text(standin, upload.ts, "Reconciled")


def test_an_expired_request_is_refused_and_its_message_says_so(
    standin: SlackStandIn, make_bot: BotFactory, demo_files: DemoFiles
) -> None:
    make_bot(RECONBOT_APPROVAL_TTL="2s", RECONBOT_EXPIRY_SWEEP="60s")
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    seen = request.snapshot()
    time.sleep(2.5)
    standin.click(BOB, seen, "approve")
    refusal = wait_ephemeral(standin, BOB)[0]
    assert "EXPIRED" in refusal["text"]
    message = standin.workspace.wait_for(
        lambda: (m := standin.workspace.message(CHANNEL, request.ts)) and not m.action_ids() and m
    )
    assert "Expired" in message.all_text()
    assert _nothing_ran(standin)


def test_the_sweep_marks_unanswered_requests_expired(
    standin: SlackStandIn, make_bot: BotFactory, demo_files: DemoFiles
) -> None:
    make_bot(RECONBOT_APPROVAL_TTL="1s", RECONBOT_EXPIRY_SWEEP="1s")
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    message = standin.workspace.wait_for(
        lambda: (
            (m := standin.workspace.message(CHANNEL, request.ts))
            and "Expired" in m.all_text()
            and m
        ),
        timeout=20,
    )
    assert message.action_ids() == []
