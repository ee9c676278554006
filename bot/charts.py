"""The picture of an outcome: findings per category, and the money they concern per currency.

`chart_data` reads the numbers off an outcome's summary (so tests check numbers, not pixels);
`render_chart` draws them as PNG bytes for the thread and the local workspace. Pure: nothing is
read or written but the returned bytes. matplotlib is imported when a chart is drawn, never at
import time, and only through `Figure` + the Agg canvas (no pyplot global state, so threads
may draw at the same time).

The picture is a white card with dark text, so it reads the same in Slack's light and dark
themes; its colours are from the Okabe-Ito colour-blind-safe palette. Currencies never share
an axis: each has its own panel and scale (a yen is not a dollar). An outcome without findings
still gets a card that says so, so the thread of every reconciliation shows its picture and a
missing picture only ever means that drawing it failed.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from agent.domain import Outcome

WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.0, 150
"""The card's size: 1200 x 600 pixels, sharp in a Slack thread and its preview."""
MAX_CURRENCY_PANELS = 5
"""Panels of currencies beside the counts; the busiest currencies are shown, the rest named."""
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
    """`outcome`'s chart as PNG bytes of 1200 x 600 pixels: left, horizontal bars of findings
    per category labelled with their counts; right, one panel per currency with the absolute
    difference per category on its own scale. Without findings, a card that says so."""
    return render(chart_data(outcome))


def render(data: ChartData) -> bytes:
    """Draw `data` (see `render_chart`) as PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, facecolor=BACKGROUND)
    FigureCanvasAgg(figure)
    if data.total:
        _draw_findings(figure, data)
    else:
        _draw_nothing(figure, data)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, facecolor=BACKGROUND, metadata={"Software": None})
    return buffer.getvalue()


def _draw_findings(figure: Any, data: ChartData) -> None:
    """The counts panel and the currency panels, sharing the category rows."""
    counts = _capped(data.counts)
    names = list(counts)
    shown = list(data.amounts)[:MAX_CURRENCY_PANELS]
    hidden = len(data.amounts) - len(shown)
    figure.set_layout_engine("constrained", w_pad=0.04, h_pad=0.04, wspace=0.02)
    ratios = [2.2] + [1.0] * max(len(shown), 1)
    axes = figure.subplots(1, len(ratios), sharey=True, gridspec_kw={"width_ratios": ratios})
    rows = list(range(len(names)))
    left = axes[0]
    values = [counts[n] for n in names]
    bars = left.barh(rows, values, color=COUNT_COLOUR, height=0.7)
    left.bar_label(bars, labels=[f"{v:,}" for v in values], padding=2, fontsize=6.5, color=INK)
    left.set_yticks(rows, [_plain(n, MAX_LABEL) for n in names], fontsize=6.5, color=INK)
    left.invert_yaxis()
    left.set_xlim(0, max(values) * 1.18)
    _style(left, "Findings per category")
    for index, currency in enumerate(shown):
        axis = axes[index + 1]
        per_category = _capped_amounts(data.amounts[currency], names)
        amounts = [float(per_category.get(n, 0)) for n in names]
        colour = AMOUNT_COLOURS[index % len(AMOUNT_COLOURS)]
        drawn = axis.barh(rows, amounts, color=colour, height=0.7)
        labels = [_compact(per_category[n]) if n in per_category else "" for n in names]
        axis.bar_label(drawn, labels=labels, padding=2, fontsize=6, color=INK)
        axis.set_xlim(0, max(amounts) * 1.45)
        axis.tick_params(axis="y", length=0)
        _style(axis, _plain(currency, 12))
    if not shown:
        axes[1].text(
            0.5,
            0.5,
            "No amounts:\nthese findings\nconcern no\ndifference in money",
            ha="center",
            va="center",
            fontsize=7,
            color=MUTED,
            transform=axes[1].transAxes,
        )
        _style(axes[1], "Amounts")
        axes[1].set_xticks([])
    figure.suptitle(
        _plain(
            f"{data.investigation_id} · revision {data.revision} · {data.total:,} findings in "
            f"{len(data.counts)} categories · amounts in {len(data.amounts)} currencies"
        ),
        fontsize=9,
        fontweight="bold",
        color=INK,
    )
    note = "Right: absolute difference between expected and found, one scale per currency."
    if hidden:
        note += (
            f" {hidden} more {'currency' if hidden == 1 else 'currencies'} in the exceptions file."
        )
    figure.supxlabel(note, fontsize=6, color=MUTED)


def _draw_nothing(figure: Any, data: ChartData) -> None:
    """A card saying there is nothing to draw (rather than empty axes)."""
    figure.text(
        0.5,
        0.58,
        "No findings",
        ha="center",
        va="center",
        fontsize=28,
        fontweight="bold",
        color=COUNT_COLOUR,
    )
    figure.text(
        0.5,
        0.38,
        _plain(
            f"{data.investigation_id} · revision {data.revision}: 0 findings, "
            "so there is nothing to chart."
        ),
        ha="center",
        va="center",
        fontsize=9,
        color=INK,
    )


def _style(axis: Any, title: str) -> None:
    """Dark text on white, a light grid, no box: the same look in every panel."""
    axis.set_facecolor(BACKGROUND)
    axis.set_title(title, fontsize=7.5, color=INK, fontweight="bold")
    axis.tick_params(axis="x", labelsize=5.5, colors=MUTED)
    axis.tick_params(axis="y", colors=INK)
    axis.grid(axis="x", color=GRID, linewidth=0.5)
    axis.set_axisbelow(True)
    for side in ("top", "right", "left"):
        axis.spines[side].set_visible(False)
    axis.spines["bottom"].set_color(GRID)
    axis.xaxis.set_major_formatter(_tick_formatter())
    axis.locator_params(axis="x", nbins=3)


def _tick_formatter() -> Any:
    """Axis ticks written as the bar labels are (`12k`, `1.5M`)."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: _compact(Decimal(str(value))) if value else "0")


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


def _plain(text: str, limit: int = MAX_LABEL * 4) -> str:
    """Text drawn as it is: cut to `limit` characters, and `$` escaped so a currency such as
    `$` never starts matplotlib's math mode."""
    cut = text if len(text) <= limit else text[: limit - 1] + "…"
    return cut.replace("$", r"\$")


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
