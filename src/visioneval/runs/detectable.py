"""A planned run's power beside its cost (`--dry-run` of a run or a suite): the paired
difference its samples can detect, before any pilot run says how often two models disagree.
`visioneval power` refines it from pilot runs."""

from __future__ import annotations

from visioneval.core.benchmark import Benchmark
from visioneval.core.capabilities import PairsRecords
from visioneval.stats import power as formulas

WORST_DISCORDANCE = 0.5  # 2 p (1 - p) at p = 0.5: the most two independent models disagree


def proportion_headline(benchmark: Benchmark) -> bool:
    """Whether a benchmark's headline is a share of samples right (SalBench's exact match,
    IllusionBench's recall, vqa's and the default summary's accuracy): its registered
    definition pairs 0/1 rows, or its metrics carry an overall accuracy."""
    from visioneval.core import registry

    if benchmark.name not in registry.names():
        return type(benchmark).summarize is Benchmark.summarize
    definition = registry.definition(benchmark.name)
    fields = getattr(definition.metrics_model, "model_fields", {})
    return isinstance(definition, PairsRecords) or "overall" in fields


def paired_difference(benchmark: Benchmark, n: int, models: int = 1) -> float | None:
    """The paired difference (a fraction) n samples detect at alpha 0.05 and power 0.8
    with the largest discordance; None where it does not apply: no samples, several models
    answering (a panel), more than one request per sample, a headline that is not a
    proportion."""
    if n <= 0 or models > 1 or not benchmark.one_request_each or \
            not proportion_headline(benchmark):
        return None
    return formulas.detectable_paired(n, WORST_DISCORDANCE, formulas.ALPHA, formulas.POWER)


def dry_run_line(found: float) -> str:
    """`--dry-run`'s line for a difference from `paired_difference`."""
    return (f"  detectable difference at this n: ±{100 * found:.1f} points (paired, "
            f"discordance assumed {WORST_DISCORDANCE:g}, alpha {formulas.ALPHA:g}, power "
            f"{formulas.POWER:g}; `visioneval power` refines it from pilot runs)")
