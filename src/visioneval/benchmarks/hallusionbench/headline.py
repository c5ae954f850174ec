"""A HallusionBench run's main number: the aAcc (question accuracy) of its first protocol
(the paper's when it ran), with its interval over sets; the label names the protocol and
how the answers were read."""

from __future__ import annotations

from typing import Any

from visioneval.core.headline import Headline, from_block


def headline(metrics: dict[str, Any]) -> Headline:
    blocks = metrics.get("protocols")
    if not isinstance(blocks, dict) or not blocks:
        return Headline("aAcc", unavailable="no protocol in metrics.json")
    protocol, block = next(iter(blocks.items()))
    if not isinstance(block, dict):
        return Headline(f"aAcc ({protocol})", unavailable="no block in metrics.json")
    overall = dict(block.get("overall") or {}) | {"n": block.get("n")}
    if "unavailable" in block:
        overall["unavailable"] = block["unavailable"]
    reading = " by the grader" if block.get("reading") == "judge" else ""
    return from_block(f"aAcc ({protocol}{reading})", overall, "aAcc")
