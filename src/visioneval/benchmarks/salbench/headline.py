"""A SalBench run's main number: the paper's "F1 Overall" (strict macro F1, the figure its
abstract and leaderboard quote) of the run's one config, or of one image set's tasks pooled
(`pooled_tasks`: its interval draws scenes, each with all its answers). A run over both image
sets shows the first's (spec.CONFIGS' order) and its label says the other is in the report."""

from __future__ import annotations

from typing import Any

from visioneval.benchmarks.salbench.metrics import HEADLINE
from visioneval.benchmarks.salbench.spec import CONFIGS
from visioneval.core.headline import Headline, from_block


def headline(metrics: dict[str, Any]) -> Headline:
    configs = [c for c in CONFIGS if isinstance(metrics.get(c), dict)]
    if not configs:
        return Headline("macro F1", unavailable="no SalBench config in metrics.json")
    image_sets = list(dict.fromkeys(CONFIGS[c].dataset for c in configs))
    first = image_sets[0]
    mine = [c for c in configs if CONFIGS[c].dataset == first]
    others = f"; {', '.join(image_sets[1:])} in the report" if len(image_sets) > 1 else ""
    pooled = metrics[mine[0]].get("pooled_tasks")
    if len(mine) > 1 and isinstance(pooled, dict):
        return from_block(f"macro F1, {first} {len(mine)} tasks pooled{others}", pooled,
                          "macro_f1")
    more = f" (+{len(mine) - 1} tasks)" if len(mine) > 1 else ""
    return from_block(f"macro F1, {mine[0]}{more}{others}", metrics[mine[0]].get(HEADLINE),
                      "macro_f1")
