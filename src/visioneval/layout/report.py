"""`index.html` for a run's pictures: one self-contained page (no CDN, no external
script or style; thumbnails inlined as data URLs, full pictures linked relatively), a
table of every sample's metrics, sortable by any column with a click. The page is the
`pictures.html` template on the one skeleton; this module only prepares the values."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.engine.store import write_atomic
from visioneval.layout.draw import sample_dir
from visioneval.report import templating


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


def _row(viz_dir: Path, sample: dict[str, Any], metric_keys: list[str]) -> dict[str, Any]:
    folder = sample_dir(viz_dir, sample["variant"], sample["id"])
    absent = sample.get("absent", {})
    return {"id": str(sample["id"]), "folder": folder.relative_to(viz_dir).as_posix(),
            "thumb": _data_url(folder / "thumb.jpg"),
            "cells": [cell(sample["id"]), cell(sample["variant"]),
                      *(cell(sample.get(k), absent.get(k)) for k in metric_keys)],
            "errors": _errors(sample)}


def render(viz_dir: Path, document: dict[str, Any], metric_keys: list[str]) -> str:
    # Summary: one row per variant and statistic, the metrics as columns.
    summary = [[cell(variant), cell(stat),
                *(cell(table[k][stat] if k in table else None) for k in metric_keys)]
               for variant, table in document.get("summary", {}).items()
               for stat in ("mean", "median", "count")]
    variants = ", ".join(document.get("variants", []))
    return templating.render(
        "pictures.html", title=f"layout pictures: {document.get('model')} ({variants})",
        subtitle=str(viz_dir), metric_keys=metric_keys, summary=summary,
        samples=[_row(viz_dir, s, metric_keys) for s in document["samples"]],
        skipped=document.get("skipped", []),
        css=(templating.ASSETS / "report.css").read_text()
        + (templating.ASSETS / "pictures.css").read_text(),
        script=(templating.ASSETS / "sortable.js").read_text())


def write_index(viz_dir: Path, document: dict[str, Any], metric_keys: list[str]) -> Path:
    path = viz_dir / "index.html"
    write_atomic(path, render(viz_dir, document, metric_keys).encode("utf-8"))
    return path
