"""Box geometry, vectorised: IoU matrices by broadcasting, exact union area of rectangles."""

from __future__ import annotations

import numpy as np


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box in `a` (N, 4) with every box in `b` (M, 4), as (N, M).

    Boxes are (x, y, w, h). Same arithmetic as the reference's `compute_iou`
    (intersection clipped at 0; a pair whose union is 0 has IoU 0)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    ax0, ay0 = a[:, 0:1], a[:, 1:2]
    ax1, ay1 = ax0 + a[:, 2:3], ay0 + a[:, 3:4]
    bx0, by0 = b[:, 0], b[:, 1]
    bx1, by1 = bx0 + b[:, 2], by0 + b[:, 3]
    iw = np.clip(np.minimum(ax1, bx1) - np.maximum(ax0, bx0), 0.0, None)
    ih = np.clip(np.minimum(ay1, by1) - np.maximum(ay0, by0), 0.0, None)
    inter = iw * ih
    union = (a[:, 2:3] * a[:, 3:4]) + (b[:, 2] * b[:, 3]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    return iou


def union_area(boxes: np.ndarray) -> float:
    """Exact area covered by the union of axis-aligned rectangles (x, y, w, h).

    Coordinate compression: the distinct x and y edges cut the plane into a grid of
    cells; each box adds +1 to the cells it covers through a 2-D difference array
    (four corner updates, then cumulative sums), and the area is the sum of the covered
    cells' areas. O(N + K^2) with K <= 2N distinct edges; boxes of zero width or height
    cover nothing. A negative width or height spans back from x or y, as shapely's
    `box(x, y, x + w, y + h)` (what CANVAS's canvas fill unions) normalises its corners: its area is
    |w| * |h|."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    boxes = np.concatenate([np.minimum(boxes[:, :2], boxes[:, :2] + boxes[:, 2:]),
                            np.abs(boxes[:, 2:])], axis=1)
    boxes = boxes[(boxes[:, 2] > 0) & (boxes[:, 3] > 0)]
    if len(boxes) == 0:
        return 0.0
    x0, y0 = boxes[:, 0], boxes[:, 1]
    x1, y1 = x0 + boxes[:, 2], y0 + boxes[:, 3]
    xs, xi = np.unique(np.concatenate([x0, x1]), return_inverse=True)
    ys, yi = np.unique(np.concatenate([y0, y1]), return_inverse=True)
    n = len(boxes)
    i0, i1 = xi[:n], xi[n:]
    j0, j1 = yi[:n], yi[n:]
    diff = np.zeros((len(xs), len(ys)), dtype=np.int32)
    np.add.at(diff, (i0, j0), 1)
    np.add.at(diff, (i1, j0), -1)
    np.add.at(diff, (i0, j1), -1)
    np.add.at(diff, (i1, j1), 1)
    cover = diff.cumsum(axis=0).cumsum(axis=1)[:-1, :-1] > 0
    return float(np.diff(xs) @ cover @ np.diff(ys))
