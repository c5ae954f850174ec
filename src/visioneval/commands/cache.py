"""What `visioneval cache` prints: the cache's entries grouped by the run that stored them and
the model identity that answered, and how many a clear removed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import orjson
from rich.console import Console

from visioneval.backends.served import describe
from visioneval.commands.common import consoles, guarded
from visioneval.core.printed import table
from visioneval.engine import cache
from visioneval.invocation import command
from visioneval.terminal import line


def list_entries(cache_dir: Path | None) -> int:
    """`visioneval cache list`: every group of cached answers."""
    console, err = consoles()
    return guarded(err, lambda: show_groups(console, cache_dir, None, None))


def show(run: Path | None, model: str | None, cache_dir: Path | None) -> int:
    """`visioneval cache show`: the groups of one run or one model (one of them is needed)."""
    console, err = consoles()

    def action() -> int:
        if run is None and model is None:
            raise ValueError("give --run RUN_DIR or --model NAME (or use "
                             f"`{command('cache', 'list')}` for everything)")
        return show_groups(console, cache_dir, run, model)

    return guarded(err, action)


def clear(run: Path | None, model: str | None, all_entries: bool,
          cache_dir: Path | None) -> int:
    """`visioneval cache clear`: what to clear said outright (a run, a model, or --all
    alone)."""
    console, err = consoles()

    def action() -> int:
        if run is None and model is None and not all_entries:
            raise ValueError("say what to clear: --run RUN_DIR, --model NAME or --all")
        if all_entries and (run is not None or model is not None):
            raise ValueError("--all clears everything: give it alone, or --run/--model")
        return clear_entries(console, cache_dir, run, model)

    return guarded(err, action)


def cache_folder(cache_dir: Path | None) -> Path:
    return cache_dir if cache_dir is not None else cache.default_cache_path().parent


def show_groups(console: Console, cache_dir: Path | None, run: Path | None,
                model: str | None) -> int:
    folder = cache_folder(cache_dir)
    files = cache.cache_files(folder)
    if not files:
        line(console, f"no response cache in {folder}")
        return 0
    run_key = str(run.resolve()) if run is not None else None
    total = 0
    for path in files:
        rows = []
        for group in cache.groups(path, run=run_key, model=model):
            total += group.entries
            rows.append([group.run or cache.UNRECORDED, _identity(group.identity, group.model),
                         str(group.entries), _when(group.last)])
        if rows:
            line(console, f"{path}:")
            console.print(table(["run that stored them", "model (what its server serves)",
                                 "answers", "last written"], rows, numeric_from=2, text=(3,)))
    if not total:
        what = " and ".join(x for x in (f"run {run_key}" if run_key else "",
                                        f"model {model}" if model else "") if x)
        line(console, f"no cached answers{' of ' + what if what else ''} in {folder}")
        return 0
    line(console, f"{total} cached answers in {folder}")
    return 0


def clear_entries(console: Console, cache_dir: Path | None, run: Path | None,
                  model: str | None) -> int:
    folder = cache_folder(cache_dir)
    run_key = str(run.resolve()) if run is not None else None
    removed = sum(cache.clear(path, run=run_key, model=model)
                  for path in cache.cache_files(folder))
    line(console, f"removed {removed} cached answers from {folder}")
    return 0


def _identity(text: str | None, model: str | None) -> str:
    if not text:
        return model or "?"
    try:
        identity = orjson.loads(text)
    except orjson.JSONDecodeError:
        return model or "?"
    return describe(identity) if isinstance(identity, dict) else model or "?"


def _when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")
