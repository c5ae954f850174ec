"""Per-sample evaluation, the summary and the output files.

One sample = one `Pair`. Its metrics are computed in families; a family that raises
leaves its keys out and records `<family>_error` (the message names the file), and the
other families are still computed. CANVAS's pipeline (`eval_pipeline.py@dd1da004`) does that only
for its layout IoU and alignment metrics, the two that accept its `out_dir`/`case_id`
arguments: every other metric is first called with them, fails with a TypeError, and is
called again outside the `try`, so any error it raises aborts CANVAS's whole run. A
value that cannot be computed is left out with its reason in the sample's `absent` dict;
`notes` holds choices the sample's numbers depend on (which response file was read).

A ground truth with no visible box (every node hidden, transparent or without a bounding
box) is an error of the families that compare against it (layout IoU, alignment,
components), never 0: CANVAS's code divides by its zero box count there.
The layout benchmark (`visioneval.benchmarks.layout`) runs `evaluate_pair` in a process pool
(`worker_init` prepares each worker) beside the engine's event loop.
"""

from __future__ import annotations

import ctypes
import io
import logging
import math
import os
import signal
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from visioneval.canvas.context import Context
from visioneval.canvas.draw import draw_sample
from visioneval.canvas.figma import Layout, load_layout
from visioneval.canvas.metrics import Absent
from visioneval.canvas.metrics.alignment import alignment
from visioneval.canvas.metrics.canvas_fill import canvas_fill
from visioneval.canvas.metrics.components import component_scores, threshold_match
from visioneval.canvas.metrics.layout_iou import hungarian, layout_iou
from visioneval.canvas.metrics.pixels import load_rgb, pixel_metrics, planes
from visioneval.canvas.pairs import Pair
from visioneval.canvas.tools import load_expected_tools, load_tool_usage, tool_metrics
from visioneval.core import store
from visioneval.io import csvcells

log = logging.getLogger(__name__)

# Families and the keys they produce, in output order.
FAMILIES: dict[str, tuple[str, ...]] = {
    "canvas_fill": ("canvas_fill",),
    "pixel_fidelity": ("pixel_fidelity", "psnr"),
    "semantic_match": ("semantic_match", "gt_caption", "gen_caption"),
    "layout_iou": ("element_count_ratio", "mean_iou", "precision", "recall", "num_matched",
                   "layout_overlap", "num_gt", "num_gen", "num_unmatched_gt",
                   "num_unmatched_gen"),
    "alignment": ("alignment_precision", "alignment_recall", "alignment_f1",
                  "num_gt_groups", "num_gen_groups", "num_correct_aligned"),
    "tool_usage": ("step_count", "tool_call_count", "tool_call_count_dedup",
                   "unique_tool_count", "unique_tool_list", "tool_efficiency",
                   "tool_accuracy"),
    "completeness": ("visual_completeness", "struct_completeness"),
    "components": ("iou50_precision", "iou50_recall", "iou50_f1", "iou50_matched",
                   "block_match", "position_similarity", "color_similarity"),
}
METRIC_KEYS: tuple[str, ...] = tuple(k for keys in FAMILIES.values() for k in keys)
TEXT_KEYS = {"gt_caption", "gen_caption", "unique_tool_list"}


@dataclass(frozen=True)
class SampleOptions:
    viz_dir: str | None = None  # write pictures under viz_dir/{variant}/{id}/




def _run(ctx: Context, family: str, fn: Callable[[], dict[str, Any] | None]) -> None:
    try:
        values = fn()
    except Exception as exc:  # any failure is this family's error, never the run's
        message = str(exc) or type(exc).__name__
        if not isinstance(exc, ValueError | OSError):
            message = f"{type(exc).__name__}: {message}"
        ctx.out[f"{family}_error"] = message
        return
    if values:
        ctx.put(values)


def evaluate_pair(pair: Pair, options: SampleOptions = SampleOptions()) -> dict[str, Any]:
    """Every metric but semantic match and the completeness aggregates (the main process
    adds those). Never raises."""
    ctx = Context(pair, {"id": pair.id, "variant": pair.variant})
    _run(ctx, "gt_json", lambda: _load(ctx, "gt"))
    _run(ctx, "gen_json", lambda: _load(ctx, "gen"))
    # A layout file error is reported once per family that needs it.
    layout_error = ctx.out.pop("gt_json_error", None), ctx.out.pop("gen_json_error", None)
    if ctx.gt is not None and len(ctx.gt) == 0:
        layout_error = (f"{pair.gt_json}: no visible box in the ground truth (every node is "
                        "hidden, transparent or has no absoluteBoundingBox)", layout_error[1])
    _run(ctx, "canvas_fill", lambda: _canvas_fill(ctx, layout_error[1]))
    _run(ctx, "pixel_fidelity", lambda: _pixels(ctx))
    both = "; ".join(e for e in layout_error if e) or None
    _run(ctx, "layout_iou", lambda: _layout(ctx, both))
    _run(ctx, "alignment", lambda: _alignment(ctx, both))
    _run(ctx, "components", lambda: _components(ctx, both))
    _run(ctx, "tool_usage", lambda: _tools(ctx))
    viz_dir = options.viz_dir
    if viz_dir:
        _run(ctx, "viz", lambda: _draw(ctx, Path(viz_dir)))
    if ctx.absent:
        ctx.out["absent"] = ctx.absent
    return ctx.out


def _load(ctx: Context, side: str) -> None:
    path = ctx.pair.gt_json if side == "gt" else ctx.pair.gen_json
    setattr(ctx, side, load_layout(path))


def _need(error: str | None) -> None:
    if error:
        raise ValueError(error)


def _read(layout: Layout | None) -> Layout:
    """A layout that loaded (it did whenever its file gave no error, which `_need` checked)."""
    if layout is None:
        raise ValueError("the layout file was not read")
    return layout


def _canvas_fill(ctx: Context, error: str | None) -> dict[str, Any]:
    _need(error)
    gen = _read(ctx.gen)
    return canvas_fill(gen.xywh, gen.depth)


def _pixels(ctx: Context) -> dict[str, Any]:
    ctx.gt_image = load_rgb(ctx.pair.gt_image)
    ctx.gen_image = load_rgb(ctx.pair.gen_image)
    return pixel_metrics(*planes(ctx.gt_image, ctx.gen_image))


def _layout(ctx: Context, error: str | None) -> dict[str, Any]:
    _need(error)
    gt, gen = _read(ctx.gt), _read(ctx.gen)
    match = hungarian(gt.xywh, gen.xywh)
    ctx.extras["match"] = match
    return layout_iou(gt.xywh, gen.xywh, match)


def _alignment(ctx: Context, error: str | None) -> dict[str, Any]:
    _need(error)
    values, gt_groups, gen_groups, match = alignment(_read(ctx.gt).xywh, _read(ctx.gen).xywh)
    ctx.extras["groups"] = (gt_groups, gen_groups, match)
    return values


def _components(ctx: Context, error: str | None) -> dict[str, Any]:
    _need(error)
    gt, gen = _read(ctx.gt), _read(ctx.gen)
    hits = threshold_match(gt.xywh, gen.xywh, gt.without_root(), gen.without_root())
    ctx.extras["hits"] = hits
    return component_scores(gt.xywh, gen.xywh, gt.without_root(), gen.without_root(),
                            gt.fills, gen.fills, hits)


def _tools(ctx: Context) -> dict[str, Any]:
    if ctx.pair.response is None:
        reason = (f"no {ctx.pair.folder}-json-response.json (nor any other "
                  "*-json-response.json in its folder)")
        return {k: Absent(reason) for k in FAMILIES["tool_usage"]}
    if ctx.pair.response_note:
        ctx.out.setdefault("notes", {})["tool_usage"] = ctx.pair.response_note
    usage = load_tool_usage(ctx.pair.response)
    expected = (load_expected_tools(ctx.pair.expected_tools)
                if ctx.pair.expected_tools is not None else None)
    return tool_metrics(usage, expected)


def _draw(ctx: Context, viz_dir: Path) -> None:
    folder = draw_sample(ctx, viz_dir)
    if folder is not None:
        ctx.out["viz"] = folder


# ---------------------------------------------------------------- aggregates


def add_completeness(sample: dict[str, Any]) -> None:
    """CANVAS's aggregates, only when all their parts are present:
    visual = round(mean(canvas_fill, pixel_fidelity, semantic_match), 4),
    structural = round(mean(element_count_ratio, layout_overlap, alignment_f1), 3)."""
    absent = sample.setdefault("absent", {})
    for key, parts, digits in (
            ("visual_completeness", ("canvas_fill", "pixel_fidelity", "semantic_match"), 4),
            ("struct_completeness", ("element_count_ratio", "layout_overlap",
                                     "alignment_f1"), 3)):
        missing = [p for p in parts if not isinstance(sample.get(p), int | float)]
        if missing:
            absent[key] = f"needs {', '.join(parts)} (missing: {', '.join(missing)})"
            sample.pop(key, None)
        else:
            absent.pop(key, None)
            sample[key] = round(sum(sample[p] for p in parts) / 3, digits)
    if not absent:
        sample.pop("absent")


def summarise(samples: Iterable[dict[str, Any]], variants: Iterable[str] = ()
              ) -> dict[str, dict[str, dict[str, float]]]:
    """{variant: {metric: {mean, median, count}}} over the samples that have the metric.
    The same whatever the samples' order (a run's journal is in the order samples finished):
    variants in the order given (then any other by name), metrics in `numeric_keys` order,
    means by fsum."""
    by_variant: dict[str, dict[str, list[float]]] = {}
    for sample in samples:
        table = by_variant.setdefault(sample["variant"], {})
        for key in numeric_keys([sample]):
            table.setdefault(key, []).append(float(sample[key]))
    given = [v for v in variants if v in by_variant]
    order = given + sorted(v for v in by_variant if v not in given)
    summary = {}
    for variant in order:
        table = by_variant[variant]
        keys = numeric_keys([dict.fromkeys(table, 0.0)])
        summary[variant] = {key: {"mean": round(statistics.fmean(table[key]), 4),
                                  "median": round(statistics.median(table[key]), 4),
                                  "count": len(table[key])} for key in keys}
    return summary


def numeric_keys(samples: Iterable[dict[str, Any]]) -> list[str]:
    """Metric keys with a number in any sample, the known ones first, in output order."""
    seen: dict[str, None] = {}
    for sample in samples:
        for key, value in sample.items():
            if (isinstance(value, int | float) and not isinstance(value, bool)
                    and math.isfinite(value)):
                seen[key] = None
    known = [k for k in METRIC_KEYS if k in seen]
    return known + sorted(k for k in seen if k not in known)


# ---------------------------------------------------------------- the run


def worker_init(parent: int) -> None:
    """A metric worker process: one BLAS thread, gone with its parent, Ctrl-C left to the
    parent (which stops the pool), matplotlib without a display."""
    # numpy's BLAS threads would fight the other workers for the cores.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    exit_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import matplotlib  # matplotlib in the metric workers only, never the main process

    matplotlib.use("Agg")


PR_SET_PDEATHSIG = 1  # linux/prctl.h
WATCH_SECONDS = 0.5


def exit_with_parent(parent: int) -> None:
    """Make this worker exit when the process that started the pool dies, even by SIGKILL
    (which runs no clean-up: the workers would otherwise wait on the task queue forever).

    On Linux the kernel sends SIGKILL to the worker when its parent dies
    (prctl(PR_SET_PDEATHSIG), see prctl(2)); everywhere a daemon thread also checks twice
    a second that the parent is still the one that started it (an orphan is re-parented,
    so os.getppid() changes) and ends the process with os._exit otherwise."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to call: the thread below still works
            pass
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch",
                     daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


def default_workers() -> int:
    return os.cpu_count() or 1


# ---------------------------------------------------------------- files


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    store.write_json(path, document, default=_plain)


def csv_columns(samples: list[dict[str, Any]]) -> list[str]:
    keys: dict[str, None] = {}
    for sample in samples:
        for key in sample:
            if key not in ("absent", "viz", "notes"):
                keys[key] = None
    first = ["id", "variant"]
    known = [k for k in METRIC_KEYS if k in keys]
    rest = sorted(k for k in keys if k not in known and k not in first)
    errors = [k for k in rest if k.endswith("_error")]
    return first + known + [k for k in rest if k not in errors] + errors + ["absent", "notes"]


def write_csv(path: Path, samples: list[dict[str, Any]]) -> None:
    columns = csv_columns(samples)
    buf = io.StringIO()
    writer = csvcells.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for sample in samples:
        row = []
        for key in columns:
            value = sample.get(key)
            if key in ("absent", "notes"):
                value = "; ".join(f"{k}: {v}" for k, v in (value or {}).items())
            elif isinstance(value, list):
                value = " ".join(map(str, value))
            row.append("" if value is None else value)
        writer.writerow(row)
    path.write_text(buf.getvalue(), encoding="utf-8")


def load_previous(path: Path) -> dict[tuple[str, str | None], dict[str, Any]]:
    """Earlier semantic values from an --out file: ours ({"samples": [...]}) or CANVAS's
    (a list of {"id", "semantic_match", "gt_caption", "gen_caption", ...}). Keyed by
    (id, variant); CANVAS's entries have no variant and match any."""
    if not path.is_file():
        return {}
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        log.warning("cannot reuse earlier semantic values: %s is unreadable (%s)", path, exc)
        return {}
    entries = data.get("samples", []) if isinstance(data, dict) else data
    found: dict[tuple[str, str | None], dict[str, Any]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        if all(k in entry for k in ("semantic_match", "gt_caption", "gen_caption")):
            found[(entry["id"].strip(), entry.get("variant"))] = {
                k: entry[k] for k in ("semantic_match", "gt_caption", "gen_caption")}
    return found
