"""A NaturalBench run's main number: G-Acc (the paper's headline: groups whose four answers
are all right) of its first protocol (the paper's when it ran) under its first label set."""

from __future__ import annotations

from typing import Any

from visioneval.core.headline import Headline, from_block


def headline(metrics: dict[str, Any]) -> Headline:
    label_sets = metrics.get("label_sets") or []
    protocols = metrics.get("protocols") or []
    if not label_sets or not protocols:
        return Headline("G-Acc", unavailable="no protocol in metrics.json")
    block = ((metrics.get("results") or {}).get(label_sets[0]) or {}).get(protocols[0])
    if isinstance(block, dict):
        block = {**block, "n": block.get("n_groups")}
    suffix = "" if label_sets[0] == "original" else ", answer columns"
    return from_block(f"G-Acc ({protocols[0]}{suffix})", block, "g_acc")
