"""Layout overlap: Hungarian matching of GT and generated boxes on 1 - IoU.

CANVAS's definitions (kixlab/canvas `evaluation/layout/hungarian_iou.py@b6681ee5` and the
`layout_iou_metric.py` version behind the committed `evaluation_results.csv`):

- cost = 1 - IoU for every (GT, generated) pair, solved by
  `scipy.optimize.linear_sum_assignment`; no IoU threshold, so every box of the smaller
  side is matched, and `num_matched = min(n_gt, n_gen)`;
- `mean_iou` = mean IoU over the matched pairs (0.0 with no pairs);
- `precision = num_matched / n_gen` (1.0 if n_gen = 0), `recall = num_matched / n_gt`
  (1.0 if n_gt = 0): counts only, so both reach 1.0 with zero overlap;
- `layout_overlap` = 2PR / (P + R) of the P and R already rounded to 4 decimals;
- `element_count_ratio = min(1, n_gen / n_gt)`; every value rounded to 4 decimals.

The scores added beside these (IoU >= 0.5 matching, block match, position, colour) are in
`components.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from visioneval.canvas.metrics import Absent
from visioneval.canvas.metrics.geometry import iou_matrix


@dataclass(frozen=True, slots=True)
class Matching:
    """A 1:1 assignment of GT rows to generated columns and the IoU of every pair."""

    iou: np.ndarray  # (n_gt, n_gen)
    gt: np.ndarray  # matched GT indices
    gen: np.ndarray  # matched generated indices, aligned with `gt`

    @property
    def pair_iou(self) -> np.ndarray:
        return self.iou[self.gt, self.gen]


def hungarian(gt: np.ndarray, gen: np.ndarray) -> Matching:
    iou = iou_matrix(gt, gen)
    if iou.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Matching(iou, empty, empty)
    rows, cols = linear_sum_assignment(1.0 - iou)
    return Matching(iou, rows, cols)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def layout_iou(gt: np.ndarray, gen: np.ndarray, match: Matching | None = None
               ) -> dict[str, float | int | Absent]:
    """CANVAS's metrics. `gt`, `gen`: (N, 4) normalised boxes, every kept box."""
    match = match or hungarian(gt, gen)
    n_gt, n_gen = len(gt), len(gen)
    matched = len(match.gt)
    ious = match.pair_iou
    precision = round(matched / n_gen if n_gen else 1.0, 4)
    recall = round(matched / n_gt if n_gt else 1.0, 4)
    out: dict[str, float | int | Absent] = {
        "num_gt": n_gt, "num_gen": n_gen, "num_matched": matched,
        "num_unmatched_gt": n_gt - matched, "num_unmatched_gen": n_gen - matched,
        "mean_iou": round(float(ious.mean()) if matched else 0.0, 4),
        "precision": precision, "recall": recall,
        "layout_overlap": round(_f1(precision, recall), 4),
    }
    out["element_count_ratio"] = (round(min(1.0, n_gen / n_gt), 4) if n_gt else
                                  Absent("the GT file has no visible boxes"))
    return out
