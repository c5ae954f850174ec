"""A matplotlib figure as inline SVG, for the layout report's pictures only: the run
report's charts are drawn without matplotlib (`report.charts`), so importing this module
(and matplotlib with it) is the layout report's cost alone."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")  # no display; SVG only
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                     "axes.spines.right": False})


def svg(fig: Figure) -> str:
    """The figure as an <svg> element (text kept as text), the figure closed."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]
