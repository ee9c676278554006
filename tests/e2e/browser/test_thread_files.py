"""Files shared into a thread from the page, as Slack's thread composer shares them: a case
started with the orders export alone goes on when the payments export is dropped onto (or
chosen in) the thread pane. The bot gets what Slack sends for that, a `message`/`file_share`
event with the thread's `thread_ts` and a `file_shared` event, and its request follows in the
same thread. A drop on one pane never lands in the other pane's composer."""

from __future__ import annotations

from typing import Any

import pytest

from bot.terminal.slack_cli import LocalRun
from workspace.local.errors import PageError
from workspace.local.people import CHANNEL

from .conftest import Demo
from .test_local_workspace import ALICE, requests, thread

expect = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency").expect


def carrying(page: Any, name: str, content: str) -> Any:
    """A DataTransfer carrying one file, as the browser makes for a file dragged in."""
    return page.evaluate_handle(
        """([name, content]) => {
            const data = new DataTransfer();
            data.items.add(new File([content], name, { type: "text/csv" }));
            return data;
        }""",
        [name, content],
    )


def drop(page: Any, selector: str, data: Any) -> None:
    """Drag `data` over the element `selector` and drop it there."""
    page.dispatch_event(selector, "dragover", {"dataTransfer": data})
    page.dispatch_event(selector, "drop", {"dataTransfer": data})


def recorded_events(local: LocalRun, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The events the workspace delivers to the bot from now on, as delivered."""
    standin = local.workspace.standin
    deliver = standin.deliver_envelope
    events: list[dict[str, Any]] = []

    def recording(envelope: dict[str, Any], *, retry: int = 0) -> Any:
        """Deliver `envelope`, keeping its event."""
        events.append(envelope["event"])
        return deliver(envelope, retry=retry)

    monkeypatch.setattr(standin, "deliver_envelope", recording)
    return events


def test_the_payments_export_dropped_into_the_thread_continues_the_case_there(
    page: Any, local: LocalRun, demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    page.locator("#file-input").set_input_files([str(demo.orders)])
    page.locator("#composer-send").click()
    root = thread(page).locator(".message").first
    expect(root.locator(".file-name")).to_have_text("orders.csv")
    expect(thread(page)).to_contain_text("Upload the payments export in this thread")
    root_ts = root.get_attribute("data-ts")
    assert root_ts
    events = recorded_events(local, monkeypatch)

    # A drop on the channel is the channel composer's; one on the thread pane is the thread's.
    drop(page, "#channel-messages", carrying(page, "stray.csv", "a,b\n1,2\n"))
    expect(page.locator("#pending-files .pending-file")).to_have_count(1)
    expect(page.locator("#pending-files")).to_contain_text("stray.csv · 8 B")
    expect(page.locator("#reply-pending .pending-file")).to_have_count(0)
    page.get_by_role("button", name="Remove stray.csv").click()
    expect(page.locator("#pending-files .pending-file")).to_have_count(0)

    drop(page, "#thread-messages", carrying(page, "payments.csv", demo.payments.read_text()))
    pending = page.locator("#reply-pending .pending-file")
    expect(pending).to_have_count(1)
    expect(pending).to_contain_text("payments.csv")
    expect(page.locator("#pending-files .pending-file")).to_have_count(0)
    page.locator("#reply-file-input").set_input_files([str(demo.orders)])
    expect(pending).to_have_count(2)
    page.locator("#reply-pending").get_by_role("button", name="Remove orders.csv").click()
    expect(pending).to_have_count(1)
    page.locator("#reply-send").click()
    expect(pending).to_have_count(0)

    shared = thread(page).locator(f".message[data-user={ALICE}]", has_text="payments.csv")
    expect(shared.locator(".file-name")).to_have_text("payments.csv")
    request = requests(page).first
    expect(request.locator("button[data-action-id=approve]")).to_be_visible()
    expect(request).to_contain_text("payments.csv")
    expect(page.locator("#channel-messages .message")).to_have_count(1)
    expect(page.locator("#channel-messages .replies")).to_contain_text("replies")

    # What the bot got is what Slack sends for a file shared in a thread.
    [message] = [e for e in events if e.get("subtype") == "file_share"]
    assert message["type"] == "message" and message["channel"] == CHANNEL
    assert message["user"] == ALICE and message["thread_ts"] == root_ts
    assert message["ts"] != root_ts and message["channel_type"] == "channel"
    [file] = message["files"]
    assert file["name"] == "payments.csv" and file["filetype"] == "csv"
    [announced] = [e for e in events if e.get("type") == "file_shared"]
    assert announced["file_id"] == file["id"] and announced["channel_id"] == CHANNEL
    assert announced["user_id"] == ALICE
    stored = local.workspace.standin.workspace.message(CHANNEL, message["ts"])
    assert stored.thread_ts == root_ts and [f.name for f in stored.files] == ["payments.csv"]


def test_a_share_naming_a_reply_goes_to_its_threads_root_and_a_gone_thread_keeps_the_draft(
    local: LocalRun,
) -> None:
    workspace = local.workspace
    root = workspace.say(ALICE, "month-end")
    assert root is not None
    reply = workspace.say(ALICE, "orders follow", thread_ts=root.ts)
    assert reply is not None and reply.thread_ts == root.ts

    draft = workspace.draft("notes.pdf", b"%PDF-1.4 not an export")
    with pytest.raises(PageError, match="That thread is gone") as gone:
        workspace.share(ALICE, [draft], thread_ts="1.000001")
    assert gone.value.status == 404
    shared = workspace.share(ALICE, [draft], thread_ts=reply.ts)
    assert shared.thread_ts == root.ts, "Slack threads a reply to a reply under the root"
