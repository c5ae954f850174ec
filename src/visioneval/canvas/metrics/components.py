"""Scores that unmatched or misplaced boxes cannot game (beyond CANVAS's metrics, reported beside
its metrics, never instead).

CANVAS's precision and recall count matches without looking at their overlap, so a
layout of the right number of boxes in the wrong places scores 1.0. Here a GT box and a
generated box only count as a match when their IoU is at least 0.5:

- matching: the 1:1 assignment with the most pairs of IoU >= 0.5, ties broken by the
  largest IoU sum (Hungarian on weights hit * (K + IoU), K = min(n_gt, n_gen) + 1, so one
  more hit always outweighs any IoU gain). Thresholding CANVAS's all-pairs matching
  afterwards (as CANVAS's later `component_similarity` does) can lose hits: it may trade a
  0.55 pair for two 0.3 pairs;
- the normalisation frame is left out on both sides: it always matches itself and, being
  the largest box, would dominate the area weighting;
- `iou50_precision = tp / n_gen`, `iou50_recall = tp / n_gt`,
  `iou50_f1 = 2 tp / (n_gt + n_gen)`;
- `block_match`: Design2Code's size score (NoviScl/Design2Code,
  `metrics/visual_score.py`): the area of matched boxes, both sides, over the area of all
  boxes, both sides: sum over hits (a_gt + a_gen) / (sum a_gt + sum a_gen). A missing or
  spurious large element costs in proportion to its area;
- `position_similarity`: Design2Code's position score, mean over hits of
  1 - max(|dcx|, |dcy|) of the box centres (normalised to the frame);
- `color_similarity`: Design2Code's colour score on the Figma solid fills instead of
  rendered text colour: mean over hits where both boxes have a solid fill of
  1 - CIEDE2000(gt, gen) / 100 (sRGB -> CIELAB with scikit-image), floored at 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment
from skimage.color import deltaE_ciede2000, rgb2lab

from visioneval.canvas.metrics import Absent
from visioneval.canvas.metrics.geometry import iou_matrix

IOU_THRESHOLD = 0.5


@dataclass(frozen=True, slots=True)
class Hits:
    """Thresholded pairs, as indices into the caller's full box arrays."""

    gt: np.ndarray
    gen: np.ndarray
    iou: np.ndarray


def threshold_match(gt: np.ndarray, gen: np.ndarray, gt_keep: np.ndarray,
                    gen_keep: np.ndarray, threshold: float = IOU_THRESHOLD) -> Hits:
    """Maximum set of 1:1 pairs with IoU >= threshold among the `keep` indices."""
    empty = np.zeros(0, dtype=np.int64)
    if len(gt_keep) == 0 or len(gen_keep) == 0:
        return Hits(empty, empty, np.zeros(0))
    iou = iou_matrix(gt[gt_keep], gen[gen_keep])
    hit = iou >= threshold
    if not hit.any():
        return Hits(empty, empty, np.zeros(0))
    # Only rows and columns with a candidate take part: a much smaller problem.
    rows = np.flatnonzero(hit.any(axis=1))
    cols = np.flatnonzero(hit.any(axis=0))
    sub = iou[np.ix_(rows, cols)]
    k = min(len(rows), len(cols)) + 1
    weight = np.where(sub >= threshold, k + sub, 0.0)
    r, c = linear_sum_assignment(weight, maximize=True)
    ok = sub[r, c] >= threshold
    r, c = rows[r[ok]], cols[c[ok]]
    return Hits(gt_keep[r], gen_keep[c], iou[r, c])


def component_scores(gt: np.ndarray, gen: np.ndarray, gt_keep: np.ndarray,
                     gen_keep: np.ndarray, gt_fill: np.ndarray | None = None,
                     gen_fill: np.ndarray | None = None, hits: Hits | None = None
                     ) -> dict[str, float | int | Absent]:
    """`gt`, `gen`: (N, 4) normalised boxes; `*_keep`: the indices that take part;
    `*_fill`: (N, 3) RGB 0..1 with NaN rows where a box has no solid fill."""
    hits = hits or threshold_match(gt, gen, gt_keep, gen_keep)
    n_gt, n_gen, tp = len(gt_keep), len(gen_keep), len(hits.gt)
    out: dict[str, float | int | Absent] = {"iou50_matched": tp}
    if n_gt + n_gen == 0:
        reason = "neither file has boxes besides the frame"
        return out | {k: Absent(reason) for k in (
            "iou50_precision", "iou50_recall", "iou50_f1", "block_match",
            "position_similarity", "color_similarity")}
    out["iou50_precision"] = (round(tp / n_gen, 4) if n_gen else
                              Absent("no generated boxes besides the frame"))
    out["iou50_recall"] = (round(tp / n_gt, 4) if n_gt else
                           Absent("no GT boxes besides the frame"))
    out["iou50_f1"] = round(2 * tp / (n_gt + n_gen), 4)

    area_gt = gt[:, 2] * gt[:, 3]
    area_gen = gen[:, 2] * gen[:, 3]
    total = area_gt[gt_keep].sum() + area_gen[gen_keep].sum()
    matched = area_gt[hits.gt].sum() + area_gen[hits.gen].sum()
    out["block_match"] = (round(float(matched / total), 4) if total > 0 else
                          Absent("every box has zero area"))
    if tp == 0:
        reason = f"no box pairs with IoU >= {IOU_THRESHOLD:g}"
        out["position_similarity"] = Absent(reason)
        out["color_similarity"] = Absent(reason)
        return out
    a, b = gt[hits.gt], gen[hits.gen]
    dcx = np.abs((a[:, 0] + a[:, 2] / 2) - (b[:, 0] + b[:, 2] / 2))
    dcy = np.abs((a[:, 1] + a[:, 3] / 2) - (b[:, 1] + b[:, 3] / 2))
    out["position_similarity"] = round(float(np.mean(1.0 - np.maximum(dcx, dcy))), 4)
    out["color_similarity"] = _colour(hits, gt_fill, gen_fill)
    return out


def _colour(hits: Hits, gt_fill: np.ndarray | None, gen_fill: np.ndarray | None
            ) -> float | Absent:
    if gt_fill is None or gen_fill is None:
        return Absent("no fill colours given")
    fa, fb = gt_fill[hits.gt], gen_fill[hits.gen]
    both = ~(np.isnan(fa).any(axis=1) | np.isnan(fb).any(axis=1))
    if not both.any():
        return Absent("no matched pair has a solid fill on both sides")

    lab_a = rgb2lab(np.clip(fa[both], 0, 1)[None])[0]
    lab_b = rgb2lab(np.clip(fb[both], 0, 1)[None])[0]
    sim = np.clip(1.0 - deltaE_ciede2000(lab_a, lab_b) / 100.0, 0.0, None)
    return round(float(sim.mean()), 4)
