"""`report.html`: one self-contained page per run (no network, no CDN): configuration and
counts, the benchmark's tables and charts, and a sample browser over every record."""

from __future__ import annotations

import html
import json
import logging
from pathlib import Path
from typing import Any

from visioneval.engine.store import write_atomic
from visioneval.report import sections, thumbs
from visioneval.report.rundir import RunView, image_hashes, load, prompt_text

log = logging.getLogger(__name__)
ASSETS = Path(__file__).parent / "assets"
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
    data, note = browser_data(view, thumb_limit)
    blocks = [_overview(view)]
    shown = sections.SECTIONS.get(view.benchmark, lambda v: [])(view) if view.records \
        else [sections.no_records(view)]
    for section in shown:
        blocks.append(f"<section><h2>{html.escape(section.title)}</h2>{section.body}</section>")
    blocks.append(_browser(note))
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(view.title)} · visioneval</title>
<style>{(ASSETS / "report.css").read_text()}</style></head>
<body><header><h1>{html.escape(view.title)}</h1>
<div class="sub">{html.escape(str(view.directory))} · {html.escape(view.info.get("status", ""))}
· visioneval {html.escape(str(view.info.get("visioneval_version", "")))}</div></header>
<main>{"".join(blocks)}</main>
<script type="application/json" id="run-data">{payload}</script>
<script>{(ASSETS / "report.js").read_text()}</script>
</body></html>
"""


def _overview(view: RunView) -> str:
    info, counts = view.info, view.info.get("counts", {})
    seconds = sum(s.get("seconds", 0) for s in info.get("sessions", []))
    unparsed = _unparsed(view)
    cards = [("samples", counts.get("records", len(view.records))),
             ("errors", counts.get("errors", 0)),
             ("unparsed", unparsed if unparsed is not None else "-"),
             ("rows skipped", counts.get("skipped_rows", 0)),
             ("from cache", counts.get("cache_hits", 0)),
             ("requests sent", counts.get("requests_sent", 0)),
             ("tokens in / out", f"{counts.get('prompt_tokens', 0)} / "
                                 f"{counts.get('completion_tokens', 0)}"),
             ("time", f"{seconds:.1f} s")]
    html_cards = "".join(f'<div class="card"><b>{html.escape(str(v))}</b>'
                         f"<span>{html.escape(k)}</span></div>" for k, v in cards)
    backend = info.get("backend", {})
    line = (f"{backend.get('kind')} · model {backend.get('model')}"
            f"{' · ' + backend['base_url'] if backend.get('base_url') else ''} · "
            f"generation {json.dumps(info.get('generation', {}))}")
    config = json.dumps({k: info.get(k) for k in ("options", "dataset", "backend", "generation",
                                                 "engine", "sessions")}, indent=2)
    return (f'<section><h2>Run</h2><div class="cards">{html_cards}</div>'
            f'<p class="note">{html.escape(line)}</p><details class="config"><summary>'
            f"configuration (run.json)</summary><pre>{html.escape(config)}</pre></details>"
            "</section>")


def _unparsed(view: RunView) -> int | None:
    if view.benchmark != "salbench":
        return None
    return sum(block.get("strict", {}).get("n_unparsed", 0) for block in view.metrics.values())


def _browser(note: str) -> str:
    notice = f'<p class="note">{html.escape(note)}</p>' if note else ""
    return f"""<section id="browser"><h2>Samples</h2>{notice}
<div class="filters">
<select id="f-group" aria-label="group"></select>
<select id="f-label" aria-label="class"></select>
<select id="f-view" aria-label="parser or protocol"></select>
<select id="f-outcome" aria-label="outcome"><option value="">all outcomes</option>
<option value="correct">correct</option><option value="wrong">wrong</option>
<option value="error">error</option><option value="unscored">unscored</option></select>
<input id="f-text" type="search" placeholder="search id, answer, error" aria-label="search">
<span class="count" id="count"></span></div>
<div id="samples"></div>
<div class="pager"><button id="prev">previous</button><span id="page"></span>
<button id="next">next</button></div></section>"""


def browser_data(view: RunView, thumb_limit: int) -> tuple[dict[str, Any], str]:
    """The JSON behind the sample browser: rows, de-duplicated prompt texts and thumbnails."""
    to_row = sections.ROWS.get(view.benchmark, sections.generic_row)
    texts: dict[str, int] = {}
    rows, wanted = [], []
    for record in view.records:
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
