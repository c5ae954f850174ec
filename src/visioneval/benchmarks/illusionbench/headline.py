"""An IllusionBench run's main number: the recall of its first protocol (the original rule
when it ran) on its first subset, both tasks pooled when the run asked both (`pooled`: its
interval draws images, each with its shape and its scene answer), else the one task asked.
The label names the protocol and subset, and how many other subsets the report has."""

from __future__ import annotations

from typing import Any

from visioneval.benchmarks.illusionbench.spec import SUBSETS
from visioneval.core.headline import Headline, from_block


def headline(metrics: dict[str, Any]) -> Headline:
    protocols = [p for p, block in metrics.items() if isinstance(block, dict)]
    if not protocols:
        return Headline("recall", unavailable="no protocol in metrics.json")
    protocol = protocols[0]
    blocks = metrics[protocol]
    subsets = [s for s in SUBSETS if isinstance(blocks.get(s), dict)]
    if not subsets:
        return Headline(f"recall ({protocol})", unavailable="no subset in metrics.json")
    subset = subsets[0]
    block = blocks[subset]
    more = f"; +{len(subsets) - 1} subsets" if len(subsets) > 1 else ""
    if isinstance(block.get("pooled"), dict):
        return from_block(f"recall {subset}, both tasks ({protocol}){more}", block["pooled"],
                          "recall")
    task = "shape" if isinstance(block.get("shape"), dict) else "scene"
    return from_block(f"{task} recall {subset} ({protocol}){more}", block.get(task), "recall")
