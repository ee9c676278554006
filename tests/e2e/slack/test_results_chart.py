"""The results carry a chart, over HTTP against the Slack stand-in: after an approval the thread
holds a PNG of findings per category and amounts per currency, uploaded with alt text through
files.getUploadURLExternal and files.completeUploadExternal beside the exceptions file."""

from __future__ import annotations

import io
import re
from typing import Any

from PIL import Image

from bot.presentation import charts
from tests.standins.slack import SlackStandIn

from .conftest import (
    BOB,
    DemoFiles,
    RunningBot,
    exceptions_files,
    request_message,
    upload_pair,
    wait_text,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_after_an_approval_the_thread_shows_the_findings_chart(
    standin: SlackStandIn, bot: RunningBot, demo_files: DemoFiles
) -> None:
    upload = upload_pair(standin, demo_files)
    request = request_message(standin, upload.ts)
    assert standin.click(BOB, request.snapshot(), "approve").status == 200
    wait_text(standin, upload.ts, "Reconciled")

    def both() -> list[Any] | None:
        found = exceptions_files(standin, upload.ts)
        return found if len(found) >= 2 else None

    csv, chart = standin.workspace.wait_for(both, what="the exceptions file and the chart")
    assert re.fullmatch(r"exceptions-INV-[0-9A-F]+-r1\.csv", csv.name)
    assert re.fullmatch(r"findings-INV-[0-9A-F]+-r1\.png", chart.name)
    assert chart.filetype == "png"
    png: bytes = chart.content
    assert png.startswith(PNG_SIGNATURE)
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.width == charts.WIDTH_PX

    asked = standin.workspace.calls_to("files.getUploadURLExternal")
    [described] = [a for a in asked if str(a.get("filename", "")).endswith(".png")]
    assert str(described.get("alt_txt", "")).startswith("Bar chart of ")
    assert len(standin.workspace.calls_to("files.completeUploadExternal")) == 1, "one message"
