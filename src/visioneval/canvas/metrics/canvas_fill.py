"""Canvas fill: the share of the generated canvas covered by its foreground boxes.

CANVAS's definition (kixlab/canvas `evaluation/metrics/canvas_fill_metric.py@0fe246c0`),
on the generated file only:

- canvas = the first box with depth == 1, else the largest box (w * h);
- a canvas of zero width or height gives no value;
- canvas_area = max(w * h, 1.0) in normalised units (so it is 1 unless the canvas box is
  larger than the frame);
- dropped: the canvas box itself and every box with |w - W| < 1e-2 and |h - H| < 1e-2;
- fill = min(union area of the rest / canvas_area, 1), rounded to 4 decimals (no boxes
  left: 0.0). The union is not clipped to the canvas.

Kept for parity: in a `document`-shaped file the frame sits at depth 2 (document 0,
page 1, and pages have no bounding box), so the largest box is the canvas. In a
`nodes`-shaped file depth 1 is the frame's first child, and the frame itself (depth 0)
then stays in the union, which usually makes the fill 1.0.
"""

from __future__ import annotations

import numpy as np

from visioneval.canvas.metrics import Absent
from visioneval.canvas.metrics.geometry import union_area


def canvas_index(xywh: np.ndarray, depth: np.ndarray) -> int:
    ones = np.flatnonzero(depth == 1)
    if len(ones):
        return int(ones[0])
    return int(np.argmax(xywh[:, 2] * xywh[:, 3]))  # first of equal maxima, like max()


def canvas_fill(xywh: np.ndarray, depth: np.ndarray) -> dict[str, float | Absent]:
    xywh = np.asarray(xywh, dtype=np.float64).reshape(-1, 4)
    if len(xywh) == 0:
        return {"canvas_fill": 0.0}
    c = canvas_index(xywh, np.asarray(depth))
    cw, ch = xywh[c, 2], xywh[c, 3]
    if cw == 0 or ch == 0:
        return {"canvas_fill": Absent("the canvas box has zero width or height")}
    canvas_area = max(float(cw * ch), 1.0)
    keep = ~((np.abs(xywh[:, 2] - cw) < 1e-2) & (np.abs(xywh[:, 3] - ch) < 1e-2))
    keep[c] = False
    if not keep.any():
        return {"canvas_fill": 0.0}
    ratio = min(union_area(xywh[keep]) / float(canvas_area), 1.0)
    return {"canvas_fill": round(ratio, 4)}
