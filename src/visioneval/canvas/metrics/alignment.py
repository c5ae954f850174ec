"""Group alignment: do GT and generated boxes line up in the same groups?

CANVAS's definition (kixlab/canvas `evaluation/alignment/group_alignment.py@b6681ee5`):

- each box goes into six buckets keyed (type, int(round(coord / 0.02))) for type in
  x_left (x), x_center (x + w/2), x_right (x + w), y_top (y), y_center (y + h/2),
  y_bottom (y + h). The buckets are a fixed grid, not clusters: 0.011 and 0.029 share
  bucket 1, 0.031 is in bucket 2. Python's round() rounds halves to even (np.rint too);
- a bucket with at least 2 members is a group; its box is the union bounding box of its
  members. Groups keep the order in which their bucket was first filled (box order, then
  the six types in the order above), which decides ties in the matching;
- GT and generated groups are matched by `linear_sum_assignment` on 1 - IoU of the group
  boxes, keeping pairs with IoU > 0; `correct` = kept pairs of the same type;
- P = correct / #gen groups (1.0 without gen groups), R = correct / #GT groups (1.0
  without GT groups), F1 = 2PR / (P + R) (0.0 when P + R = 0), each rounded to 4 decimals.

The reference then writes its P and R under `precision`/`recall`, which the layout metric
overwrites; they are kept here as `alignment_precision` and `alignment_recall`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from visioneval.canvas.metrics.geometry import iou_matrix

TOLERANCE = 0.02
MIN_ELEMENTS_PER_GROUP = 2
TYPES = ("x_left", "x_center", "x_right", "y_top", "y_center", "y_bottom")


@dataclass(frozen=True, slots=True)
class Groups:
    """Alignment groups in the reference's order."""

    kind: np.ndarray  # (G,) index into TYPES
    bucket: np.ndarray  # (G,) grid index
    box: np.ndarray  # (G, 4) union box x, y, w, h
    members: list[np.ndarray]  # box indices per group

    def __len__(self) -> int:
        return len(self.kind)

    def type_names(self) -> list[str]:
        return [TYPES[k] for k in self.kind]


def edges(xywh: np.ndarray) -> np.ndarray:
    """(N, 6) coordinates in TYPES order."""
    x, y, w, h = xywh[:, 0], xywh[:, 1], xywh[:, 2], xywh[:, 3]
    return np.stack([x, x + w / 2, x + w, y, y + h / 2, y + h], axis=1)


def build_groups(xywh: np.ndarray, tol: float = TOLERANCE,
                 min_members: int = MIN_ELEMENTS_PER_GROUP) -> Groups:
    xywh = np.asarray(xywh, dtype=np.float64).reshape(-1, 4)
    n = len(xywh)
    if n == 0:
        return Groups(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 4)), [])
    idx = np.rint(edges(xywh) / tol).astype(np.int64)  # == int(round(c / tol)) per value
    kind = np.broadcast_to(np.arange(6), (n, 6))
    # One integer key per (type, bucket); the flattened row-major order is the reference's
    # insertion order (box by box, six types each).
    lo = idx.min()
    span = idx.max() - lo + 1
    keys = (kind * span + (idx - lo)).ravel()
    uniq, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True,
                                             return_counts=True)
    order = np.argsort(first, kind="stable")
    order = order[counts[order] >= min_members]
    if len(order) == 0:
        return Groups(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 4)), [])
    box_of_entry = np.repeat(np.arange(n), 6)
    # Union boxes by group: min of x0/y0 and max of x1/y1 over members.
    x0 = xywh[box_of_entry, 0]
    y0 = xywh[box_of_entry, 1]
    x1 = x0 + xywh[box_of_entry, 2]
    y1 = y0 + xywh[box_of_entry, 3]
    g = len(uniq)
    mins = np.full((g, 2), np.inf)
    maxs = np.full((g, 2), -np.inf)
    np.minimum.at(mins, inverse, np.stack([x0, y0], axis=1))
    np.maximum.at(maxs, inverse, np.stack([x1, y1], axis=1))
    box = np.concatenate([mins, maxs - mins], axis=1)[order]
    sorter = np.argsort(inverse, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts)])
    members = [box_of_entry[sorter[bounds[u]:bounds[u + 1]]] for u in order]
    return Groups(kind=uniq[order] // span, bucket=uniq[order] % span + lo, box=box,
                  members=members)


@dataclass(frozen=True, slots=True)
class GroupMatch:
    gt: np.ndarray
    gen: np.ndarray
    iou: np.ndarray
    correct: np.ndarray  # bool per kept pair


def match_groups(gt: Groups, gen: Groups) -> GroupMatch:
    empty = np.zeros(0, dtype=np.int64)
    if len(gt) == 0 or len(gen) == 0:
        return GroupMatch(empty, empty, np.zeros(0), np.zeros(0, bool))
    iou = iou_matrix(gt.box, gen.box)
    rows, cols = linear_sum_assignment(1.0 - iou)
    keep = iou[rows, cols] > 0.0
    rows, cols = rows[keep], cols[keep]
    return GroupMatch(rows, cols, iou[rows, cols], gt.kind[rows] == gen.kind[cols])


def alignment(gt_xywh: np.ndarray, gen_xywh: np.ndarray, tol: float = TOLERANCE
              ) -> tuple[dict[str, float | int], Groups, Groups, GroupMatch]:
    gt, gen = build_groups(gt_xywh, tol), build_groups(gen_xywh, tol)
    match = match_groups(gt, gen)
    correct = int(match.correct.sum())
    p = correct / len(gen) if len(gen) else 1.0
    r = correct / len(gt) if len(gt) else 1.0
    f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
    values = {"alignment_precision": round(p, 4), "alignment_recall": round(r, 4),
              "alignment_f1": round(f1, 4), "num_gt_groups": len(gt),
              "num_gen_groups": len(gen), "num_correct_aligned": correct}
    return values, gt, gen, match
