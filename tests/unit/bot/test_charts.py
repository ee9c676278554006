"""The chart of an outcome (findings per category, amounts per currency) and its upload with the
results: the numbers match the summary, currencies never share an axis, the PNG is a sharp
opaque card whose every text reads at the width a thread shows it, and a chart that fails never
costs the results."""

from __future__ import annotations

import io
import itertools
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from agent.domain import ApprovalRequest, Outcome, PauseState
from bot.presentation import charts
from bot.slack.poster import ThreadPoster
from bot.slack.request_messages import RequestMessages

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

CATEGORIES: list[dict[str, Any]] = [
    {"category": "unreadable_row", "count": 0, "difference_by_currency": {}},
    {"category": "multi_order_payment", "count": 2, "difference_by_currency": {}},
    {
        "category": "capture_without_order",
        "count": 31,
        "difference_by_currency": {"USD": "17709.80", "JPY": "547692", "KWD": "83.602"},
    },
    {"category": "currency_mismatch", "count": 30, "difference_by_currency": {}},
    {
        "category": "amount_mismatch",
        "count": 31,
        "difference_by_currency": {"USD": "2773.05", "JPY": "17209"},
    },
    {"category": "over_capture", "count": 18, "difference_by_currency": {"USD": "5.17"}},
]
CURRENCIES = [
    {"currency": "JPY", "orders": 207, "captures": 207},
    {"currency": "KWD", "orders": 91, "captures": 94},
    {"currency": "USD", "orders": 1023, "captures": 1059},
]


def outcome(
    categories: list[dict[str, Any]] | None = None,
    *,
    counts: dict[str, int] | None = None,
    currencies: list[dict[str, Any]] | None = None,
    export_digest: str | None = "sha256:" + "e" * 64,
) -> Outcome:
    """An outcome whose summary lists `categories` (as the engine's summary does)."""
    categories = CATEGORIES if categories is None else categories
    summary: dict[str, Any] = {"orders": 2000, "payments": 2104}
    if categories:
        summary["categories"] = categories
        summary["currencies"] = CURRENCIES if currencies is None else currencies
    return Outcome(
        investigation_id="INV-EA088F61CA",
        pause_id="PAUSE-FE41015219",
        revision=2,
        mapping_digest="sha256:" + "c" * 64,
        input_identity="sha256:" + "b" * 64,
        counts=counts if counts is not None else {c["category"]: c["count"] for c in categories},
        summary=summary,
        top_findings=[],
        report="",
        export_digest=export_digest,
        export_rows=112,
        created_at=datetime(2026, 11, 30, 10, 42, tzinfo=UTC),
    )


def opened(png: bytes) -> Image.Image:
    """The PNG as an image (Pillow checks the format); every chart is WIDTH_PX wide (twice
    the width a thread shows it at) and as tall as its rows need."""
    assert png.startswith(PNG_SIGNATURE)
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    image.load()
    assert image.width == charts.WIDTH_PX == 2 * charts.DISPLAY_PX
    assert 0 < image.height < 12 * image.width
    return image


# -- the chart's numbers ----------------------------------------------------------------------


def test_the_chart_counts_each_category_with_findings_in_the_summarys_order() -> None:
    data = charts.chart_data(outcome())
    assert data.counts == {
        "multi_order_payment": 2,
        "capture_without_order": 31,
        "currency_mismatch": 30,
        "amount_mismatch": 31,
        "over_capture": 18,
    }
    assert list(data.counts) == [c["category"] for c in CATEGORIES if c["count"]]
    assert data.total == 112


def test_each_currency_has_its_own_amounts_never_mixed_with_another() -> None:
    data = charts.chart_data(outcome())
    assert data.amounts == {
        "USD": {
            "capture_without_order": Decimal("17709.80"),
            "amount_mismatch": Decimal("2773.05"),
            "over_capture": Decimal("5.17"),
        },
        "JPY": {"capture_without_order": Decimal("547692"), "amount_mismatch": Decimal("17209")},
        "KWD": {"capture_without_order": Decimal("83.602")},
    }
    assert list(data.amounts) == ["USD", "JPY", "KWD"], "busiest currency first"


def test_amounts_are_absolute_and_unreadable_ones_are_left_out() -> None:
    odd = [
        {
            "category": "amount_mismatch",
            "count": 3,
            "difference_by_currency": {"EUR": "-12.50", "GBP": "n/a", "CHF": "0"},
        }
    ]
    data = charts.chart_data(outcome(odd, currencies=[]))
    assert data.amounts == {"EUR": {"amount_mismatch": Decimal("12.50")}}


def test_a_summary_without_categories_charts_the_outcomes_counts() -> None:
    data = charts.chart_data(outcome([], counts={"partial_capture": 4, "over_capture": 0}))
    assert data.counts == {"partial_capture": 4}
    assert data.amounts == {}
    opened(charts.render(data))


# -- the picture ------------------------------------------------------------------------------


def test_the_chart_is_a_sharp_opaque_png_card() -> None:
    png = charts.render_chart(outcome())
    image = opened(png).convert("RGBA")
    assert image.getpixel((0, 0)) == (255, 255, 255, 255), "an opaque white card in any theme"
    assert len(image.getcolors(maxcolors=1_000_000) or []) > 10, "something is drawn"


CURRENCY_CODES = ["USD", "EUR", "JPY", "$", "KWD", "GBP", "CHF", "SEK", "Yen $x^2$ \\frac"]


def many() -> Outcome:
    """25 categories with long names, each with amounts in 9 currencies (odd codes among them)."""
    categories = [
        {
            "category": f"category_with_a_rather_long_name_{n}",
            "count": n * 7 + 1,
            "difference_by_currency": {
                c: str(10 ** (n % 7) * (i + 1)) for i, c in enumerate(CURRENCY_CODES)
            },
        }
        for n in range(25)
    ]
    return outcome(categories, currencies=[])


def empty() -> Outcome:
    """An outcome without findings."""
    return outcome([{**c, "count": 0, "difference_by_currency": {}} for c in CATEGORIES])


def test_many_categories_and_currencies_still_render() -> None:
    chosen = many()
    data = charts.chart_data(chosen)
    assert len(data.counts) == 25 and sorted(data.amounts) == sorted(CURRENCY_CODES)
    opened(charts.render_chart(chosen))
    assert "25 categories" in charts.chart_file(chosen).alt


def drawn_texts(figure: Any) -> list[Any]:
    """The texts a chart's figure shows (headings, panel titles, labels, values, notes)."""
    from matplotlib.text import Text

    return [t for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("chosen", [outcome, many, empty], ids=["demo", "many", "empty"])
def test_every_text_reads_whole_at_the_width_a_thread_shows_the_chart(chosen: Any) -> None:
    figure = charts.draw(charts.chart_data(chosen()))
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    card = figure.bbox
    texts = drawn_texts(figure)
    assert texts
    for text in texts:
        shown = text.get_fontsize() * charts.DPI / 72 / charts.SCALE
        assert shown >= charts.MIN_TEXT_PX >= 11, f"{text.get_text()!r} is {shown:.1f} px high"
        box = text.get_window_extent(renderer)
        inside = card.x0 <= box.x0 and box.x1 <= card.x1 and card.y0 <= box.y0 <= box.y1 <= card.y1
        assert inside, f"{text.get_text()!r} runs off the card"


def test_the_currency_panels_are_stacked_under_the_counts_each_on_its_own_scale() -> None:
    figure = charts.draw(charts.chart_data(outcome()))
    counts, *currencies = figure.axes
    assert len(currencies) == 3, "USD, JPY, KWD"
    labels = [[t.get_text() for t in axis.get_yticklabels()] for axis in figure.axes]
    assert labels[0] == list(charts.chart_data(outcome()).counts)
    assert labels[1:] == [
        ["capture_without_order", "amount_mismatch", "over_capture"],
        ["capture_without_order", "amount_mismatch"],
        ["capture_without_order"],
    ], "each currency's panel lists the categories with an amount in it"
    boxes = [axis.get_position() for axis in figure.axes]
    assert len({(round(b.x0, 6), round(b.x1, 6)) for b in boxes}) == 1, "one column"
    assert all(up.y0 > down.y1 for up, down in itertools.pairwise(boxes)), "top to bottom"
    assert all(axis.get_shared_x_axes().get_siblings(axis) == [axis] for axis in figure.axes)
    assert [axis.get_xlim()[1] for axis in currencies] != [counts.get_xlim()[1]] * 3


def test_more_rows_make_a_taller_card_of_the_same_width() -> None:
    small = opened(charts.render_chart(outcome(CATEGORIES[:2], currencies=[])))
    large = opened(charts.render_chart(outcome()))
    assert small.width == large.width and small.height < large.height


def test_no_findings_draws_a_card_that_says_so() -> None:
    data = charts.chart_data(empty())
    assert data.counts == {} and data.amounts == {} and data.total == 0
    image = opened(charts.render_chart(empty())).convert("RGB")
    assert len(image.getcolors(maxcolors=1_000_000) or []) > 2, "words on the card"
    assert "No findings" in [t.get_text() for t in drawn_texts(charts.draw(data))]
    assert "no findings" in charts.chart_file(empty()).alt


def test_the_chart_file_is_named_after_the_investigation_and_revision() -> None:
    file = charts.chart_file(outcome())
    assert file.filename == "findings-INV-EA088F61CA-r2.png"
    assert file.title == "Findings per category and amount per currency"
    assert "112 findings" in file.alt and "3 currencies" in file.alt


# -- the upload with the results --------------------------------------------------------------


class FakeClient:
    """The WebClient calls the poster makes, recorded; uploads may be refused."""

    def __init__(self, refuse_uploads_with: int = 0) -> None:
        self.uploads: list[dict[str, Any]] = []
        self.posts: list[dict[str, Any]] = []
        self.refuse_uploads_with = refuse_uploads_with

    def chat_postMessage(self, **kwargs: Any) -> dict[str, str]:  # noqa: N802 (Slack's name)
        self.posts.append(kwargs)
        return {"ts": f"2.{len(self.posts)}"}

    def files_upload_v2(self, **kwargs: Any) -> None:
        self.uploads.append(kwargs)
        if self.refuse_uploads_with and len(kwargs["file_uploads"]) >= self.refuse_uploads_with:
            answer = SlackResponse(
                client=None,
                http_verb="POST",
                api_url="files.completeUploadExternal",
                req_args={},
                data={"ok": False, "error": "invalid_arguments"},
                headers={},
                status_code=200,
            )
            raise SlackApiError("refused", answer)  # type: ignore[no-untyped-call]


class FakeQueries:
    """The reads `report_outcome` makes: no trace, the exceptions file at `path`."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def trace(self, investigation_id: str) -> list[Any]:
        return []

    @contextmanager
    def exceptions_file(self, outcome: Outcome) -> Iterator[Path | None]:
        yield self.path


def report(tmp_path: Path, client: FakeClient, result: Outcome, *, csv: bool = True) -> None:
    """Report `result` in a thread through a real poster over `client`."""
    path = tmp_path / "exceptions.csv"
    path.write_bytes(b"category,order_id\namount_mismatch,#1001\n")
    request = ApprovalRequest.model_construct(channel="C0FINANCE", thread_ts="1.0")
    state = PauseState.model_construct(request=request, message_ts=None)
    queries = FakeQueries(path if csv else None)
    messages = RequestMessages(ThreadPoster(client), None, queries)  # type: ignore[arg-type]
    messages.report_outcome(result, state, "U0BOB")


def test_the_results_carry_the_chart_beside_the_exceptions_file(tmp_path: Path) -> None:
    client = FakeClient()
    report(tmp_path, client, outcome())
    assert len(client.posts) == 1, "the results message"
    [upload] = client.uploads
    assert upload["channel"] == "C0FINANCE" and upload["thread_ts"] == "1.0"
    csv, chart = upload["file_uploads"]
    assert csv["filename"] == "exceptions-INV-EA088F61CA-r2.csv"
    assert chart["filename"] == "findings-INV-EA088F61CA-r2.png"
    assert chart["title"] == "Findings per category and amount per currency"
    assert chart["alt_txt"].startswith("Bar chart of 112 findings")
    opened(chart["file"])


def test_without_an_exceptions_file_the_chart_is_uploaded_alone(tmp_path: Path) -> None:
    client = FakeClient()
    report(tmp_path, client, outcome(export_digest=None), csv=False)
    [upload] = client.uploads
    [chart] = upload["file_uploads"]
    assert chart["filename"].endswith(".png") and chart["alt_txt"]


def test_a_chart_that_fails_to_draw_never_costs_the_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(data: charts.ChartData) -> bytes:
        raise RuntimeError("no fonts")

    monkeypatch.setattr(charts, "render", broken)
    client = FakeClient()
    with caplog.at_level(logging.ERROR):
        report(tmp_path, client, outcome())
    assert len(client.posts) == 1
    [upload] = client.uploads
    assert [f["filename"] for f in upload["file_uploads"]] == ["exceptions-INV-EA088F61CA-r2.csv"]
    assert "investigation=INV-EA088F61CA | chart failed" in caplog.text


def test_slack_refusing_the_chart_still_delivers_the_exceptions_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    client = FakeClient(refuse_uploads_with=2)
    with caplog.at_level(logging.ERROR):
        report(tmp_path, client, outcome())
    first, second = client.uploads
    assert len(first["file_uploads"]) == 2
    assert [f["filename"] for f in second["file_uploads"]] == ["exceptions-INV-EA088F61CA-r2.csv"]
    assert "upload with the chart failed" in caplog.text
