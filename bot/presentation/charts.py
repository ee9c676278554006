"""The picture of an outcome: findings per category, and the money they concern per currency.

`chart_data` reads the numbers off an outcome's summary (so tests check numbers, not pixels);
`render_chart` draws them as PNG bytes for the thread and the local workspace. Pure: nothing is
read or written but the returned bytes. matplotlib is imported when a chart is drawn, never at
import time, and only through `Figure` + the Agg canvas (no pyplot global state, so threads
may draw at the same time).

The picture is a narrow card, as tall as its rows need, drawn for the width a thread shows it
at (`DISPLAY_PX`), so every text reads inline without opening it: the counts on top, each
currency's panel stacked under them. It is white with dark text, so it reads the same in
Slack's light and dark themes; its colours are from the Okabe-Ito colour-blind-safe palette.
Currencies never share an axis: each has its own panel and scale (a yen is not a dollar). An
outcome without findings still gets a card that says so, so the thread of every reconciliation
shows its picture and a missing picture only ever means that drawing it failed.
"""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from agent.domain import Outcome

DISPLAY_PX = 560
"""The width (CSS pixels) a thread shows the chart at: the local workspace's thread pane in a
1400-pixel window, about what Slack's thread shows on a laptop. Every size below is chosen for
it, so the chart reads inline without opening it."""
WIDTH_PX = 2 * DISPLAY_PX
"""The card's width in pixels: twice the displayed width, sharp on high-density screens. Its
height follows the rows drawn (the panels are stacked, one under the other)."""
DPI = 200
SCALE = WIDTH_PX / DISPLAY_PX
"""Image pixels per displayed pixel."""
MIN_TEXT_PX = 11.0
"""The smallest text on the card, in displayed pixels (see `DISPLAY_PX`)."""
TEXT_PX, TITLE_PX, HEADING_PX = 12.5, 14.0, 15.5
"""Labels and values; panel titles; the card's heading (displayed pixels)."""
ROW_PX, PAD_PX, GAP_PX, LINE_PX = 20, 14, 14, 18
"""A bar's row, the card's margin, the space between panels, a line of heading or note."""
MAX_CURRENCY_PANELS = 5
"""Panels of currencies under the counts; the busiest currencies are shown, the rest named."""
MAX_CATEGORIES = 16
"""Rows of categories (the policy has 13); more are summed up in one last row."""
MAX_LABEL = 28
"""Characters of a category name or currency code on the card (values from files are cut)."""

BACKGROUND = "#FFFFFF"
INK = "#1D1C1D"  # Slack's own text colour
MUTED = "#616061"
GRID = "#DDDDDD"
COUNT_COLOUR = "#0072B2"  # Okabe-Ito blue
AMOUNT_COLOURS = ("#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
"""Okabe-Ito vermillion, bluish green, reddish purple, orange and sky blue: one per currency
panel, each readable on white."""
OTHERS = "other categories"


@dataclass(frozen=True)
class ChartData:
    """What the chart shows: findings per category (in the summary's order, those with
    findings only) and the absolute difference per currency and category."""

    investigation_id: str
    revision: int
    counts: dict[str, int]
    amounts: dict[str, dict[str, Decimal]]
    """currency -> category -> amount; currencies busiest first (orders and captures)."""

    @property
    def total(self) -> int:
        """All findings."""
        return sum(self.counts.values())


@dataclass(frozen=True)
class ChartFile:
    """How the chart of an outcome is named and described where it is uploaded."""

    filename: str
    title: str
    alt: str


def chart_data(outcome: Outcome) -> ChartData:
    """The numbers of `outcome`'s chart, read from its summary's categories (falling back on
    its counts when the summary has none), so the picture and the results agree."""
    categories = outcome.summary.get("categories")
    counts: dict[str, int] = {}
    amounts: dict[str, dict[str, Decimal]] = {}
    if isinstance(categories, list) and categories:
        for entry in categories:
            if not isinstance(entry, dict):
                continue
            name = str(entry.get("category"))
            count = _int(entry.get("count"))
            if count <= 0:
                continue
            counts[name] = counts.get(name, 0) + count
            for currency, value in (entry.get("difference_by_currency") or {}).items():
                amount = _decimal(value)
                if amount:
                    per_category = amounts.setdefault(str(currency), {})
                    per_category[name] = per_category.get(name, Decimal(0)) + amount
    else:
        counts = {str(c): n for c, n in outcome.counts.items() if n > 0}
    order = _busiest_first(amounts, outcome.summary.get("currencies"))
    return ChartData(
        investigation_id=outcome.investigation_id,
        revision=outcome.revision,
        counts=counts,
        amounts={currency: amounts[currency] for currency in order},
    )


def chart_file(outcome: Outcome, data: ChartData | None = None) -> ChartFile:
    """The chart's file name, title and alt text (the alt text says what the picture shows,
    in numbers, for people who cannot see it)."""
    data = data or chart_data(outcome)
    if data.total:
        top = ", ".join(f"{name} {count}" for name, count in list(data.counts.items())[:5])
        more = " and more" if len(data.counts) > 5 else ""
        alt = (
            f"Bar chart of {data.total} findings of {outcome.investigation_id} in "
            f"{len(data.counts)} categories ({top}{more}), and the amounts they concern in "
            f"{len(data.amounts)} currencies, one panel per currency."
        )
    else:
        alt = f"Card saying that {outcome.investigation_id} has no findings."
    return ChartFile(
        filename=f"findings-{outcome.investigation_id}-r{outcome.revision}.png",
        title="Findings per category and amount per currency",
        alt=alt,
    )


def render_chart(outcome: Outcome) -> bytes:
    """`outcome`'s chart as PNG bytes, `WIDTH_PX` wide and as tall as its rows need, drawn to
    be read inline at `DISPLAY_PX`: on top, horizontal bars of findings per category labelled
    with their counts; under it, one panel per currency with the absolute difference per
    category on its own scale. Without findings, a card that says so."""
    return render(chart_data(outcome))


def render(data: ChartData) -> bytes:
    """Draw `data` (see `render_chart`) as PNG bytes."""
    buffer = io.BytesIO()
    draw(data).savefig(
        buffer, format="png", dpi=DPI, facecolor=BACKGROUND, metadata={"Software": None}
    )
    return buffer.getvalue()


def draw(data: ChartData) -> Any:
    """The chart of `data` as a matplotlib Figure (what `render` saves), so a test can measure
    its texts: every one is at least `MIN_TEXT_PX` high at the displayed width."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    card = _Card(data)
    size = (WIDTH_PX / DPI, round(card.height * SCALE) / DPI)
    figure = Figure(figsize=size, dpi=DPI, facecolor=BACKGROUND)
    FigureCanvasAgg(figure)
    card.draw(figure)
    return figure


def _pt(px: float) -> float:
    """Points of a font that is `px` high at the displayed width."""
    return px * SCALE * 72 / DPI


def _lines(text: str, px: float) -> list[str]:
    """`text` wrapped to the card's width in a font `px` high (0.6 em a character, generous
    for DejaVu Sans, so no line runs off the card)."""
    return textwrap.wrap(text, int((DISPLAY_PX - 2 * PAD_PX) / (0.6 * px))) or [""]


def _many(count: int, one: str, more: str) -> str:
    """`3 currencies`, `1 category`."""
    return f"{count:,} {one if count == 1 else more}"


class _Card:
    """Where everything goes, in displayed pixels from the top: the heading, the counts panel,
    one panel per shown currency (its categories with an amount only), and the note. Without
    findings, the card that says so."""

    def __init__(self, data: ChartData) -> None:
        self.empty = not data.total
        self.counts = _capped(data.counts)
        names = list(self.counts)
        shown = list(data.amounts)[:MAX_CURRENCY_PANELS]
        self.panels: list[tuple[str, dict[str, Decimal]]] = []
        for currency in shown:
            per_category = _capped_amounts(data.amounts[currency], names)
            rows = {n: per_category[n] for n in names if per_category.get(n)}
            if rows:
                self.panels.append((currency, rows))
        which = f"{data.investigation_id} · revision {data.revision}"
        self.heading = _lines(which, HEADING_PX)
        if self.empty:
            said = f"{which}: 0 findings, so there is nothing to chart."
            self.heading, self.note = ["No findings"], _lines(said, TEXT_PX)
            return
        self.heading += _lines(
            f"{_many(data.total, 'finding', 'findings')} in "
            f"{_many(len(data.counts), 'category', 'categories')} · amounts in "
            f"{_many(len(data.amounts), 'currency', 'currencies')}",
            TEXT_PX,
        )
        note = (
            "Amounts: the absolute difference between expected and found, each currency on "
            "its own scale."
            if self.panels
            else "No amounts: these findings concern no difference in money."
        )
        hidden = len(data.amounts) - len(shown)
        if hidden:
            note += f" {_many(hidden, 'more currency', 'more currencies')} in the exceptions file."
        self.note = _lines(note, MIN_TEXT_PX)

    @property
    def height(self) -> float:
        """The card's height in displayed pixels."""
        if self.empty:
            return 2 * PAD_PX + 50 + LINE_PX * len(self.note) + 40
        rows = len(self.counts) + sum(len(rows) for _, rows in self.panels)
        panels = 1 + len(self.panels)
        lines = len(self.heading) + len(self.note)
        return 2 * PAD_PX + lines * LINE_PX + panels * (LINE_PX + 4 + GAP_PX) + rows * ROW_PX

    def draw(self, figure: Any) -> None:
        """Draw the card on `figure` (`WIDTH_PX` by `self.height` displayed pixels, scaled)."""
        if self.empty:
            self._text(
                figure, PAD_PX + 20, "No findings", 30, bold=True, colour=COUNT_COLOUR, centre=True
            )
            for number, line in enumerate(self.note):
                self._text(figure, PAD_PX + 80 + number * LINE_PX, line, TEXT_PX, centre=True)
            return
        top = PAD_PX
        for number, line in enumerate(self.heading):
            self._text(figure, top, line, HEADING_PX if number == 0 else TEXT_PX, bold=not number)
            top += LINE_PX
        left = PAD_PX + self._label_width(figure) + 8
        counts = {name: Decimal(count) for name, count in self.counts.items()}
        panels = [
            ("Findings per category", COUNT_COLOUR, counts, [f"{c:,}" for c in counts.values()])
        ]
        for index, (currency, rows) in enumerate(self.panels):
            title = f"Amount in {_cut(currency, 12)} per category"
            colour = AMOUNT_COLOURS[index % len(AMOUNT_COLOURS)]
            panels.append((title, colour, rows, [_compact(a) for a in rows.values()]))
        for title, colour, rows, labels in panels:
            top += GAP_PX
            self._text(figure, top, title, TITLE_PX, bold=True)
            top += LINE_PX + 4
            box = len(rows) * ROW_PX
            width = (DISPLAY_PX - PAD_PX - left) / DISPLAY_PX
            bottom = 1 - (top + box) / self.height
            axis = figure.add_axes((left / DISPLAY_PX, bottom, width, box / self.height))
            _bars(axis, rows, colour, labels)
            top += box
        top += GAP_PX
        for line in self.note:
            self._text(figure, top, line, MIN_TEXT_PX, colour=MUTED)
            top += LINE_PX

    def _label_width(self, figure: Any) -> float:
        """The widest category label, in displayed pixels (measured, as drawn)."""
        renderer = figure.canvas.get_renderer()
        widest = 0.0
        for name in self.counts:
            probe = figure.text(0, 0, _plain(name, MAX_LABEL), fontsize=_pt(TEXT_PX))
            widest = max(widest, probe.get_window_extent(renderer).width / SCALE)
            probe.remove()
        return min(widest, DISPLAY_PX / 2)

    def _text(
        self,
        figure: Any,
        top: float,
        text: str,
        px: float,
        *,
        bold: bool = False,
        colour: str = INK,
        centre: bool = False,
    ) -> None:
        """A line of text `px` high whose top is `top` displayed pixels below the card's."""
        figure.text(
            0.5 if centre else PAD_PX / DISPLAY_PX,
            1 - top / self.height,
            _plain(text),
            fontsize=_pt(px),
            fontweight="bold" if bold else "normal",
            color=colour,
            va="top",
            ha="center" if centre else "left",
        )


def _bars(axis: Any, rows: dict[str, Decimal], colour: str, labels: list[str]) -> None:
    """One panel: a bar per row, labelled with its value, on the panel's own scale (room is
    left right of the longest bar for its label); no ticks, the labels say the values."""
    places = list(range(len(rows)))
    amounts = [float(v) for v in rows.values()]
    drawn = axis.barh(places, amounts, color=colour, height=0.72)
    axis.bar_label(drawn, labels=labels, padding=3, fontsize=_pt(TEXT_PX), color=INK)
    axis.set_yticks(places, [_plain(n, MAX_LABEL) for n in rows], fontsize=_pt(TEXT_PX))
    axis.set_ylim(len(rows) - 0.5, -0.5)
    width = axis.get_position().width * DISPLAY_PX
    room = 7 * TEXT_PX * 0.6 + 6
    axis.set_xlim(0, max(amounts) * width / max(width - room, width / 2))
    axis.set_facecolor(BACKGROUND)
    axis.tick_params(axis="y", length=0, colors=INK, pad=6)
    axis.set_xticks([])
    for side in ("top", "right", "bottom"):
        axis.spines[side].set_visible(False)
    axis.spines["left"].set_color(GRID)


def _capped(counts: dict[str, int]) -> dict[str, int]:
    """At most MAX_CATEGORIES rows: the rest summed up in a last row."""
    if len(counts) <= MAX_CATEGORIES:
        return counts
    items = list(counts.items())
    kept = dict(items[: MAX_CATEGORIES - 1])
    kept[OTHERS] = sum(n for _, n in items[MAX_CATEGORIES - 1 :])
    return kept


def _capped_amounts(amounts: dict[str, Decimal], rows: list[str]) -> dict[str, Decimal]:
    """A currency's amounts on the rows drawn: those of categories folded into the last row
    are summed there (one currency, so the sum is meaningful)."""
    if OTHERS not in rows or OTHERS in amounts:
        return amounts
    kept = {c: a for c, a in amounts.items() if c in rows}
    rest = sum((a for c, a in amounts.items() if c not in rows), Decimal(0))
    if rest:
        kept[OTHERS] = rest
    return kept


def _busiest_first(amounts: dict[str, dict[str, Decimal]], currencies: object) -> list[str]:
    """The currencies with amounts, those with most orders and captures first (a count, so
    comparable across currencies), then by code."""
    activity: dict[str, int] = {}
    if isinstance(currencies, list):
        for entry in currencies:
            if isinstance(entry, dict):
                activity[str(entry.get("currency"))] = _int(entry.get("orders")) + _int(
                    entry.get("captures")
                )
    return sorted(amounts, key=lambda c: (-activity.get(c, 0), c))


def _compact(amount: Decimal) -> str:
    """An amount in three significant digits with k, M, B (`547692` reads `548k`)."""
    value = abs(float(amount))
    for limit, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def _cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters (values from files can be anything long)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(text: str, limit: int = MAX_LABEL * 4) -> str:
    """Text drawn as it is: cut to `limit` characters, and `$` escaped so a currency such as
    `$` never starts matplotlib's math mode (every text is escaped once, where it is drawn)."""
    return _cut(text, limit).replace("$", r"\$")


def _int(value: object) -> int:
    """A count from the summary; anything unreadable counts as 0."""
    try:
        return int(str(value))
    except ValueError:
        return 0


def _decimal(value: object) -> Decimal:
    """An absolute amount from the summary; anything unreadable is 0 (drawn as no bar)."""
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return Decimal(0)
    return abs(amount) if amount.is_finite() else Decimal(0)
