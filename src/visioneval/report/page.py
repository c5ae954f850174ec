"""`report.html`: one self-contained page per run (no network, no CDN): configuration and
counts, the benchmark's tables and charts, and a sample browser over every record."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from visioneval.benchmarks import registry
from visioneval.benchmarks.base import BenchmarkDefinition
from visioneval.engine.store import write_atomic
from visioneval.report import templating, thumbs
from visioneval.report.blocks import Note, Section
from visioneval.report.rundir import RunView, image_hashes, load, prompt_text

log = logging.getLogger(__name__)
THUMB_LIMIT = 3000  # `visioneval report`; the end-of-run report makes at most RUN_END_THUMBS
RUN_END_THUMBS = 1000
RESPONSE_CHARS = 4000


def write_report(directory: Path, thumb_limit: int = THUMB_LIMIT) -> Path:
    """Build report.html for a run directory and return its path."""
    view = load(directory)
    path = directory / "report.html"
    write_atomic(path, render(view, thumb_limit).encode("utf-8"))  # never half a page
    return path


def render(view: RunView, thumb_limit: int = THUMB_LIMIT) -> str:
    definition = _definition(view)
    data, note = browser_data(view, definition, thumb_limit)
    shown = definition.sections(view) if view.has_records else [no_records(view)]
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    info = view.info
    return templating.render(
        "run.html", title=view.title,
        subtitle=f"{view.directory} · {info.get('status', '')} · visioneval "
                 f"{info.get('visioneval_version', '')}",
        cards=_cards(view, definition), backend_line=_backend_line(info),
        config=json.dumps({k: info.get(k) for k in ("options", "dataset", "backend",
                                                   "generation", "engine", "sessions")},
                          indent=2),
        sections=shown, browser_note=note, payload=payload,
        script=(templating.ASSETS / "report.js").read_text())


def _definition(view: RunView) -> BenchmarkDefinition:
    """The run's benchmark definition; a run of a benchmark this install does not know
    still gets a page (counts and the browser, no tables)."""
    try:
        return registry.definition(view.definition)
    except ValueError as exc:
        log.warning("%s: %s; the report shows no benchmark tables", view.directory, exc)
        return BenchmarkDefinition()


def no_records(view: RunView) -> Section:
    """What an empty run shows instead of its tables: nothing to score, and why."""
    skipped = view.info.get("counts", {}).get("skipped_rows", 0)
    why = (f"every row was skipped ({skipped}; the reasons are in run.json under sessions)"
           if skipped else "no sample finished (see the run's sessions in run.json)")
    return Section("Results", [Note(f"This run has no records: {why}. There is nothing to "
                                    "score, chart or browse.")])


def _cards(view: RunView, definition: BenchmarkDefinition) -> list[tuple[str, Any]]:
    counts = view.info.get("counts", {})
    seconds = sum(s.get("seconds", 0) for s in view.info.get("sessions", []))
    unparsed = definition.unparsed(view.metrics) if view.has_records else None
    return [("samples", counts.get("records", "-")),
            ("errors", counts.get("errors", 0)),
            ("unparsed", unparsed if unparsed is not None else "-"),
            ("rows skipped", counts.get("skipped_rows", 0)),
            ("from cache", counts.get("cache_hits", 0)),
            ("requests sent", counts.get("requests_sent", 0)),
            ("tokens in / out", f"{counts.get('prompt_tokens', 0)} / "
                                f"{counts.get('completion_tokens', 0)}"),
            ("time", f"{seconds:.1f} s")]


def _backend_line(info: dict[str, Any]) -> str:
    backend = info.get("backend", {})
    return (f"{backend.get('kind')} · model {backend.get('model')}"
            f"{' · ' + backend['base_url'] if backend.get('base_url') else ''} · "
            f"generation {json.dumps(info.get('generation', {}))}")


def browser_data(view: RunView, definition: BenchmarkDefinition,
                 thumb_limit: int) -> tuple[dict[str, Any], str]:
    """The JSON behind the sample browser: rows, de-duplicated prompt texts and thumbnails."""
    to_row = definition.browser_row
    texts: dict[str, int] = {}
    rows, wanted = [], []
    for record in view.iter_records():
        row = to_row(record)
        images = image_hashes(record)
        query = images[-1] if images else None
        if query:  # failures first: when thumbnails are capped, those are the ones to see
            wrong = not record.ok or any(v.get("ok") is False for v in row["v"].values())
            wanted.append((not wrong, query))
        prompt = prompt_text(record)
        error = record.response.error
        rows.append({"id": record.id, "g": record.group, "img": query,
                     "p": texts.setdefault(prompt, len(texts)),
                     "r": capped(record.response.text or ""),
                     "e": capped(error) if error is not None else None, **row})
    order = list(dict.fromkeys(sha for _, sha in sorted(wanted, key=lambda w: w[0])))
    found, note = thumbs.collect(view.info, order, thumb_limit)
    keys = {sha: f"i{i}" for i, sha in enumerate(found)}
    for row in rows:
        row["img"] = keys.get(row["img"]) if row["img"] else None
    views = list(dict.fromkeys(v for row in rows for v in row["v"]))
    return {"views": views, "groups": sorted({r["g"] for r in rows}),
            "labels": sorted({label for r in rows for label in r["labels"]}),
            "texts": list(texts), "thumbs": {keys[s]: url for s, url in found.items()},
            "rows": rows}, note


def capped(text: str, limit: int = RESPONSE_CHARS) -> str:
    """What the page embeds of one answer: the start, and how much is left out (a 10 MB
    answer would otherwise be 10 MB of every page that shows it)."""
    if len(text) <= limit:
        return text
    return (f"{text[:limit]}... ({len(text) - limit} more characters; full text in "
            "samples.jsonl)")


def try_write_report(directory: Path) -> Path | None:
    """The end-of-run report; a failure is a warning, never a failed run."""
    try:
        return write_report(directory, RUN_END_THUMBS)
    except Exception as exc:  # the run's results are safe; only the page is missing
        log.warning("report.html not written: %s: %s (run `visioneval report %s`)",
                    type(exc).__name__, exc, directory)
        return None
