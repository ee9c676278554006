"""`/recon policy` shows the policy in force in a channel, every rule's value, and each version
put in force there, newest first."""

from __future__ import annotations

from datetime import UTC, datetime

from agent.channel_policy import record_of
from agent.data.policy import Policy
from agent.usecases.policies import ChannelPolicy
from bot.slack import blocks

WHEN = datetime(2026, 12, 6, 17, 0, tzinfo=UTC)


def test_a_channel_under_the_configured_policy_says_so_with_every_rule() -> None:
    shown = ChannelPolicy("C1", Policy(), [])

    rendered = blocks.policy_message(shown, where="in <#C1>")

    text = str(rendered.blocks)
    assert "Policy in force in <#C1>" in text
    assert blocks.short_digest(Policy().version) in text
    assert "no change was approved in this channel" in text
    for key in Policy().rule_values():
        assert key in text


def test_versions_put_in_force_are_listed_newest_first_with_who_and_the_request() -> None:
    wide = Policy(window_days_after=100, source="approved change")
    history = [
        record_of("C1", Policy(), since=WHEN, by="seed", source="built-in defaults"),
        record_of("C1", wide, since=WHEN, by="U2", source="approved change", pause_id="PAUSE-9"),
    ]
    shown = ChannelPolicy("C1", wide, history)

    text = str(blocks.policy_message(shown, where="in <#C1>").blocks)

    assert text.index("PAUSE-9") < text.index("<@seed>"), "the newest first"
    assert "<@U2>" in text and "PAUSE-9" in text
    assert "window_days_after: `100`" in text
    assert "no change was approved" not in text


def test_every_rule_is_shown_whole_however_long_its_words() -> None:
    words = {f"Zustand-{n:04d}": "paid" for n in range(400)}  # about 6,000 characters
    shown = ChannelPolicy("C1", Policy(order_status_words=words), [])

    rendered = blocks.policy_message(shown, where="in <#C1>")

    texts = [b["text"]["text"] for b in rendered.blocks if b["type"] == "section"]
    assert all(len(t) <= blocks.MAX_SECTION and not t.endswith("…") for t in texts)
    joined = " ".join(texts)
    assert joined.count("= paid") == len(words), "no word cut or hidden"
    assert "0399" in joined
    assert len(rendered.blocks) <= blocks.MAX_BLOCKS


def test_versions_beyond_those_listed_are_counted_with_where_to_read_them() -> None:
    policies = [Policy(window_days_after=days) for days in range(1, 14)]
    history = [
        record_of("C1", p, since=WHEN, by="U2", source="approved change", pause_id=f"PAUSE-{n}")
        for n, p in enumerate(policies)
    ]
    shown = ChannelPolicy("C1", policies[-1], history)

    text = str(blocks.policy_message(shown, where="in <#C1>").blocks)

    assert "PAUSE-12" in text and "PAUSE-3" in text and "PAUSE-2" not in text
    assert "and 3 earlier" in text and "reconbot explain --channel C1" in text
