"""`index.html` for a run's pictures: one self-contained page (no CDN, no external
script or style; thumbnails inlined as data URLs, full pictures linked relatively): the
headline metrics per variant and per sample (beside its thumbnail) first, narrow enough
for a 1440 px window, then every metric under a toggle; each table sorts by any column
with a click. The page is this folder's `templates/pictures.html` on the one skeleton
(`visioneval.pages`); this module only prepares the values."""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from visioneval import pages
from visioneval.canvas.draw import sample_dir
from visioneval.core.store import write_atomic

TEMPLATES = Path(__file__).parent / "templates"
ASSETS = Path(__file__).parent / "assets"

# CANVAS's headline metrics, then the scores that do not saturate (docs/layout.md): the
# columns the pictures' index and the run report show first.
DISTRIBUTED = ("canvas_fill", "pixel_fidelity", "semantic_match", "element_count_ratio",
               "mean_iou", "layout_overlap", "alignment_f1", "tool_efficiency",
               "visual_completeness", "struct_completeness", "iou50_f1", "block_match",
               "position_similarity", "color_similarity")


@dataclass(frozen=True)
class Cell:
    """One table cell: `sort` is the key the page's script sorts by (empty: last)."""
    text: str
    sort: str
    cls: str = ""
    title: str = ""


def _data_url(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return "data:image/jpeg;base64," + base64.b64encode(data).decode()


def cell(value: Any, reason: str | None = None) -> Cell:
    """A metric or label as a cell: a dash (with why, on hover) when absent or failed."""
    if isinstance(value, bool) or value is None:
        return Cell("–", "", "na", reason or "")
    if isinstance(value, float):
        return Cell(f"{value:.4g}", repr(value))
    if isinstance(value, int):
        return Cell(str(value), str(value))
    return Cell(str(value), str(value), "l")


def _errors(sample: dict[str, Any]) -> str:
    """Each distinct error message once, after the metric families it hit."""
    grouped: dict[str, list[str]] = {}
    for key, value in sample.items():
        if key.endswith("_error"):
            grouped.setdefault(str(value), []).append(key.removesuffix("_error"))
    return "; ".join(f"{', '.join(f)}: {m}" for m, f in grouped.items())


def _row(viz_dir: Path, sample: dict[str, Any], first: list[str],
         metric_keys: list[str]) -> dict[str, Any]:
    """A sample's cells twice: the headline metrics (`cells`, beside its thumbnail) and
    every metric (`all_cells`, the table under the toggle). Its pictures are in the folder
    its `viz` names relative to `viz_dir` (a merged run's are in its shards' folders)."""
    relative = sample.get("viz")
    if not isinstance(relative, str) or not relative:
        relative = sample_dir(viz_dir, sample["variant"], sample["id"]).relative_to(
            viz_dir).as_posix()
    folder = viz_dir / relative
    absent = sample.get("absent", {})
    names = [cell(sample["id"]), cell(sample["variant"])]
    return {"id": str(sample["id"]), "folder": relative,
            "thumb": _data_url(folder / "thumb.jpg"),
            "cells": [*names, *(cell(sample.get(k), absent.get(k)) for k in first)],
            "all_cells": [*names, *(cell(sample.get(k), absent.get(k)) for k in metric_keys)],
            "errors": _errors(sample)}


def headline_keys(metric_keys: list[str]) -> list[str]:
    """The columns the page shows first: the headline metrics (CANVAS's, then the scores
    that do not saturate; `DISTRIBUTED`) the run has; the counts and the parts of each
    score (precision, recall, num_*) go to the table of every metric."""
    first = [k for k in DISTRIBUTED if k in metric_keys]
    return first or metric_keys


def _summary(document: dict[str, Any], keys: list[str]) -> list[list[Cell]]:
    """One row per variant and statistic, `keys` as columns."""
    return [[cell(variant), cell(stat),
             *(cell(table[k][stat] if k in table else None) for k in keys)]
            for variant, table in document.get("summary", {}).items()
            for stat in ("mean", "median", "count")]


def render(viz_dir: Path, document: dict[str, Any], metric_keys: list[str]) -> str:
    first = headline_keys(metric_keys)
    variants = ", ".join(document.get("variants", []))
    return _environment().get_template("pictures.html").render(
        title=f"layout pictures: {document.get('model')} ({variants})",
        subtitle=str(viz_dir), first_keys=first, metric_keys=metric_keys,
        summary=_summary(document, first), summary_all=_summary(document, metric_keys),
        samples=[_row(viz_dir, s, first, metric_keys) for s in document["samples"]],
        skipped=document.get("skipped", []),
        css=(pages.ASSETS / "report.css").read_text() + (ASSETS / "pictures.css").read_text(),
        script=(pages.ASSETS / "sortable.js").read_text())


@functools.cache
def _environment() -> jinja2.Environment:
    return pages.environment(TEMPLATES)


def write_index(viz_dir: Path, document: dict[str, Any], metric_keys: list[str]) -> Path:
    path = viz_dir / "index.html"
    write_atomic(path, render(viz_dir, document, metric_keys).encode("utf-8"))
    return path
