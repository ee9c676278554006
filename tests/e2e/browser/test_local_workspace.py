"""A person in the browser against the local workspace and the real bot: the demo pair, the
approval message drawn from the bot's Block Kit, Approve through its confirm dialog, the
results with their chart shown as wide as it reads and the exceptions CSV (the same bytes as
the terminal's), a question in the thread, Edit mapping and Reject through their modals (each
field labelled once, every hint whole), and the four-eyes refusals, each shown to the person
who clicked alone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bot.presentation import charts
from bot.terminal.slack_cli import LocalRun
from tests.support.cli import reconbot

from .conftest import VIEWPORT, WAIT_MS, Demo, screenshots_folder

expect = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency").expect

ALICE, BOB, DANA, CAROL = "U0ALICE", "U0BOB", "U0DANA", "U0CAROL"
RECONCILED = re.compile("Reconciled revision")


def thread(page: Any) -> Any:
    """The messages of the open thread."""
    return page.locator("#thread-messages")


def requests(page: Any) -> Any:
    """The approval requests of the open thread (messages that open with a header)."""
    return thread(page).locator(".message", has=page.locator(".bk-header"))


def refusals(page: Any) -> Any:
    """The ephemeral messages of the open thread (shown to the person acting alone)."""
    return thread(page).locator(".message.ephemeral")


def act_as(page: Any, user: str) -> None:
    """Switch the person the page acts as."""
    page.select_option("#user-switcher", user)
    expect(page.locator("#user-switcher")).to_have_value(user)


def approve(page: Any, request: Any) -> None:
    """Click Approve and confirm in Slack's confirm dialog."""
    request.locator("button[data-action-id=approve]").click()
    dialog = page.locator(".bk-confirm")
    expect(dialog.locator(".dialog-title")).to_have_text("Approve this mapping?")
    dialog.locator("button.confirm").click()
    expect(dialog).to_have_count(0)


def said_whole(modal: Any, local: LocalRun) -> None:
    """Each input of the open modal is shown as Slack shows it: its label once (then
    `(optional)` once, when it may be left empty) and its hint whole; no text of the modal is
    cut by the page or runs out of it."""
    view = local.workspace.standin.workspace.views[modal.get_attribute("data-view-id")]
    inputs = [block for block in view["blocks"] if block["type"] == "input"]
    assert inputs
    for block in inputs:
        shown = modal.locator(f".bk-input-block[data-block-id='{block['block_id']}']")
        optional = " (optional)" if block.get("optional") else ""
        expect(shown.locator(".bk-label")).to_have_text(block["label"]["text"] + optional)
        if block.get("hint"):
            expect(shown.locator(".bk-hint")).to_have_text(block["hint"]["text"])
    cut = modal.evaluate(
        "form => [...form.querySelectorAll('.modal-body, .modal-body *, .dialog-title')]"
        ".filter(node => node.scrollWidth > node.clientWidth + 1 && node.tagName !== 'SELECT')"
        ".map(node => node.className + ': ' + node.textContent.slice(0, 60))"
    )
    assert cut == [], "text cut or running out of the modal"


def use_demo_files(page: Any) -> Any:
    """Share the demo pair and wait for the approval request in its thread."""
    page.get_by_role("button", name="Use demo files").click()
    request = requests(page).first
    expect(request.locator("button[data-action-id=approve]")).to_be_visible(timeout=WAIT_MS)
    return request


def save(page: Any, name: str, first: Any, last: Any | None = None) -> None:
    """With RECONBOT_SCREENSHOTS, save the messages from `first` to `last` as `name`: the
    window is made tall enough to show them whole, the first at the top of its pane."""
    folder = screenshots_folder()
    if folder is None:
        return
    last = last or first
    top, bottom = first.bounding_box(), last.bounding_box()
    needed = bottom["y"] + bottom["height"] - top["y"]
    page.set_viewport_size({"width": VIEWPORT["width"], "height": int(needed) + 400})
    first.evaluate("node => node.scrollIntoView({block: 'start'})")
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)
    top, bottom = first.bounding_box(), last.bounding_box()
    clip = {
        "x": top["x"],
        "y": top["y"],
        "width": max(top["width"], bottom["width"]),
        "height": bottom["y"] + bottom["height"] - top["y"],
    }
    page.screenshot(path=str(folder / name), clip=clip)
    page.set_viewport_size(VIEWPORT)


def chart_shown_readable(page: Any, chart: Any) -> None:
    """The results' chart is shown inline at least as wide as it is drawn to be read at
    (charts.DISPLAY_PX: its smallest text is then MIN_TEXT_PX high), within the thread, and
    clicking it opens it full size."""
    expect(chart).to_be_visible()
    loaded = "img => img.complete && img.naturalWidth > 0"
    page.wait_for_function(loaded, arg=chart.element_handle())
    shown = chart.evaluate(
        "img => ({width: img.getBoundingClientRect().width, natural: img.naturalWidth, "
        "right: img.getBoundingClientRect().right, "
        "pane: document.getElementById('thread-messages').getBoundingClientRect().right})"
    )
    assert shown["natural"] == charts.WIDTH_PX
    assert shown["width"] >= charts.DISPLAY_PX, f"the chart is shown {shown['width']} px wide"
    assert shown["width"] / shown["natural"] >= charts.DISPLAY_PX / charts.WIDTH_PX
    assert shown["right"] <= shown["pane"], "the chart fits in the thread"
    with page.context.expect_page() as opened:
        chart.click()
    full = opened.value
    full.wait_for_load_state()
    assert "/local/files/" in full.url and full.url.endswith(".png")
    assert full.evaluate("document.images[0].naturalWidth") == charts.WIDTH_PX
    full.close()


def test_the_demo_pair_approved_in_the_browser_gives_the_terminals_exceptions(
    page: Any, local: LocalRun, demo: Demo, tmp_path: Path
) -> None:
    request = use_demo_files(page)
    expect(request.locator(".bk-header")).to_contain_text("Approval needed")
    expect(request).to_contain_text("orders.csv")
    expect(request).to_contain_text("requested by @Alice")
    expect(request.locator("button[data-action-id=approve].primary")).to_be_visible()
    expect(request.locator("button[data-action-id=reject].danger")).to_be_visible()
    save(page, "approval.png", request)

    approve(page, request)  # Alice asked: four-eyes refuses her, and tells her alone
    expect(refusals(page)).to_contain_text("NOT_AUTHORIZED")
    expect(refusals(page)).to_contain_text("Only visible to you")
    act_as(page, CAROL)
    expect(refusals(page)).to_have_count(0)
    approve(page, request)  # Carol is no approver
    expect(refusals(page)).to_have_count(1)
    expect(refusals(page)).to_contain_text("NOT_AUTHORIZED")

    act_as(page, BOB)
    expect(refusals(page)).to_have_count(0)
    approve(page, request)
    results = thread(page).locator(".message", has_text=RECONCILED).first
    expect(results).to_contain_text("approved by @Bob")
    expect(request).to_contain_text("Approved by @Bob")
    expect(request.locator("button")).to_have_count(0)
    card = thread(page).locator(".file-card", has_text="exceptions-")
    exceptions = page.locator(".file-card", has_text="exceptions-")
    expect(card).to_be_visible()
    chart_shown_readable(page, thread(page).locator(".message", has=exceptions).locator("img"))
    save(page, "results.png", results, thread(page).locator(".message", has=exceptions))

    with page.expect_download() as download:
        card.locator(".file-download").click()
    assert download.value.suggested_filename.startswith("exceptions-INV-")
    browser_csv = Path(download.value.path()).read_bytes()
    exported = tmp_path / "terminal.csv"
    terminal = reconbot(
        "investigate",
        str(demo.orders),
        str(demo.payments),
        "--export",
        str(exported),
        cwd=tmp_path,
        stdin="approve\n",
    )
    assert terminal.returncode == 0, terminal.stderr
    assert browser_csv == exported.read_bytes(), "the same rows, in the same order, byte for byte"

    answers = thread(page).locator(".message:not(.ephemeral)[data-user=U0BOT]")
    before = answers.count()
    page.locator("#reply-text").fill("@reconbot explain over_capture")
    page.locator("#reply-send").click()
    expect(thread(page).locator(".message[data-user=U0BOB]").last).to_contain_text("@reconbot")
    expect(answers).to_have_count(before + 1)
    expect(answers.last).to_contain_text("over_capture")


def test_edit_mapping_in_its_modal_makes_a_new_request_and_the_old_one_refuses(
    page: Any, local: LocalRun
) -> None:
    request = use_demo_files(page)
    act_as(page, BOB)
    request.locator("button[data-action-id=edit_mapping]").click()
    modal = page.locator("form.modal")
    expect(modal.locator(".dialog-title")).to_have_text("Edit the mapping")
    said_whole(modal, local)
    customer = modal.locator("select[data-block-id='orders.customer']")
    expect(customer).to_be_visible()
    customer.select_option(label="Lineitem name")

    # Bob's screen stops updating from here on, as a client that has not caught up.
    def stale(url: str) -> bool:
        """The page's polls, held back."""
        return "/local/state" in url

    page.route(stale, lambda route: route.abort())
    modal.locator(".modal-submit").click()
    expect(modal).to_have_count(0)
    workspace = local.workspace.standin.workspace
    workspace.wait_for(
        lambda: (
            sum(bool(m.blocks) and m.blocks[0]["type"] == "header" for m in workspace.messages) == 2
            and sum("approve" in m.action_ids() for m in workspace.messages) == 1
            and any("Edited by" in m.all_text() for m in workspace.messages)
        ),
        timeout=WAIT_MS / 1000,
        what="the edited request",
    )
    approve(page, request)  # on the old request, as Bob's screen still shows it
    page.unroute(stale)

    expect(refusals(page)).to_contain_text("SUPERSEDED")
    expect(requests(page)).to_have_count(2)
    # The old request says it was edited (or, redrawn after the refused click, superseded).
    expect(requests(page).first).to_contain_text(re.compile("Edited by @Bob|Superseded by"))
    expect(requests(page).first.locator("button")).to_have_count(0)
    new = requests(page).last
    expect(new).to_contain_text("Lineitem name")
    expect(new).to_contain_text("also made by @Bob (edited)")

    act_as(page, DANA)  # Alice uploaded and Bob edited: four-eyes leaves Dana
    expect(refusals(page)).to_have_count(0)
    approve(page, new)
    expect(thread(page).locator(".message", has_text=RECONCILED)).to_have_count(1)


def test_reject_asks_for_a_reason_in_its_modal(page: Any, local: LocalRun, demo: Demo) -> None:
    page.locator("#file-input").set_input_files([str(demo.orders), str(demo.payments)])
    expect(page.locator(".pending-file")).to_have_count(2)
    page.locator("#composer-text").fill("September close")
    page.locator("#composer-send").click()
    request = requests(page).first
    expect(request.locator("button[data-action-id=reject]")).to_be_visible()
    expect(thread(page).locator(".message").first).to_contain_text("September close")

    act_as(page, BOB)
    request.locator("button[data-action-id=reject]").click()
    modal = page.locator("form.modal")
    expect(modal.locator(".dialog-title")).to_have_text("Reject the request")
    said_whole(modal, local)
    modal.locator(".modal-submit").click()
    expect(modal.locator(".bk-error")).to_have_text("Please complete this required field.")
    modal.locator("textarea").fill("wrong month <exported> & sent")
    modal.locator(".modal-submit").click()
    expect(modal).to_have_count(0)
    expect(request).to_contain_text("Rejected by @Bob")
    expect(request).to_contain_text("wrong month <exported> & sent")
    expect(request.locator("button")).to_have_count(0)


def test_text_from_files_and_people_is_shown_as_text_never_as_markup(
    page: Any, local: LocalRun, demo: Demo, tmp_path: Path
) -> None:
    evil = '<img src=x onerror="window.pwned=1">'
    orders = tmp_path / f"orders{evil}.csv"
    orders.write_bytes(demo.orders.read_bytes())
    page.locator("#file-input").set_input_files([str(orders), str(demo.payments)])
    typed = "<b>not bold</b> *bold* @Bob <script>window.pwned=2</script>"
    page.locator("#composer-text").fill(typed)
    page.locator("#composer-send").click()
    request = requests(page).first
    expect(request).to_contain_text(f"orders{evil}.csv")
    upload = thread(page).locator(".message").first
    expect(upload).to_contain_text("<b>not bold</b>")
    expect(upload.locator("b")).to_have_text("bold")
    expect(upload.locator(".mention")).to_have_text("@Bob")
    expect(upload.locator(".file-name").first).to_have_text(f"orders{evil}.csv")
    assert page.evaluate("window.pwned") is None
    assert page.locator("img[src=x], script:not([src])").count() == 0

    html = page.evaluate(
        "text => Mrkdwn.render(text, {names: {U0BOB: 'Bob'}})",
        "*Approved by <@U0BOB>* &lt;script&gt; <javascript:alert(1)|click> "
        "<https://example.com/a?b=1&amp;c=2|a site> `a&lt;b` _done_ :white_check_mark:",
    )
    assert '<b>Approved by <span class="mention" data-user="U0BOB">@Bob</span></b>' in html
    assert "&lt;script&gt;" in html and "<script" not in html
    assert "javascript:" not in html and "click" in html
    assert '<a href="https://example.com/a?b=1&amp;c=2"' in html
    assert "<code>a&lt;b</code>" in html and "<i>done</i>" in html and "✅" in html


def test_a_question_of_the_bot_is_answered_with_its_select_and_a_command_answers_alone(
    page: Any, local: LocalRun, tmp_path: Path
) -> None:
    rows = 60
    orders = ["Name,Total,Currency,Created at"] + [
        f"#{1001 + i},{100 + i}.00,USD,2025-10-01 10:00:00 +0000" for i in range(rows)
    ]
    payments = ["id,Amount,Amount Refunded,Amount Captured,Currency,order_id"] + [
        f"py_{i:06d},{100 + i}.00,0.00,{100 + i - (i % 3)}.00,USD,#{1001 + i}" for i in range(rows)
    ]
    (tmp_path / "orders.csv").write_text("\n".join(orders) + "\n")
    (tmp_path / "stripe-payments.csv").write_text("\n".join(payments) + "\n")
    page.locator("#file-input").set_input_files(
        [str(tmp_path / "orders.csv"), str(tmp_path / "stripe-payments.csv")]
    )
    page.locator("#composer-send").click()
    question = requests(page).first
    choice = question.locator("select[data-action-id='answer:0']")
    expect(choice).to_be_visible()
    expect(question.locator("button[data-action-id=approve]")).to_have_count(0)

    act_as(page, BOB)
    choice.select_option(label="Amount Captured")
    expect(requests(page)).to_have_count(2)
    expect(requests(page).first).to_contain_text("Edited by @Bob")
    expect(requests(page).last.locator("button[data-action-id=approve]")).to_be_visible()

    page.locator("#composer-text").fill("/recon list")
    page.locator("#composer-send").click()
    listed = page.locator("#channel-messages .message.ephemeral")
    expect(listed).to_contain_text("INV-")
    act_as(page, DANA)
    expect(page.locator("#channel-messages .message.ephemeral")).to_have_count(0)
