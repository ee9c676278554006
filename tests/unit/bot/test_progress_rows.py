"""The thread's progress message shows the rows read of each large file while it is read."""

from __future__ import annotations

from bot.slack import blocks
from bot.slack.progress import ProgressMessage


class RecordingPoster:
    """A poster that keeps what it was asked to post and update."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def post(self, channel: str, thread_ts: str | None, rendered: blocks.Rendered) -> str:
        self.texts.append(rendered.text)
        return "1.000"

    def update(self, channel: str, ts: str, rendered: blocks.Rendered) -> None:
        self.texts.append(rendered.text)


def test_rows_read_are_shown_per_file_until_the_next_step() -> None:
    poster = RecordingPoster()
    progress = ProgressMessage(poster, "C1", "1.0", ["orders.csv", "payments.csv"])  # type: ignore[arg-type]
    progress.rows_read("orders.csv", 650_000, 0.47)
    progress.rows_read("payments.csv", 1_200_000, 0.9)
    assert "orders.csv` 650,000 rows read (47%)" in poster.texts[-1]
    assert "payments.csv` 1,200,000 rows read (90%)" in poster.texts[-1]
    progress.rows_read("orders.csv", 1_300_394, 1.0)
    progress.rows_read("payments.csv", 1_112_333, 1.0)
    assert "rows read" not in poster.texts[-1]  # both read: the step goes on
    progress.rows_read("orders.csv", 10, 0.5)
    progress.tool_done("validate_mapping")
    assert "rows read" not in poster.texts[-1]
    assert "checked the proposed mapping on every row" in poster.texts[-1]


def test_a_file_name_in_the_rows_read_is_escaped() -> None:
    rendered = blocks.progress_message(["<!channel>.csv"], [], {"<!channel>.csv": (5, 0.5)})
    assert "<!channel>" not in rendered.text
    assert "5 rows read (50%)" in rendered.text
