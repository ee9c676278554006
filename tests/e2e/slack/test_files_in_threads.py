"""Files in Slack: one file then the other, replacements, identical re-uploads, and every way a
file can be unusable, each answered in the upload's thread."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.data.ingest import inspect_csv
from agent.errors import InputFileError
from tests.standins.slack import SlackStandIn

from .conftest import (
    ALICE,
    BOB,
    CHANNEL,
    BotFactory,
    DemoFiles,
    RunningBot,
    is_request,
    request_message,
    upload_pair,
    wait_ephemeral,
    wait_text,
)

MALFORMED = Path(__file__).parents[2] / "fixtures" / "malformed"


def test_one_file_then_the_other_in_the_thread(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    first = standin.post_files(ALICE, CHANNEL, [("orders-nov.csv", demo_files.orders)])
    text = wait_text(standin, first.ts, "Upload the *payments* export")
    assert "INV-" in text
    standin.post_files(
        ALICE, CHANNEL, [("captures-nov.csv", demo_files.payments)], thread_ts=first.ts
    )
    request = request_message(standin, first.ts)
    assert request.action_ids() == ["approve", "edit_mapping", "reject"]
    assert "captures-nov.csv" in request.all_text()


def test_a_replacement_supersedes_the_old_request_and_the_new_one_approves(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    old = request_message(standin, upload.ts)
    seen_old = old.snapshot()

    same = standin.post_files(
        ALICE, CHANNEL, [("payments.csv", demo_files.payments)], thread_ts=upload.ts
    )
    wait_text(standin, upload.ts, "byte-identical")
    assert old.action_ids() == ["approve", "edit_mapping", "reject"], "the request stands"
    assert same.thread_ts == upload.ts

    changed = demo_files.payments.replace(b"ch_3Q0000000001", b"ch_3Q0000000009", 1)
    standin.post_files(ALICE, CHANNEL, [("payments-v2.csv", changed)], thread_ts=upload.ts)
    new = request_message(standin, upload.ts, after=1)
    superseded = standin.workspace.message(CHANNEL, old.ts)
    assert superseded.action_ids() == []
    assert "Superseded by revision 2" in superseded.all_text()

    standin.click(BOB, seen_old, "approve")
    refusal = wait_ephemeral(standin, BOB)[0]
    assert "SUPERSEDED" in refusal["text"]
    assert "superseded" in refusal["text"].lower()

    standin.click(BOB, new, "approve")
    text = wait_text(standin, upload.ts, "Reconciled")
    assert "revision 2" in text
    assert len([m for m in standin.workspace.thread(CHANNEL, upload.ts) if is_request(m)]) == 2


def test_non_csv_files_get_a_polite_word(standin: SlackStandIn, bot: RunningBot) -> None:
    upload = standin.post_files(ALICE, CHANNEL, [("chart.png", b"\x89PNG\r\n\x1a\n....")])
    text = wait_text(standin, upload.ts, "only read CSV exports")
    assert "chart.png" in text
    assert standin.workspace.calls_to("files.info") == []


def test_each_malformed_file_gives_its_message_in_the_thread(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    expected = {}
    for path in sorted(MALFORMED.iterdir()):
        with pytest.raises(InputFileError) as caught:
            inspect_csv(path, path.name, max_bytes=1 << 30)
        upload = standin.post_files(
            ALICE,
            CHANNEL,
            [(path.name, path.read_bytes()), ("payments.csv", demo_files.payments)],
        )
        expected[upload.ts] = str(caught.value)
    assert len(expected) >= 20
    for ts, message in expected.items():
        text = wait_text(standin, ts, message)
        assert "Traceback" not in text
        assert not [m for m in standin.workspace.thread(CHANNEL, ts) if is_request(m)]


def test_a_sign_in_page_instead_of_the_file_is_a_clear_message(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = standin.post_files(
        ALICE, CHANNEL, [("orders.csv", demo_files.orders)], serve_as="signin"
    )
    text = wait_text(standin, upload.ts, "sign-in page")
    assert "orders.csv" in text


def test_a_file_over_the_limit_is_refused_before_downloading(
    standin: SlackStandIn, make_bot: BotFactory, demo_files: DemoFiles
) -> None:
    make_bot(RECONBOT_MAX_UPLOAD_MB="1")
    big = b"order_id,amount,currency\n" + b"1001,10.00,EUR\n" * 80_000
    upload = standin.post_files(ALICE, CHANNEL, [("orders-big.csv", big)])
    text = wait_text(standin, upload.ts, "over the upload limit of 1 MB")
    assert "orders-big.csv" in text


def test_the_same_event_delivered_three_times_starts_one_investigation(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = standin.post_files(
        ALICE,
        CHANNEL,
        [("orders.csv", demo_files.orders), ("payments.csv", demo_files.payments)],
        deliveries=3,
    )
    request_message(standin, upload.ts)
    wait_text(standin, upload.ts, "Decision needed")
    bot_messages = [m for m in standin.workspace.thread(CHANNEL, upload.ts) if m.bot_id]
    assert len(bot_messages) == 2, "one progress message and one request"
    assert len(standin.workspace.calls_to("files.info")) == 2
