"""SalBench metrics, as the reference aggregates them (lmms-eval salbench utils.py):

- exact_match: mean over samples of set equality between prediction and answer;
- per_class: TP/FP/FN pooled over samples for each class, P = tp/(tp+fp+1e-8),
  R = tp/(tp+fn+1e-8), F1 = 2PR/(P+R+1e-8);
- macro_f1: the plain mean of per-class F1 over the whole class list (3 for P3, 7 for O3):
  the leaderboard's "F1 Overall" and the number the paper's abstract quotes;
- sample_f1: per-sample set F1 averaged (lmms-eval reports it; it is not the paper's F1).

Failed requests are counted in n_errors and left out of every score.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from visioneval.benchmarks.salbench.parse import target_labels

EPS = 1e-8
PARSERS = ("strict", "lenient")


def sample_scores(pred: set[str], gold: set[str]) -> dict[str, float]:
    """Per-sample scores with the reference's guards (a prediction is never an empty set)."""
    matches = len(pred & gold)
    precision = matches / (len(pred) + EPS)
    recall = matches / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall + EPS)
    return {"exact_match": float(pred == gold), "sample_f1": f1}


def class_scores(pairs: Sequence[tuple[set[str], set[str]]], classes: Sequence[str]
                 ) -> dict[str, dict[str, float]]:
    out = {}
    for label in classes:
        tp = sum(1 for pred, gold in pairs if label in pred and label in gold)
        fp = sum(1 for pred, gold in pairs if label in pred and label not in gold)
        fn = sum(1 for pred, gold in pairs if label not in pred and label in gold)
        precision = tp / (tp + fp + EPS)
        recall = tp / (tp + fn + EPS)
        out[label] = {
            "precision": precision,
            "recall": recall,
            "f1": 2 * precision * recall / (precision + recall + EPS),
            "support": tp + fn,
            "predicted": tp + fp,
        }
    return out


def summarize_parser(pairs: Sequence[tuple[set[str], set[str]]], classes: Sequence[str],
                     n_errors: int, per_sample: Sequence[dict[str, float]] | None = None
                     ) -> dict[str, Any]:
    """Metrics for one parser over one config's scored samples. `per_sample`: the scores
    computed when each answer was parsed (a record keeps class labels exactly but may elide
    other pieces, so set sizes are taken from there); computed from `pairs` when None."""
    n = len(pairs)
    base: dict[str, Any] = {"n": n, "n_errors": n_errors,
                            "n_unparsed": sum(1 for pred, _ in pairs if not pred & set(classes))}
    if n == 0:
        base["unavailable"] = f"no scored samples ({n_errors} failed requests)"
        return base
    if per_sample is None:
        per_sample = [sample_scores(pred, gold) for pred, gold in pairs]
    per_class = class_scores(pairs, classes)
    return base | {
        "exact_match": sum(s["exact_match"] for s in per_sample) / n,
        "macro_f1": sum(c["f1"] for c in per_class.values()) / len(classes),
        "sample_f1": sum(s["sample_f1"] for s in per_sample) / n,
        "per_class": per_class,
    }


def summarize_config(records: Iterable[Any], classes: Sequence[str]) -> dict[str, Any]:
    """`{"strict": {...}, "lenient": {...}}` for one config's records."""
    records = list(records)
    n_errors = sum(1 for r in records if not r.ok)
    scored = [r for r in records if r.ok]
    out = {}
    for parser in PARSERS:
        pairs = [(set(r.parsed[parser]), target_labels(r.target)) for r in scored]
        per_sample = [r.scores.get(parser) or sample_scores(pred, gold)
                      for r, (pred, gold) in zip(scored, pairs, strict=True)]
        out[parser] = summarize_parser(pairs, classes, n_errors, per_sample)
    return out
