"""The bot as operators run it: a process restarted between the pause and the click, on
SQLite and PostgreSQL; and Slack's rate limits, retried after the acknowledgement."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import time
from pathlib import Path

import pytest

from agent.usecases.common import Upload
from bot.composition import build_runtime
from bot.config import Settings
from tests.standins.slack import SlackStandIn
from tests.support.models import DyingModel

from .conftest import (
    ALICE,
    BOB,
    CHANNEL,
    RECONBOT,
    BotFactory,
    BotProcess,
    DemoFiles,
    RunningBot,
    bot_environment,
    exceptions_files,
    free_port,
    message_with_action,
    request_message,
    upload_pair,
    wait_text,
)


def _worker(env: dict[str, str]) -> subprocess.Popen[bytes] | None:
    """On PostgreSQL the web process only enqueues: a `reconbot worker` runs the jobs."""
    if not env["RECONBOT_DATABASE_URL"].startswith("postgres"):
        return None
    return subprocess.Popen(
        [RECONBOT, "worker"],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _kill(worker: subprocess.Popen[bytes] | None) -> None:
    if worker is not None:
        worker.kill()
        worker.wait(timeout=10)


def test_approve_works_after_the_bot_process_restarts(
    standin: SlackStandIn, any_database: str, tmp_path: Path, demo_files: DemoFiles
) -> None:
    env = bot_environment(standin, any_database, tmp_path)
    subprocess.run([RECONBOT, "migrate"], env={**os.environ, **env}, check=True, timeout=120)
    first, worker = BotProcess(env, free_port()), _worker(env)
    try:
        standin.app_url = first.events_url
        upload = upload_pair(standin, demo_files)
        request = request_message(standin, upload.ts)
    finally:
        first.kill()
        _kill(worker)

    second, worker = BotProcess(env, free_port()), _worker(env)
    try:
        standin.app_url = second.events_url
        assert standin.click(BOB, request, "approve").status == 200
        wait_text(standin, upload.ts, "Reconciled")
        standin.workspace.wait_for(lambda: exceptions_files(standin, upload.ts), what="file")
        assert "Approved by <@U0BOB>" in standin.workspace.message(CHANNEL, request.ts).all_text()
    finally:
        assert second.stop() == 0, "SIGTERM stops the bot cleanly"
        _kill(worker)


def test_a_rate_limited_post_is_retried_and_arrives(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    standin.workspace.fail_next("chat.postMessage", status=429, retry_after=1)
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    assert request.action_ids() == ["approve", "edit_mapping", "reject"]
    posts = standin.workspace.calls_to("chat.postMessage")
    assert posts[0] == posts[1], "the same message was sent again after the 429"


def test_a_rate_limited_ephemeral_refusal_still_reaches_the_clicker(
    standin: SlackStandIn, make_bot: BotFactory, demo_files: DemoFiles
) -> None:
    make_bot(RECONBOT_APPROVERS="U0NOBODY")
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    standin.workspace.fail_next("chat.postEphemeral", status=429, retry_after=1)
    answer = standin.click(BOB, request, "approve")
    assert answer.status == 200 and answer.seconds < 1.0, "acknowledged before any retry"
    found = standin.workspace.wait_for(lambda: standin.workspace.ephemerals, what="refusal")
    assert "NOT_AUTHORIZED" in found[0]["text"]


def test_a_failed_reconciliation_offers_a_retry_that_works(
    standin: SlackStandIn, make_bot: BotFactory, demo_files: DemoFiles, tmp_path: Path
) -> None:
    first = make_bot()
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    # The bot restarts (the tables its validation kept are gone) and the storage loses the
    # file meanwhile, with the columns of any earlier read of it: reconciling needs the blob.
    first.stop()
    digest = hashlib.sha256(demo_files.payments).hexdigest()
    blob = tmp_path / "blobs" / digest[:2] / digest
    hidden = blob.with_suffix(".away")
    blob.rename(hidden)
    for parsed in (tmp_path / "work" / "columns").glob(f"{digest}-*.parquet"):
        parsed.unlink()
    make_bot()

    standin.click(BOB, request, "approve")
    wait_text(standin, upload.ts, "failed")
    failure = message_with_action(standin, upload.ts, "retry")
    assert "Traceback" not in failure.all_text()
    assert "failed" in standin.workspace.message(CHANNEL, request.ts).all_text()
    assert standin.workspace.message(CHANNEL, request.ts).action_ids() == []

    hidden.rename(blob)
    standin.click(BOB, failure, "retry")
    wait_text(standin, upload.ts, "Reconciled")
    standin.workspace.wait_for(lambda: exceptions_files(standin, upload.ts), what="file")
    # The Retry was used: the failure message keeps no live button.
    used = standin.workspace.message(CHANNEL, failure.ts)
    assert used.action_ids() == []
    assert "retried" in used.all_text()


def test_an_inspection_cut_off_by_a_crash_is_offered_again_after_a_restart(
    standin: SlackStandIn,
    make_bot: BotFactory,
    database_url: str,
    tmp_path: Path,
    demo_files: DemoFiles,
) -> None:
    env = bot_environment(standin, database_url, tmp_path, RECONBOT_CLAIM_LEASE="1s")
    upload = standin.post_files(
        ALICE,
        CHANNEL,
        [("orders.csv", demo_files.orders), ("payments.csv", demo_files.payments)],
        deliveries=0,
    )
    crashed = build_runtime(Settings(**env), model=DyingModel(), recover=False)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        crashed.service.intake.start(
            [Upload(io.BytesIO(f.content), f.name) for f in upload.files],
            requested_by=ALICE,
            channel=CHANNEL,
            thread_ts=upload.ts,
        )
    crashed.engine.dispose()
    time.sleep(1.2)

    make_bot(RECONBOT_CLAIM_LEASE="1s")
    offer = message_with_action(standin, upload.ts, "investigate_again")
    assert "Nothing you uploaded was lost" in offer.all_text()
    standin.click(BOB, offer, "investigate_again")
    request = request_message(standin, upload.ts)
    standin.click(BOB, request, "approve")
    wait_text(standin, upload.ts, "Reconciled")


def test_an_upload_cut_off_by_a_crash_is_picked_up_by_the_next_process(
    standin: SlackStandIn, database_url: str, tmp_path: Path, demo_files: DemoFiles
) -> None:
    env = bot_environment(
        standin, database_url, tmp_path, RECONBOT_CLAIM_LEASE="2s", RECONBOT_EXPIRY_SWEEP="1s"
    )
    first = BotProcess(env, free_port())
    try:
        standin.app_url = first.events_url
        upload = standin.post_files(
            ALICE,
            CHANNEL,
            [("orders.csv", demo_files.orders), ("payments.csv", demo_files.payments)],
            serve_as="stall",
        )
        standin.workspace.wait_for(
            lambda: standin.workspace.calls_to("download"), what="a download"
        )
    finally:
        first.kill()  # dies in the middle of the download
    for item in upload.files:
        item.serve_as = "file"
    standin.release_downloads.set()

    second = BotProcess(env, free_port())
    try:
        standin.app_url = second.events_url
        request = request_message(standin, upload.ts)
        standin.click(BOB, request, "approve")
        wait_text(standin, upload.ts, "Reconciled")
    finally:
        assert second.stop() == 0
