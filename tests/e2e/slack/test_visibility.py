"""Who sees which investigation in Slack: `/recon status`, `/recon list` and the App Home tab
show a person only the investigations of channels they are a member of (as Slack's
`users.conversations` says), and one they may not see reads exactly as one that does not
exist. Terminal investigations are never shown; a Slack error shows nothing."""

from __future__ import annotations

import io
import json
import logging
import time
from typing import Any

import pytest

from agent.usecases.common import Upload
from tests.standins.slack import SlackStandIn

from .conftest import ALICE, BOB, CHANNEL, DemoFiles, RunningBot

SECRET = "C0SECRET"  # a private channel: Alice and the bot
NOBODY = "INV-NOPE0000000"


@pytest.fixture
def secret(standin: SlackStandIn) -> str:
    standin.workspace.add_channel(SECRET, "finance-secret", kind="private_channel", members=[ALICE])
    return SECRET


def _open(standin: SlackStandIn, bot: RunningBot, channel: str, demo: DemoFiles) -> str:
    """Alice shares an orders export in `channel`; the id of the investigation it opens."""
    upload = standin.post_files(ALICE, channel, [("orders.csv", demo.orders)], text="recon")
    queries = bot.bot.handlers.questions.service.queries
    deadline = time.monotonic() + 30
    while (found := queries.find_by_thread(channel, upload.ts)) is None:
        assert time.monotonic() < deadline, "no investigation for the upload"
        time.sleep(0.05)
    # Then the answer asking for the payments export, so no work is left running.
    standin.workspace.wait_for(
        lambda: (
            found.id in "".join(m.all_text() for m in standin.workspace.thread(channel, upload.ts))
        ),
        what="the bot's answer naming the investigation",
    )
    return found.id


def _recon(standin: SlackStandIn, user: str, channel: str, text: str) -> dict[str, Any]:
    """Run `/recon <text>` as `user` in `channel`; the answer only they see."""
    before = len(standin.workspace.responses)
    assert standin.command(user, channel, "/recon", text).status == 200
    responses = standin.workspace.wait_for(
        lambda: len(standin.workspace.responses) > before and standin.workspace.responses,
        what=f"the answer to /recon {text}",
    )
    answer = responses[before]
    assert answer["response_type"] == "ephemeral"
    return answer


def _shown(answer: dict[str, Any], investigation_id: str) -> str:
    """What the answer shows, with the id asked about written as `INV-?`."""
    return json.dumps([answer["text"], answer["blocks"]]).replace(investigation_id, "INV-?")


def _home(standin: SlackStandIn, user: str) -> str:
    """Open the Home tab as `user` and read it once published."""

    def mine() -> int:
        return sum(
            1 for call in standin.workspace.calls_to("views.publish") if call.get("user_id") == user
        )

    published = mine()
    standin.open_home(user)
    # Another person's home may be published meanwhile (after an upload): wait for this one's.
    standin.workspace.wait_for(
        lambda: mine() > published and user in standin.workspace.home_views,
        what=f"{user}'s home tab",
    )
    return json.dumps(standin.workspace.home_views[user])


def test_a_member_sees_the_status_and_a_non_member_reads_it_as_unknown(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles, secret: str
) -> None:
    investigation = _open(standin, bot, secret, demo_files)

    mine = _recon(standin, ALICE, secret, f"status {investigation}")
    assert mine["text"] == f"{investigation}: awaiting_file"
    assert "orders.csv" in json.dumps(mine["blocks"])

    hidden = _recon(standin, BOB, CHANNEL, f"status {investigation}")
    nonexistent = _recon(standin, BOB, CHANNEL, f"status {NOBODY}")
    assert f"There is no investigation {investigation}." in hidden["text"]
    assert _shown(hidden, investigation) == _shown(nonexistent, NOBODY), "the same words"
    asked = standin.workspace.calls_to("users.conversations")
    assert {c["user"] for c in asked} == {ALICE, BOB}
    assert all(c["types"] == "public_channel,private_channel" for c in asked)


def test_a_terminal_investigation_is_never_shown_in_slack(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    service = bot.bot.handlers.questions.service
    started = service.intake.start(
        [Upload(io.BytesIO(demo_files.orders), "orders.csv")], requested_by=ALICE
    )
    investigation = started.investigation.id

    answer = _recon(standin, ALICE, CHANNEL, f"status {investigation}")
    assert answer["text"].endswith(f"There is no investigation {investigation}.")
    assert investigation not in json.dumps(_recon(standin, ALICE, CHANNEL, "list"))
    assert investigation not in _home(standin, ALICE)


def test_recon_list_in_a_channel_the_caller_is_not_in_shows_nothing(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles, secret: str
) -> None:
    investigation = _open(standin, bot, secret, demo_files)
    assert investigation in json.dumps(_recon(standin, ALICE, secret, "list"))

    listed = _recon(standin, BOB, secret, "list")
    assert investigation not in json.dumps(listed)
    assert listed["text"].startswith(f"No investigations in <#{secret}> yet")


def test_the_home_tab_shows_only_the_callers_channels(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles, secret: str
) -> None:
    public = _open(standin, bot, CHANNEL, demo_files)
    private = _open(standin, bot, secret, demo_files)

    bobs = _home(standin, BOB)
    assert public in bobs
    assert private not in bobs
    alices = _home(standin, ALICE)
    assert public in alices and private in alices

    asked = len(standin.workspace.calls_to("users.conversations"))
    assert private not in json.dumps(_recon(standin, BOB, secret, "list"))
    assert len(standin.workspace.calls_to("users.conversations")) == asked, (
        "the home tab and the command share a minute's cache"
    )


@pytest.mark.parametrize("fault", ["missing_scope", "internal_error"])
def test_a_slack_error_on_the_membership_call_shows_nothing(
    standin: SlackStandIn,
    bot: RunningBot,
    demo_files: DemoFiles,
    secret: str,
    caplog: pytest.LogCaptureFixture,
    fault: str,
) -> None:
    investigation = _open(standin, bot, secret, demo_files)
    if fault == "missing_scope":
        standin.workspace.revoke_scope("groups:read")  # installed without the new scope
    else:
        for _ in range(3):  # one a request: a failure is not cached
            standin.workspace.fail_next(
                "users.conversations", status=500, retry_after=None, error=fault
            )

    with caplog.at_level(logging.WARNING, logger="bot.slack.visibility"):
        status = _recon(standin, ALICE, secret, f"status {investigation}")
        listed = _recon(standin, ALICE, secret, "list")
        home = _home(standin, ALICE)

    assert status["text"].endswith(f"There is no investigation {investigation}.")
    assert investigation not in json.dumps(listed)
    assert investigation not in home
    assert f"user={ALICE} error={fault} | " in caplog.text
    assert standin.workspace.bot_token not in caplog.text
