"""A judge asked N times per case (`--judge-samples N`): how much of the uncertainty of its
mean score over cases is the cases and how much its own call-to-call variation, from each
case's N verdict scores (`stats.variance_split`, Miller 2024, section 3)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from visioneval.evaluators.metrics import JudgeVariation, VarianceComponent
from visioneval.stats.variance_split import TARGET_SHARE, Part, split

ONE_SAMPLE = "one verdict per case (--judge-samples 1)"
NO_INTERVAL = "most bootstrap resamples gave no value (the cases and the verdicts hardly vary)"


def judge_variation(scores: Sequence[Sequence[float]], samples: int
                    ) -> tuple[JudgeVariation | None, str | None]:
    """(the split, None) or (None, why not). `scores`: per processed case, its usable
    verdicts' weighted scores (0-1); `samples`: the verdicts asked per case. A case with
    fewer than two is left out and counted."""
    if samples < 2:
        return None, ONE_SAMPLE
    kept = [list(case) for case in scores if len(case) >= 2]
    left_out = len(scores) - len(kept)
    if len(kept) < 2:
        fewer = f", {left_out} with fewer left out" if left_out else ""
        return None, (f"{len(kept)} case{'s' if len(kept) != 1 else ''} with two usable "
                      f"verdicts or more (2 are needed){fewer}")
    sums = np.array([math.fsum(case) for case in kept])
    squares = np.array([math.fsum(v * v for v in case) for case in kept])
    counts = np.array([len(case) for case in kept], dtype=np.float64)
    found = split(sums, squares, counts)
    assert found is not None  # two cases or more
    if not math.isfinite(found.within_share.value):  # no variance to share out
        return None, (f"neither the {found.items} cases' scores nor their verdicts vary: "
                      "every verdict gave the same score")
    variance = found.variance_of_score(found.items, found.answers_per_item)
    need = found.answers_for_share(TARGET_SHARE)
    return JudgeVariation(
        cases=found.items, left_out=left_out, samples_per_case=found.answers_per_item,
        mean_score=math.fsum(float(s) / float(c) for s, c in zip(sums, counts, strict=True))
        / found.items,
        mean_score_se=None if variance is None else math.sqrt(variance),
        between=_component(found.between), within=_component(found.within),
        within_share=_component(found.within_share), target_share=TARGET_SHARE,
        samples_for_target=need,
        samples_for_target_unavailable=None if need is not None else
        "the cases' scores do not differ beyond the judge's own variation: no number of "
        "verdicts per case brings it under the target"), None


def _component(part: Part) -> VarianceComponent:
    if part.ci95 is None:
        return VarianceComponent(value=part.value, ci95_unavailable=NO_INTERVAL)
    return VarianceComponent(value=part.value, ci95=part.ci95)
