"""A request too long for one Slack message: the message says how much more there is and
where, and the whole request goes with it as a text file in its thread, over the Web API of
the stand-in (files.getUploadURLExternal, the upload, files.completeUploadExternal), as Slack
would receive it (issue 38: what the approver sees is what is approved)."""

from __future__ import annotations

from pathlib import Path

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.domain import PauseStatus
from bot.slack.poster import ThreadPoster
from bot.slack.request_messages import RequestMessages
from tests.standins.slack import Message, SlackStandIn
from tests.unit.bot.test_blocks import _request

from .conftest import CHANNEL


class Remembered:
    """The deliveries `post` writes to: which message shows which request."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}

    def remember_message(self, pause_id: str, message_ts: str) -> None:
        self.messages[pause_id] = message_ts


class Pending:
    """The one read `post` makes: the request is still pending."""

    def pause(self, pause_id: str) -> object:
        return type("State", (), {"status": PauseStatus.PENDING})()


def _post(standin: SlackStandIn, warnings: int) -> str:
    root = Message(channel=CHANNEL, ts=standin.workspace.new_ts(), user="U0ALICE", text="files")
    with standin.workspace.condition:
        standin.workspace.messages.append(root)
    client = WebClient(token=standin.workspace.bot_token, base_url=standin.api_url)
    request = _request(warnings=warnings).model_copy(
        update={"channel": CHANNEL, "thread_ts": root.ts}
    )
    messages = RequestMessages(ThreadPoster(client), Remembered(), Pending())  # type: ignore[arg-type]
    messages.post(request)
    return root.ts


def test_a_request_too_long_for_its_message_is_posted_whole_beside_it(
    standin: SlackStandIn, tmp_path: Path
) -> None:
    thread_ts = _post(standin, 300)
    thread = standin.workspace.thread(CHANNEL, thread_ts)
    [message] = [m for m in thread if m.blocks]
    shown = message.all_text()
    assert "more lines: every one is in the file `request-PAUSE-0123456789.txt`" in shown
    [file] = [f for m in thread if m.bot_id for f in m.files]
    assert file.name == "request-PAUSE-0123456789.txt"
    posted = [m for m in thread if m.bot_id]
    assert posted.index(message) > next(i for i, m in enumerate(posted) if m.files), (
        "the file is there before the message that points to it"
    )
    whole = file.content.decode("utf-8")
    for n in range(300):  # every problem and warning, each whole
        assert f"problem {n}: Amount captured" in whole
        assert f"warning: note {n}: Amount captured" in whole
    assert "authorization sha256:" + "d" * 64 in whole


def test_a_request_its_message_holds_has_no_file(standin: SlackStandIn, tmp_path: Path) -> None:
    thread_ts = _post(standin, 2)
    thread = standin.workspace.thread(CHANNEL, thread_ts)
    assert [f for m in thread for f in m.files] == []
    [message] = [m for m in thread if m.blocks]
    assert "posted in this thread" not in message.all_text()


class Refusing(ThreadPoster):
    """A poster whose file uploads Slack refuses (a workspace that blocks them)."""

    def upload_text(self, *args: object, **kwargs: object) -> None:
        raise SlackApiError("refused", {"ok": False, "error": "file_uploads_disabled"})


def test_when_the_whole_request_cannot_be_posted_approve_is_held_back(
    standin: SlackStandIn,
) -> None:
    root = Message(channel=CHANNEL, ts=standin.workspace.new_ts(), user="U0ALICE", text="files")
    with standin.workspace.condition:
        standin.workspace.messages.append(root)
    client = WebClient(token=standin.workspace.bot_token, base_url=standin.api_url)
    request = _request(warnings=300).model_copy(update={"channel": CHANNEL, "thread_ts": root.ts})
    messages = RequestMessages(Refusing(client), Remembered(), Pending())  # type: ignore[arg-type]
    messages.post(request)
    [message] = [m for m in standin.workspace.thread(CHANNEL, root.ts) if m.blocks]
    assert message.action_ids() == ["edit_mapping", "reject"]
    shown = message.all_text()
    assert "Approve is held back" in shown
    # It never points to a file that was not posted: the rest is where it really is.
    assert "`request-PAUSE-0123456789.txt` posted" not in shown
    assert "could not be posted as a file here; `reconbot status INV-ABCDEF0123 --json`" in shown
