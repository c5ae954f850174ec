"""A planned run's power beside its cost (`--dry-run` of a run or a suite): the paired
difference its samples can detect, before any pilot run says how often two models disagree.
`visioneval power` refines it from pilot runs."""

from __future__ import annotations

from visioneval.core import registry
from visioneval.core.benchmark import Benchmark
from visioneval.core.capabilities import PairsRecords
from visioneval.stats import power as formulas

WORST_DISCORDANCE = 0.5  # 2 p (1 - p) at p = 0.5: the most two independent models disagree


def proportion_headline(benchmark: Benchmark) -> bool:
    """Whether a benchmark's metrics are shares of samples right: one headline proportion
    (`Benchmark.headline_proportion`, what `--target-ci` stops on: SalBench's exact match,
    vqa's accuracy), or 0/1 rows its registered definition pairs for `visioneval compare`
    (IllusionBench's recall per protocol, subset and task: proportions, though no single
    one is the headline)."""
    if benchmark.headline_proportion() is not None:
        return True
    return benchmark.name in registry.names() and \
        isinstance(registry.definition(benchmark.name), PairsRecords)


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
