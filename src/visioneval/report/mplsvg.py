"""Histograms drawn by matplotlib as inline SVG (the layout report's distributions only):
the other charts are drawn without matplotlib (`report.charts`), so importing this module
(and matplotlib with it) is the cost of a page with histograms alone."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")  # no display; SVG only
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from visioneval.core.figures import Histograms  # noqa: E402
from visioneval.report.charts import PALETTE  # noqa: E402

plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                     "axes.spines.right": False})
COLUMNS = 4  # panels a row


def histograms(found: Histograms) -> str:
    """One panel per histogram, one palette colour per group (the same group the same
    colour in every panel), the key in the first panel; values within [0, 1] are binned
    over [0, 1]."""
    rows = (len(found.panels) + COLUMNS - 1) // COLUMNS
    fig, axes = plt.subplots(rows, COLUMNS, figsize=(3.0 * COLUMNS, 2.2 * rows),
                             squeeze=False)
    for ax, panel in zip(axes.flat, found.panels, strict=False):
        for i, (name, values) in enumerate(panel.groups):
            if values:
                ax.hist(values, bins=found.bins, range=(0, 1) if max(values) <= 1 else None,
                        alpha=0.7, label=f"{name} (n={len(values)})",
                        color=PALETTE[i % len(PALETTE)])
        ax.set_title(panel.title, fontsize=9)
        ax.set_ylabel(found.ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(found.panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return svg(fig)


def svg(fig: Figure) -> str:
    """The figure as an <svg> element (text kept as text), the figure closed."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]
