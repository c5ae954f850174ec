"""A CV-Bench run's main number: the paper's combined score, 1/2 * [(ADE20K + COCO)/2 +
Omni3D], of its first protocol (the paper's when it ran) under its first label set."""

from __future__ import annotations

from typing import Any

from visioneval.core.headline import Headline, from_block


def headline(metrics: dict[str, Any]) -> Headline:
    label_sets = metrics.get("label_sets") or []
    protocols = metrics.get("protocols") or []
    if not label_sets or not protocols:
        return Headline("CV-Bench", unavailable="no protocol in metrics.json")
    block = ((metrics.get("results") or {}).get(label_sets[0]) or {}).get(protocols[0])
    suffix = "" if label_sets[0] == "original" else ", corrected labels"
    return from_block(f"CV-Bench ({protocols[0]}{suffix})", block, "cv_bench")
