"""`report.html`: one self-contained page per run (no network, no CDN): the benchmark's
headline table and chart first, then the run's counts, cost and configuration, the
benchmark's other tables and charts, and a sample browser over every record."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from visioneval.backends.served import served_text
from visioneval.core import registry
from visioneval.core.benchmark import BenchmarkDefinition
from visioneval.core.blocks import Note, Section, Table
from visioneval.core.rundir import OpenedRun, just_made, load
from visioneval.core.runfiles import Counts, RunInfo, SessionInfo
from visioneval.core.store import write_atomic
from visioneval.invocation import command
from visioneval.report import epochs, explanation, person, templating, thumbs, variants
from visioneval.report.browser_rows import ROW_LIMIT, BrowserRows
from visioneval.report.cost import cost_blocks, cost_card
from visioneval.report.selection import KINDS, Selection
from visioneval.report.thumbs import RUN_END_THUMBS

log = logging.getLogger(__name__)
THUMB_LIMIT = 1000  # `visioneval report`; the end-of-run report makes at most RUN_END_THUMBS


def write_report(directory: Path, thumb_limit: int = THUMB_LIMIT,
                 row_limit: int = ROW_LIMIT, definition: registry.Named = None) -> Path:
    """Build report.html for a run directory and return its path. `definition`: the one the
    user named for the run (`--definition`); a run of a user's own benchmark without it is
    shown with the generic definition (`registry.for_run`: a run names no code to import)."""
    return write_page(load(directory, definition), thumb_limit, row_limit)


GENERIC_PAGE = "report-generic.html"


def page_path(view: OpenedRun) -> Path:
    """Where a run's page goes: report.html, or, for a run shown without its own
    definition (`OpenedRun.untrusted`), report-generic.html beside it, so that a page drawn
    with the benchmark's tables is never replaced by one without them."""
    return view.directory / (GENERIC_PAGE if view.untrusted else "report.html")


def write_page(view: OpenedRun, thumb_limit: int = THUMB_LIMIT,
               row_limit: int = ROW_LIMIT, ready: Mapping[str, str | bytes] | None = None,
               rows: BrowserRows | None = None) -> Path:
    """The page of a run already read back (`rundir.load`), at `page_path`; `ready`:
    thumbnails, or the images to make them from, prepared while it ran, by image sha256
    (`report.early`); `rows`: its browser rows, read while it ran (`browser_data`)."""
    path = page_path(view)
    page = render(view, thumb_limit, row_limit, ready, rows)
    write_atomic(path, page.encode("utf-8"))  # never half a page
    return path


def render(view: OpenedRun, thumb_limit: int = THUMB_LIMIT, row_limit: int = ROW_LIMIT,
           ready: Mapping[str, str | bytes] | None = None,
           rows: BrowserRows | None = None) -> str:
    definition = definition_of(view)
    data, note = browser_data(view, definition, thumb_limit, row_limit, ready, rows)
    return render_page(view, definition, data, note)


def render_page(view: OpenedRun, definition: BenchmarkDefinition, data: dict[str, Any],
                note: str, home: str | None = None) -> str:
    """The page around the browser's data: the file's embedded rows, or (`visioneval view`)
    none, with `data["server"]` telling the script to ask the local server for them.
    `home`: where the list of runs is, when the page is served from it."""
    shown = definition.sections(view) if view.has_records else [no_records(view)]
    # The results lead: the definition's first section (its headline table and chart),
    # then the run card, then the rest.
    lead, rest = shown[:1], shown[1:]
    if view.has_records:  # the controls follow the headline they qualify
        rest = [*person.sections(view.directory), *explanation.sections(view.directory),
                *variants.sections(view.directory), *epochs.sections(view.directory), *rest]
    if view.untrusted is not None:
        lead = [Section("Results", [Note(view.untrusted)]), *lead]
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    info = view.info
    recorded = info.model_dump(mode="json", exclude_unset=True)  # as run.json has it
    return templating.render(
        "run.html", title=view.title,
        subtitle=f"{view.directory} · {info.status or ''}{_parts_note(info)} · "
                 f"visioneval {info.visioneval_version or ''}",
        cards=_cards(view, definition), backend_line=_backend_line(info),
        run_blocks=[*stopping_blocks(info), *cost_blocks(info), *cache_blocks(info),
                    *endpoint_tables(info), *probe_blocks(info)],
        config=json.dumps({k: recorded[k] for k in ("options", "dataset", "backend",
                                                    "generation", "engine", "stopping", "shard",
                                                    "merged_from", "missing_shards",
                                                    "rescored_from", "sessions")
                            if k in recorded},
                          indent=2),
        lead=lead, sections=rest, browser_note=note, payload=payload, home=home,
        script=(templating.ASSETS / "report.js").read_text())


ENDPOINT_COLUMNS = {"requests": "requests", "errors": "errors",
                    "latency_s_mean": "mean latency (s)", "taken_out": "times taken out"}
"""run.json's per-endpoint stats as the table heads them; unknown keys show as they are."""


def stopping_blocks(info: RunInfo) -> list[Note]:
    """`--target-ci`'s rule and its interval, the one valid under the stopping rule (the
    tables' bootstrap intervals are fixed-n intervals over the samples run)."""
    if info.stopping is None:
        return []
    return [Note(f"{info.stopping.line()[0].upper()}{info.stopping.line()[1:]} "
                 "(docs/stopping.md).")]


def probe_blocks(info: RunInfo) -> list[Note]:
    """What `--probe-resolution` measured of the endpoint before the run."""
    probed = info.resolution_probe
    if probed is None:
        return []
    return [Note(f"Resolution probe (before the run, docs/probe.md): {probed.summary}")]


def endpoint_tables(info: RunInfo) -> list[Table | Note]:
    """Requests, errors and latency per endpoint (run.json's sessions[i].endpoints, one
    row per endpoint and session) and how the dispatcher throttled (sessions[i].dispatch),
    when the run recorded them."""
    sessions = [s for s in info.sessions if s.endpoints is not None]
    if not sessions:
        return []
    recorded = [{url: stats.model_dump(exclude_unset=True)
                 for url, stats in (s.endpoints or {}).items()} for s in sessions]
    columns = list(dict.fromkeys(k for endpoints in recorded for stats in endpoints.values()
                                 for k in stats))
    several = len(sessions) > 1
    names = _session_names(sessions)
    rows = []
    for name, endpoints in zip(names, recorded, strict=True):
        for url, stats in endpoints.items():
            rows.append([*([name] if several else []), url,
                         *[_stat(stats.get(c), c in stats) for c in columns]])
    header = [*(["session"] if several else []), "endpoint",
              *[ENDPOINT_COLUMNS.get(c, c) for c in columns]]
    blocks: list[Table | Note] = [Table(header, rows, numeric_from=2 if several else 1)]
    notes = [_dispatch_line(n, s.dispatch.model_dump(exclude_unset=True), several)
             for n, s in zip(names, sessions, strict=True) if s.dispatch is not None]
    if any("-" in row for row in rows):
        notes.append("A mean latency of - : that endpoint answered nothing.")
    if notes:
        blocks.append(Note(" ".join(notes)))
    return blocks


def _session_names(sessions: list[SessionInfo]) -> list[str]:
    """1, 2, ... for one run's sessions; "shard 2" (or "shard 2.1", "shard 2.2" when a
    shard resumed) for a merged run's, whose sessions carry their shard."""
    if not any(s.shard is not None for s in sessions):
        return [str(n) for n in range(1, len(sessions) + 1)]
    per_shard: dict[int | None, int] = {}
    for s in sessions:
        per_shard[s.shard] = per_shard.get(s.shard, 0) + 1
    seen: dict[int | None, int] = {}
    names = []
    for s in sessions:
        shard = s.shard
        seen[shard] = seen.get(shard, 0) + 1
        names.append(f"shard {shard}" + (f".{seen[shard]}" if per_shard[shard] > 1 else ""))
    return names


def _dispatch_line(number: str, dispatch: dict[str, Any], several: bool) -> str:
    """Concurrency and rate limits of one session, in a sentence."""
    ceiling, throttled = dispatch.get("concurrency_ceiling", "?"), dispatch.get("http_429", 0)
    parts = [f"In flight at most {ceiling} (lowest {dispatch.get('concurrency_lowest', '?')} "
             f"after HTTP 429s, {throttled} of them)" if throttled
             else f"In flight at most {ceiling}, no HTTP 429"]
    wait = dispatch.get("rate_limit_wait_s")
    if wait:
        parts.append(f"{wait:.1f} s waited for --rpm/--tpm")
    label = number if number.startswith("shard") else f"Session {number}"
    return f"{f'{label}: ' if several else ''}{'; '.join(parts)}."


def _stat(value: Any, present: bool) -> Any:
    """A cell: floats to 3 decimals; a key present with no value (an endpoint that never
    answered has no mean latency) as "-"."""
    if value is None:
        return "-" if present else ""
    return f"{value:.3f}" if isinstance(value, float) else value


def definition_of(view: OpenedRun) -> BenchmarkDefinition:
    """The definition a run's page is drawn with: its own (`registry.for_run`: a registered
    benchmark, or the definition the user named), else the generic one, so a run of a
    benchmark this install does not know, or of a user's own that nobody vouched for,
    still gets a page (counts and the browser, no tables; the page says why)."""
    return view.shown


def no_records(view: OpenedRun) -> Section:
    """What an empty run shows instead of its tables: nothing to score, and why."""
    skipped = view.info.counts.skipped_rows if view.info.counts else 0
    why = (f"every row was skipped ({skipped}; the reasons are in run.json under sessions)"
           if skipped else "no sample finished (see the run's sessions in run.json)")
    return Section("Results", [Note(f"This run has no records: {why}. There is nothing to "
                                    "score, chart or browse.")])


def _parts_note(info: RunInfo) -> str:
    """A shard says which; a merged run says of how many shards, and which are missing."""
    if info.shard is not None:
        return f" · shard {info.shard.label}"
    merged = info.merged_from
    if not merged:
        return ""
    count = merged[0].shard.count
    missing = info.missing_shards or []
    gone = ", ".join(f"{m.index}/{m.count}" + (" still running" if m.still_running else "")
                     for m in missing)
    return f" · merged from {len(merged)} of {count} shards" + (f" (missing {gone})"
                                                                 if gone else "")


def _cards(view: OpenedRun, definition: BenchmarkDefinition) -> list[tuple[str, Any]]:
    counts = view.info.counts or Counts()
    recorded = counts.model_fields_set
    seconds = sum(s.seconds or 0 for s in view.info.sessions)
    unparsed = definition.unparsed(view.metrics) if view.has_records else None
    return [("samples", counts.records if "records" in recorded else "-"),
            ("errors", counts.errors),
            ("unparsed", unparsed if unparsed is not None else "-"),
            ("rows skipped", counts.skipped_rows),
            ("from cache", counts.cache_hits),
            ("requests sent", counts.requests_sent),
            ("tokens in / out", f"{counts.prompt_tokens} / {counts.completion_tokens}"),
            *_reasoning_card(counts),
            cost_card(view.info),
            ("time, all shards" if view.info.merged_from else "time", f"{seconds:.1f} s")]


def _reasoning_card(counts: Counts) -> list[tuple[str, Any]]:
    """How many answers came with reasoning that was set aside before parsing (run.json's
    counts.answers_with_reasoning); no card for a model that gave none."""
    n = counts.answers_with_reasoning
    return [("answers with reasoning set aside", n)] if n else []


def _backend_line(info: RunInfo) -> str:
    backend = info.backend
    urls = backend.base_urls or ([backend.base_url] if backend.base_url else [])
    where = (f" · {urls[0]}" if len(urls) == 1 else
             f" · {len(urls)} endpoints (table below)" if urls else "")
    served = backend.identity.served if backend.identity is not None else None
    serving = f" · serves {served_text(served)}" if served else ""
    if backend.kind == "none":  # a benchmark that asks no model (layout: the files are scored)
        return f"no model asked · {backend.model}"
    generation = info.generation.model_dump(mode="json", exclude_unset=True)
    return (f"{backend.kind} · model {backend.model}{serving}{where} · "
            f"generation {json.dumps(generation)}")


def cache_blocks(info: RunInfo) -> list[Note]:
    """Where the run's cached answers came from (run.json's sessions[i].cache_sources): the
    runs that stored them, for the same model identity (the cache's key)."""
    sources: dict[str, int] = {}
    for session in info.sessions:
        for run, n in session.cache_sources.items():
            sources[run] = sources.get(run, 0) + n
    if not sources:
        return []
    named = "; ".join(f"{n} stored by {run}" for run, n in
                      sorted(sources.items(), key=lambda kv: -kv[1]))
    return [Note(f"Answers from the response cache: {named}. The cache answers only for the "
                 "same model as its server describes it (the line above), never for a model "
                 "name alone.")]


def browser_data(view: OpenedRun, definition: BenchmarkDefinition, thumb_limit: int,
                 row_limit: int = ROW_LIMIT, ready: Mapping[str, str | bytes] | None = None,
                 read: BrowserRows | None = None) -> tuple[dict[str, Any], str]:
    """The JSON behind the sample browser: at most `row_limit` rows (failures first, see
    `selection`), their de-duplicated prompt texts and thumbnails (`ready`: prepared while
    the run went on); and a note on what the page leaves out. The journal is streamed
    once, unless `read` holds the rows of every record already (`browser_rows.LiveRows`,
    read while the run went on) with the same definition and limit."""
    if read is None or type(read.definition) is not type(definition) or \
            read.row_limit != row_limit:
        read = BrowserRows(definition, row_limit)
        for record in view.iter_records(variants=True, epochs=True):
            read.add(record)
    chosen, groups, labels, views = read.chosen, read.groups, read.labels, read.views
    kept = chosen.rows()
    texts: dict[str, int] = {}
    for _, row in kept:
        row["p"] = texts.setdefault(row["p"], len(texts))
    wanted = list(dict.fromkeys(row["img"] for _, row in sorted(kept, key=lambda k: k[0])
                               if row["img"]))
    found, thumb_note = thumbs.collect(view, wanted, thumb_limit, ready)
    keys = {sha: f"i{i}" for i, sha in enumerate(found)}
    rows = [row for _, row in kept]
    for row in rows:
        row["img"] = keys.get(row["img"]) if row["img"] else None
    data = {"views": list(views), "groups": sorted(groups), "labels": sorted(labels),
            "texts": list(texts), "thumbs": {keys[s]: url for s, url in found.items()},
            "rows": rows, "total": chosen.total}
    return data, " ".join(n for n in (rows_note(view, chosen), thumb_note) if n)


def rows_note(view: OpenedRun, chosen: Selection) -> str:
    """What the page leaves out, and where to see it."""
    left = chosen.total - len(chosen.rows())
    if left <= 0:
        return ""
    counts = ", ".join(f"{n} {kind}" for kind, n in zip(KINDS, chosen.seen, strict=True) if n)
    return (f"This page embeds {chosen.total - left} of the run's {chosen.total} samples "
            f"({counts}): errors, unparsed and wrong answers first, then a spread of the "
            f"rest. The other {left} are in samples.jsonl; `visioneval view {view.directory}` "
            "browses every sample, with thumbnails, in a local page.")


def try_write_report(directory: Path, definition: registry.Named = None,
                     thumbnails: Mapping[str, str | bytes] | None = None,
                     rows: BrowserRows | None = None) -> Path | None:
    """The end-of-run report of a run this process has just made, resumed, merged or
    re-scored; a failure is a warning, never a failed run. `definition`: the one the run
    used (the object, or the module:attribute the user named); None: the one run.json
    records if this process has already imported it (`registry.imported_here`: it has
    just run that code), else the trust rule of any reading (`registry.for_run`).
    `thumbnails`: what the run prepared for them while it went on (`report.early`), by
    image sha256: thumbnails made, and images to make them from if shown; `rows`: the
    browser's rows, read with the run's metrics while it went on (`report.browser_rows`)."""
    try:
        return write_page(just_made(directory, definition), RUN_END_THUMBS, ready=thumbnails,
                          rows=rows)
    except Exception as exc:  # the run's results are safe; only the page is missing

        log.warning("report.html not written: %s: %s (run `%s`)",
                    type(exc).__name__, exc, command("report", directory))
        return None
