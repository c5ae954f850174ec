"""A run's conditions in the order of its own accuracy, set beside a published order of the
same conditions (each `Condition.rank`): every curve gets its rank, and the run gets
Spearman's ρ between the two orders (ties take their mean rank, so a published tie costs
no agreement either way), with a percentile interval from the curves' bootstrap draws taken
together (draw i of every curve is one resample of the whole run, since the conditions'
trials are independent). The interval says how far the run's own order could move with
other draws of its trials; it holds nothing of the uncertainty in the published order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from visioneval.paradigms.fits import Fitted
from visioneval.paradigms.paradigm import Summary

FIGURE = {"estimate": "error", "choice": "threshold", "comparison": "jnd"}  # lower: better
NAME = "rank correlation with people's order (Spearman's ρ)"
FEWEST = 3  # conditions a rank correlation needs
FINITE = 0.95  # share of resamples with an order (not every figure tied) an interval needs
DIGITS = 12  # ρ of the same two orders is one number, however the sums were rounded


def ranked(fitted: Sequence[Fitted], kind: str) -> list[Fitted]:
    """Each curve with a figure gets its rank among them (1: the lowest figure, the most
    accurate; ties their mean rank): an estimate's curves always, others' when their
    conditions have published ranks."""
    if kind != "estimate" and all(f.curve.published_rank is None for f in fitted):
        return list(fitted)
    figure = FIGURE[kind]
    having = [i for i, f in enumerate(fitted) if getattr(f.curve, figure) is not None]
    ranks = rank_rows([[getattr(fitted[i].curve, figure) for i in having]])[0] if having \
        else []
    found = dict(zip(having, ranks, strict=True))
    return [Fitted(f.curve.model_copy(update={"rank": float(found[i])}), f.draws)
            if i in found else f for i, f in enumerate(fitted)]


def agreement(fitted: Sequence[Fitted], kind: str, ranked_by: str) -> list[Summary]:
    """Spearman's ρ between the run's order and the published one; none when no condition
    has a published rank."""
    figure = FIGURE[kind]
    published = [f for f in fitted if f.curve.published_rank is not None]
    if not published:
        return []
    pairs = [f for f in published if getattr(f.curve, figure) is not None]
    if len(pairs) < FEWEST:
        return [Summary(NAME, "", None, reason=f"{len(pairs)} condition(s) with a figure and "
                        f"a published rank; a rank correlation needs {FEWEST}")]
    people = rank_rows([[f.curve.published_rank for f in pairs]])[0]
    own = np.array([getattr(f.curve, figure) for f in pairs], dtype=np.float64)
    note = (f"the run's order, most accurate first: {_order(pairs, own)}; people's "
            f"({ranked_by or 'published'}): "
            f"{_order(pairs, np.array([f.curve.published_rank for f in pairs]))}")
    rho = _spearman(rank_rows(own[None, :]), people)[0]
    if not np.isfinite(rho):
        return [Summary(NAME, "", None, reason="every condition's figure is the same: the "
                        "run has no order to compare", note=note)]
    lengths = {len(f.draws) for f in pairs}
    interval = None
    if len(lengths) == 1 and 0 not in lengths:
        draws = np.array([f.draws for f in pairs], dtype=np.float64).T
        rhos = _spearman(rank_rows(draws), people)
        finite = rhos[np.isfinite(rhos)]
        if finite.size >= FINITE * rhos.size:
            low, high = np.percentile(finite, [2.5, 97.5])
            interval = (round(float(low), DIGITS), round(float(high), DIGITS))
        else:
            note += ("; no interval: in most resamples every figure was the same")
    return [Summary(NAME, "", round(float(rho), DIGITS), interval, note=note)]


def rank_rows(values: Sequence[Sequence[float | None]] | np.ndarray) -> np.ndarray:
    """Each row's values as ranks from 1 (the lowest), ties at their mean rank: the
    values below, plus half of those equal (itself included) and a half."""
    v = np.asarray(values, dtype=np.float64)
    below = (v[:, None, :] < v[:, :, None]).sum(axis=2)
    equal = (v[:, None, :] == v[:, :, None]).sum(axis=2)
    return below + (equal + 1) / 2


def _spearman(ranks: np.ndarray, people: np.ndarray) -> np.ndarray:
    """Pearson's correlation of each row of ranks with people's ranks (NaN for a row with
    no spread)."""
    a = ranks - ranks.mean(axis=1, keepdims=True)
    b = people - people.mean()
    spread = np.sqrt((a * a).sum(axis=1) * (b * b).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(spread > 0, (a * b).sum(axis=1) / np.where(spread > 0, spread, 1),
                        np.nan)


def _order(pairs: Sequence[Fitted], values: np.ndarray) -> str:
    """"a, b = c, d": the conditions by value, ties joined by "="."""
    order = np.argsort(values, kind="stable")
    out: list[list[str]] = []
    last = None
    for i in order:
        if last is not None and np.isclose(values[i], last):
            out[-1].append(pairs[i].curve.condition)
        else:
            out.append([pairs[i].curve.condition])
        last = values[i]
    return ", ".join(" = ".join(group) for group in out)
