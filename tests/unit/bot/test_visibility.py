"""Who sees which investigation: channel membership from Slack (`users.conversations`, every
page, through a real WebClient against the stand-in), cached briefly, failing closed."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk import WebClient

from agent.domain import Investigation, InvestigationStatus
from agent.usecases.common import unknown_investigation
from bot.slack.visibility import (
    CONVERSATION_TYPES,
    ChannelVisibility,
    visibility_for,
)
from tests.standins.slack import SlackStandIn

ALICE, BOB, CAROL = "U0ALICE", "U0BOB", "U0CAROL"
SECRET = "C0SECRET"
NOW = datetime(2026, 11, 30, 10, 42, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    with SlackStandIn() as running:
        for user, name in ((ALICE, "alice"), (BOB, "bob"), (CAROL, "carol")):
            running.workspace.add_user(user, name)
        running.workspace.add_channel(
            SECRET, "finance-secret", kind="private_channel", members=[ALICE]
        )
        yield running


@pytest.fixture
def client(standin: SlackStandIn) -> WebClient:
    return WebClient(token=standin.workspace.bot_token, base_url=standin.api_url)


def _investigation(number: int, channel: str | None) -> Investigation:
    return Investigation(
        id=f"INV-{number:04d}",
        status=InvestigationStatus.AWAITING_FILE,
        requested_by=ALICE,
        channel=channel,
        thread_ts="1.000001" if channel else None,
        revision=1,
        created_at=NOW - timedelta(minutes=number),
    )


def _calls(standin: SlackStandIn) -> list[dict[str, str]]:
    return standin.workspace.calls_to("users.conversations")


def test_every_page_of_a_persons_conversations_is_read(
    standin: SlackStandIn, client: WebClient
) -> None:
    many = [f"C{n:08d}" for n in range(450)]
    for channel in many:
        standin.workspace.add_channel(channel, channel.lower(), members=[ALICE])

    channels = ChannelVisibility(client).channels_of(ALICE)

    assert channels == {*many, SECRET}
    calls = _calls(standin)
    assert len(calls) == 3, "200 a page: three pages"
    assert all(
        c["user"] == ALICE and c["types"] == CONVERSATION_TYPES and c["limit"] == "200"
        for c in calls
    )
    assert "cursor" not in calls[0] and calls[1]["cursor"] and calls[2]["cursor"]


def test_a_private_channel_is_visible_only_to_its_members(
    standin: SlackStandIn, client: WebClient
) -> None:
    visibility = ChannelVisibility(client)
    secret = _investigation(1, SECRET)
    public = _investigation(2, "C0FINANCE")
    standin.workspace.channel("C0FINANCE")  # a default channel: everyone is in it

    assert visibility.can_see(ALICE, secret)
    assert not visibility.can_see(BOB, secret)
    assert visibility.visible(BOB, [secret, public]) == [public]
    assert visibility.visible(ALICE, [secret, public]) == [secret, public]


def test_a_terminal_investigation_is_never_visible(
    standin: SlackStandIn, client: WebClient
) -> None:
    visibility = ChannelVisibility(client)
    terminal = _investigation(1, None)
    assert not visibility.can_see(ALICE, terminal)
    assert visibility.visible(ALICE, [terminal]) == []


def test_membership_is_kept_a_minute_per_person(standin: SlackStandIn, client: WebClient) -> None:
    clock = Clock()
    visibility = ChannelVisibility(client, clock=clock)
    assert SECRET in visibility.channels_of(ALICE)
    assert SECRET in visibility.channels_of(ALICE)
    assert len(_calls(standin)) == 1, "the second answer is the cached one"
    assert SECRET not in visibility.channels_of(BOB)
    assert len(_calls(standin)) == 2, "per person"

    standin.workspace.leave(ALICE, SECRET)
    clock.now += 59
    assert SECRET in visibility.channels_of(ALICE), "still cached"
    clock.now += 2
    assert SECRET not in visibility.channels_of(ALICE), "asked again after a minute"
    assert len(_calls(standin)) == 3


def test_the_cache_is_bounded(standin: SlackStandIn, client: WebClient) -> None:
    visibility = ChannelVisibility(client, max_people=2)
    for user in (ALICE, BOB, CAROL):
        visibility.channels_of(user)
    visibility.channels_of(CAROL)
    assert len(_calls(standin)) == 3
    visibility.channels_of(ALICE)
    assert len(_calls(standin)) == 4, "the least recently used person was dropped"


@pytest.mark.parametrize("fault", ["missing_scope", "internal_error"])
def test_a_slack_error_shows_nothing_is_logged_and_is_not_kept(
    standin: SlackStandIn, client: WebClient, caplog: pytest.LogCaptureFixture, fault: str
) -> None:
    if fault == "missing_scope":
        standin.workspace.revoke_scope("groups:read")
    else:
        for _ in range(2):
            standin.workspace.fail_next(
                "users.conversations", status=500, retry_after=None, error=fault
            )
    visibility = ChannelVisibility(client)
    with caplog.at_level(logging.WARNING, logger="bot.slack.visibility"):
        assert visibility.channels_of(ALICE) == frozenset()
        assert not visibility.can_see(ALICE, _investigation(1, SECRET))
    assert f"user={ALICE} error={fault} | " in caplog.text
    assert standin.workspace.bot_token not in caplog.text

    standin.workspace.scopes.add("groups:read")
    assert SECRET in visibility.channels_of(ALICE), "a failure is not cached"


def test_an_unreachable_slack_shows_nothing(caplog: pytest.LogCaptureFixture) -> None:
    unreachable = WebClient(token="xoxb-unreachable", base_url="http://127.0.0.1:9/api/")
    with caplog.at_level(logging.WARNING, logger="bot.slack.visibility"):
        assert ChannelVisibility(unreachable).channels_of(ALICE) == frozenset()
    assert f"user={ALICE} error=" in caplog.text
    assert "xoxb-unreachable" not in caplog.text


class Recent:
    """`Queries.recent` over a fixed newest-first list, recording the limits asked for."""

    def __init__(self, investigations: list[Investigation]) -> None:
        self.investigations = investigations
        self.limits: list[int] = []

    def recent(self, *, channel: str | None = None, limit: int = 10) -> list[Investigation]:
        self.limits.append(limit)
        return self.investigations[:limit]


def test_the_home_reads_past_others_investigations_and_keeps_twenty(
    standin: SlackStandIn, client: WebClient
) -> None:
    others = [_investigation(n, SECRET) for n in range(150)]
    bobs = [_investigation(150 + n, "C0FINANCE") for n in range(30)]
    standin.workspace.channel("C0FINANCE")
    queries = Recent([*others, bobs[0], _investigation(999, None), *bobs[1:]])

    shown = ChannelVisibility(client).newest(queries, BOB)  # type: ignore[arg-type]

    assert shown == bobs[:20]
    assert queries.limits == [100, 500], "read more when others' crowd out the newest"


def test_the_home_of_someone_in_no_channel_reads_nothing(
    standin: SlackStandIn, client: WebClient
) -> None:
    standin.workspace.add_user("U0DAVE", "dave")
    standin.workspace.leave("U0DAVE", "C0FINANCE")
    queries = Recent([_investigation(1, SECRET)])
    assert ChannelVisibility(client).newest(queries, "U0DAVE") == []  # type: ignore[arg-type]
    assert queries.limits == []


def test_one_visibility_per_client_and_the_words_of_an_unknown_id(client: WebClient) -> None:
    assert visibility_for(client) is visibility_for(client)
    other = WebClient(token="xoxb-other", base_url=client.base_url)
    assert visibility_for(other) is not visibility_for(client)
    assert str(unknown_investigation("INV-1")) == "There is no investigation INV-1."
