"""Charts as inline SVG via matplotlib: labelled axes, values on the bars, readable at a
glance, no network needed to view them."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")  # no display; SVG only
import matplotlib.pyplot as plt  # noqa: E402

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3")
plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                     "axes.spines.right": False})


def svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def grouped_bars(categories: Sequence[str], series: Mapping[str, Sequence[float | None]],
                 title: str, ylabel: str, ymax: float | None = 100.0) -> str:
    """Bars per category, one colour per series, the value printed on each bar."""
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(categories) * max(1, len(series)) / 2
                                        + 2), 2.8))
    for i, (name, values) in enumerate(series.items()):
        xs = [c + (i - (len(series) - 1) / 2) * width for c in range(len(categories))]
        shown = [v if v is not None else 0 for v in values]
        bars = ax.bar(xs, shown, width * 0.95, label=name, color=PALETTE[i % len(PALETTE)])
        for bar, value in zip(bars, values, strict=True):
            text = "n/a" if value is None else f"{value:.1f}" if ymax == 100 else f"{value:.2f}"
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=7, xytext=(0, 1),
                        textcoords="offset points")
    ax.set_xticks(range(len(categories)), categories)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10, loc="left")
    if ymax is not None:
        ax.set_ylim(0, ymax * 1.1)
    if len(series) > 1:
        ax.legend(frameon=False, fontsize=8, ncols=min(4, len(series)),
                  loc="upper left", bbox_to_anchor=(0, -0.15))
    return svg(fig)


def stacked_bars(categories: Sequence[str], parts: Mapping[str, Sequence[float]], title: str,
                 xlabel: str = "percent") -> str:
    """Horizontal 100% bars: one row per category, one colour per part."""
    fig, ax = plt.subplots(figsize=(6.0, 0.45 * len(categories) + 1.2))
    left = [0.0] * len(categories)
    for i, (name, values) in enumerate(parts.items()):
        bars = ax.barh(range(len(categories)), values, left=left, label=name,
                       color=PALETTE[i % len(PALETTE)])
        for bar, value in zip(bars, values, strict=True):
            if value >= 7:
                ax.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2,
                        f"{value:.0f}", ha="center", va="center", fontsize=7, color="white")
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_yticks(range(len(categories)), categories)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10, loc="left")
    ax.legend(frameon=False, fontsize=8, ncols=len(parts), loc="upper left",
              bbox_to_anchor=(0, -0.35 if len(categories) < 4 else -0.12))
    return svg(fig)


def heatmap(rows: Sequence[str], columns: Sequence[str], counts: Sequence[Sequence[int]],
            title: str, xlabel: str, ylabel: str) -> str:
    """A count matrix with the counts written in the cells (a confusion view)."""
    fig, ax = plt.subplots(figsize=(0.55 * len(columns) + 2.2, 0.45 * len(rows) + 1.4))
    ax.imshow(counts, cmap="Blues", aspect="auto")
    peak = max((max(r) for r in counts if r), default=0) or 1
    for i, row in enumerate(counts):
        for j, value in enumerate(row):
            ax.text(j, i, str(value), ha="center", va="center", fontsize=8,
                    color="white" if value > peak / 2 else "black")
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10, loc="left")
    ax.spines[:].set_visible(False)
    return svg(fig)


def evaluator_figure(labels: Sequence[str], rates: Sequence[float | None], title: str):
    """Horizontal bars, one row per evaluator: labels such as `script:uv run check.py` are
    long, and rows never overlap where rotated x labels did. Long labels wrap (two lines,
    then an ellipsis); a rate that could not be computed says n/a."""
    import textwrap

    shown = []
    for label in labels:
        lines = textwrap.wrap(label, 38, break_on_hyphens=False) or [""]
        if len(lines) > 2:
            lines = [lines[0], lines[1][:37] + "…"]
        shown.append("\n".join(lines))
    heights = [0.22 * (s.count("\n") + 1) + 0.14 for s in shown]
    fig, ax = plt.subplots(figsize=(6.4, sum(heights) + 1.0))
    ys = range(len(labels))
    values = [r if r is not None else 0 for r in rates]
    bars = ax.barh(ys, values, 0.7, color=PALETTE[0])
    for bar, rate in zip(bars, rates, strict=True):
        ax.annotate("n/a (no result)" if rate is None else f"{rate:.1f}",
                    (bar.get_width(), bar.get_y() + bar.get_height() / 2), ha="left",
                    va="center", fontsize=7, xytext=(2, 0), textcoords="offset points")
    ax.set_yticks(ys, shown, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 110)
    ax.set_xlabel("percent")
    ax.set_title(title, fontsize=10, loc="left")
    return fig


def evaluator_bars(labels: Sequence[str], rates: Sequence[float | None], title: str) -> str:
    """The pass rate per evaluator as inline SVG."""
    return svg(evaluator_figure(labels, rates, title))
