"""A layout run's results as files and as the end-of-run tables: metrics.json (the summary
per variant), `results.json` and `results.csv` (one flat row per sample, as `visioneval
layout` always wrote them) and, with pictures, `viz/index.html`.

Everything is recomputed from the journal and run.json, so a resumed or merged run gets
the files of the run done in one piece: samples in (variant, id) order, whatever order they
finished in."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from visioneval.core.printed import print_table
from visioneval.core.runfiles import MetricsBlock
from visioneval.core.store import RunStore
from visioneval.stats.bootstrap import Outcomes, mean_statistic, summaries
from visioneval.terminal import line

if TYPE_CHECKING:
    from visioneval.benchmarks.layout.options import LayoutOptions
    from visioneval.core.runfiles import RunInfo

RESULTS_JSON = "results.json"
RESULTS_CSV = "results.csv"
VIZ_DIR = "viz"  # the pictures, in the run directory
KEY = "layout"  # a record's parsed["layout"]: the sample's flat results
TOOL = "visioneval layout"
SHOWN = ("canvas_fill", "pixel_fidelity", "semantic_match", "element_count_ratio",
         "layout_overlap", "mean_iou", "alignment_f1", "iou50_f1", "block_match",
         "tool_efficiency", "visual_completeness", "struct_completeness")


class MetricStats(MetricsBlock):
    """One metric over one variant's samples that have it; `mean_ci95` the mean's 95%
    bootstrap interval (absent with fewer than 2 samples)."""

    mean: float
    median: float
    count: int
    mean_ci95: tuple[float, float] | None = None


class LayoutMetrics(MetricsBlock):
    """metrics.json of a layout run: the samples, those with a metric error, and per variant
    each metric's mean, median and count (`pipeline.summarise`)."""

    samples: int
    samples_with_metric_error: int
    summary: dict[str, dict[str, MetricStats]]


def has_error(sample: dict[str, Any]) -> bool:
    """Whether a metric family of the sample failed (`<family>_error`)."""
    return any(k.endswith("_error") for k in sample)


def summarize(samples: Iterable[dict[str, Any]], variants: Sequence[str]) -> dict[str, Any]:
    """metrics.json: {variant: {metric: {mean, median, count, mean_ci95}}} and the counts,
    the same whatever the order of the samples (the journal's is the order they finished
    in). `mean_ci95`: the mean's 95% bootstrap interval (1000 seeded resamples of the
    samples), absent with fewer than 2."""
    from visioneval.canvas.pipeline import summarise
    counts = {"samples": 0, "samples_with_metric_error": 0}
    values: dict[tuple[str, str], Outcomes] = {}

    def counted() -> Iterator[dict[str, Any]]:
        for sample in samples:
            if "variant" not in sample:
                continue
            counts["samples"] += 1
            counts["samples_with_metric_error"] += has_error(sample)
            for key, value in sample.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    values.setdefault((sample["variant"], key), Outcomes(1)).add(
                        str(sample.get("id")), (float(value),))
            yield sample

    summary: dict[str, dict[str, dict[str, Any]]] = summarise(counted(), variants)
    for variant, table in summary.items():
        for key, stats in table.items():
            found = values.get((variant, key))
            if found is not None and len(found) >= 2:
                stats["mean_ci95"] = _mean_interval(found)
    return {**counts, "summary": summary}


def _mean_interval(found: Any) -> list[float]:
    low, high = summaries(found.matrix(), mean_statistic, ("mean",))["mean"]["ci95"]
    return [round(low, 4), round(high, 4)]


def ordered(samples: Iterable[dict[str, Any]], variants: Sequence[str]) -> list[dict[str, Any]]:
    """Samples (or skipped pairs) in variant order, then by id."""
    rank = {v: i for i, v in enumerate(variants)}
    return sorted(samples, key=lambda s: (rank.get(s.get("variant", ""), len(rank)),
                                          str(s.get("variant")), str(s.get("id"))))


def run_samples(directory: Path, info: RunInfo) -> Iterator[dict[str, Any]]:
    """The journal's samples (the last record of each), without those run.json lists as
    not in the data."""
    outside = set(info.not_in_data or [])
    for record in RunStore(directory, info).iter_latest():
        values = record.parsed.get(KEY)
        if record.id not in outside and isinstance(values, dict):
            yield values


def skipped_pairs(info: RunInfo, variants: Sequence[str]) -> list[dict[str, str]]:
    """The pairs that could not be scored, as the last session of each shard found them
    (every session reads the whole folder again)."""
    last = {session.shard: session.skipped_rows for session in info.sessions}
    rows = [{"id": r.row, "variant": r.group, "reason": r.reason}
            for found in last.values() for r in found]
    return ordered(rows, variants)


def seconds(info: RunInfo) -> float:
    """Time spent: every session of a shard added up, the longest shard."""
    per_shard: dict[int | None, float] = {}
    for session in info.sessions:
        per_shard[session.shard] = per_shard.get(session.shard, 0.0) + (session.seconds or 0)
    return round(max(per_shard.values(), default=0.0), 2)


def missing_ids(info: RunInfo) -> list[Any]:
    """The --ids that matched no pair (the layout's own key of run.json's dataset block)."""
    return list((info.dataset.model_extra or {}).get("missing_ids") or [])


def document(metrics: dict[str, Any], info: RunInfo, directory: Path,
             options: LayoutOptions) -> dict[str, Any]:
    """The results file: the run's settings, every sample, what was skipped, the summary."""
    samples = ordered(run_samples(directory, info), options.variants)
    for sample in samples:
        if sample.get("viz"):
            sample["viz"] = picture_folder(sample["viz"], directory, info)
    return {
        "tool": TOOL, "base_dir": options.base_dir, "model": options.model,
        "variants": list(options.variants), "ids": options.ids,
        "settings": {"workers": options.workers, "skip_semantic": options.skip_semantic,
                     "semantic": {k: getattr(options, k) for k in (
                         "caption_backend", "caption_model", "caption_base_url",
                         "caption_prompt", "embedder", "semantic_from")},
                     "captioner": options.captioner_name(), "embedder": options.embedder},
        "samples": samples,
        "skipped": skipped_pairs(info, options.variants),
        "missing_ids": missing_ids(info),
        "summary": metrics.get("summary", {}),
        "seconds": seconds(info),
    }


def picture_folder(viz: str, directory: Path, info: RunInfo) -> str:
    """A sample's picture folder relative to the run's `viz/`: its own, or, in a merged run,
    the shard's that drew it (`merged_from`)."""
    own = directory / VIZ_DIR
    if (own / viz).is_dir():
        return viz
    for part in info.merged_from or []:
        where = Path(part.directory)
        folder = (where if where.is_absolute() else directory / where) / VIZ_DIR / viz
        if folder.is_dir():
            return Path(os.path.relpath(folder, own)).as_posix()
    return viz


def write(metrics: dict[str, Any], info: RunInfo, directory: Path,
          options: LayoutOptions) -> list[Path]:
    from visioneval.canvas import pipeline

    doc = document(metrics, info, directory, options)
    paths = [directory / RESULTS_JSON, directory / RESULTS_CSV]
    pipeline.write_json(paths[0], doc)
    pipeline.write_csv(paths[1], doc["samples"])
    if any(s.get("viz") for s in doc["samples"]):
        from visioneval.canvas.report import write_index

        viz_dir = directory / VIZ_DIR
        viz_dir.mkdir(parents=True, exist_ok=True)
        paths.append(write_index(viz_dir, doc, pipeline.numeric_keys(doc["samples"])))
    return paths


def show(metrics: dict[str, Any], model: str, console: Console) -> None:
    """The table a run ends with, one per variant: each headline metric's mean with its 95%
    interval, median and count."""
    for variant, table in (metrics.get("summary") or {}).items():
        rows = []
        for key in SHOWN:
            if key in table:
                s = table[key]
                span = s.get("mean_ci95")
                mean = f"{s['mean']:.4f}" + (f" [{span[0]:.4f}, {span[1]:.4f}]" if span else "")
                rows.append([key, mean, f"{s['median']:.4f}", str(s["count"])])
        print_table(console, f"{model} / {variant}", ["metric", "mean [95%]", "median", "n"],
                    rows)
    if metrics.get("summary"):
        line(console, "[95%]: bootstrap over samples, 1000 seeded resamples; n: the samples "
                      "that have the metric.", style="dim")
