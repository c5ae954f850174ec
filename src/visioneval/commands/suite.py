"""`visioneval suite`: a whole evaluation in one command, from a suite file or from
`--benchmarks a,b` on the command line; then one comparison page across its runs."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from visioneval.commands.common import consoles, guarded
from visioneval.core import registry
from visioneval.core.backend_spec import split_urls
from visioneval.invocation import command
from visioneval.runs.exit_codes import EXIT_INTERRUPTED
from visioneval.runs.output import Output
from visioneval.suite import report, spec
from visioneval.suite.dryrun import show
from visioneval.suite.execute import SuiteRecord, execute
from visioneval.suite.plan import SuitePlan, plan
from visioneval.terminal import print_command, setup_logging


@dataclass(frozen=True)
class Shortcut:
    """`--benchmarks a,b` with one model from the flags, each benchmark's options as
    `-o benchmark.option=value` (lists comma-separated)."""

    benchmarks: tuple[str, ...]
    backend: str | None
    model: str | None
    base_url: tuple[str, ...] = ()
    api_key_env: str | None = None
    options: tuple[str, ...] = ()
    price_in: float | None = None
    price_out: float | None = None
    concurrency: int | None = None
    name: str = "benchmarks"
    vary: dict[str, list[Any]] = field(default_factory=dict)

    def suite(self) -> spec.SuiteFile:
        if self.backend is None or self.model is None:
            raise ValueError("--benchmarks needs --backend and --model (or give a suite file)")
        per: dict[str, dict[str, Any]] = {name: {} for name in self.benchmarks}
        for item in self.options:
            key, eq, value = item.partition("=")
            bench, dot, option = key.strip().partition(".")
            if not eq or not dot or bench not in per:
                raise ValueError(f"-o {item!r}: write benchmark.option=value, for one of "
                                 f"{', '.join(self.benchmarks)}")
            name = option.strip().replace("-", "_")
            if found := registry.definition(bench).unknown_option([name]):
                raise ValueError(f"-o {key.strip()}: {found[1]}")
            per[bench][name] = _value(bench, name, value)
        model: dict[str, Any] = {"backend": self.backend, "model": self.model}
        extra = {"base_url": list(self.base_url) or None, "api_key_env": self.api_key_env,
                 "price_in": self.price_in, "price_out": self.price_out,
                 "concurrency": self.concurrency}
        model |= {k: v for k, v in extra.items() if v is not None}
        return spec.parse({"name": self.name, "models": [model],
                           "benchmarks": [{"name": b, "options": per[b]}
                                          for b in self.benchmarks]}, "the command line")


def _value(benchmark: str, option: str, text: str) -> Any:
    """A command-line option value as the benchmark's options model takes it: a list
    option's value split at commas; anything else as text (the model converts numbers and
    booleans, and names a bad value)."""
    model = registry.definition(benchmark).command_options
    field = model.model_fields.get(option) if model is not None else None
    if field is not None and _is_list(field.annotation):
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


def _is_list(annotation: Any) -> bool:
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_is_list(a) for a in get_args(annotation))
    return get_origin(annotation) is list


def suite(file: Path | None, *, benchmarks: str | None, backend: str | None,
          model: str | None, base_url: Sequence[str] | None, api_key_env: str | None,
          options: Sequence[str] | None, price_in: float | None, price_out: float | None,
          concurrency: int | None, out: Path | None, dry_run: bool, progress: bool,
          report: bool, verbose: bool) -> int:
    """`visioneval suite`'s flags: a suite file, or `--benchmarks` with one model; the
    suite planned and run (or, with `dry_run`, its estimate); its exit code, or 2 with one
    line."""
    console, err = consoles()
    setup_logging(err, verbose)

    def action() -> int:
        shortcut = shortcut_from(benchmarks, backend, model, base_url, api_key_env, options,
                                 price_in, price_out, concurrency)
        output = Output(console, err, progress=progress, report=report)
        return run(file, shortcut, out, output, dry_run)

    return guarded(err, action)


def run(file: Path | None, shortcut: Shortcut | None, out: Path | None, output: Output,
        dry_run: bool) -> int:
    """Plan, then (unless `dry_run`) run every run not finished, then the comparison.
    Exit code: 0 every run finished with every sample scored, 1 some samples or runs
    failed, 2 the suite could not start, 130 interrupted."""
    if file is not None and shortcut is not None:
        raise ValueError("give a suite file or --benchmarks, not both")
    if file is not None:
        suite = spec.load(file)
    elif shortcut is not None:
        suite = shortcut.suite()
    else:
        raise ValueError("give a suite file (TOML) or --benchmarks a,b with --backend and "
                         "--model")
    planned = plan(suite, out, file.stem if file is not None else "benchmarks",
                   str(file) if file is not None else "the command line")
    if dry_run:
        return show(planned, output.console)
    again = command("suite", file, *(("--out", out) if out is not None else ())) \
        if file is not None else "the same command"
    return _execute(planned, str(file) if file is not None else "the command line", output,
                    again)


def _execute(planned: SuitePlan, source: str, output: Output, again: str) -> int:
    record = SuiteRecord(planned, source)
    record.save()
    output.err.print(f"suite {planned.name}: {len(planned.runs)} runs, {len(planned.lanes)} at a "
                     f"time (runs on the same server go one after another) -> {planned.out}",
                     highlight=False, markup=False)
    try:
        outcomes = asyncio.run(execute(planned, record, output.err, output.progress,
                                       output.report))
    except KeyboardInterrupt:
        record.end("interrupted")
        print_command(output.err, f"interrupted: what finished is kept in {planned.out}; "
                                  "continue every unfinished run with:", again, style="yellow")
        return EXIT_INTERRUPTED
    found = report.parts(planned, outcomes)
    paths = report.write(planned, outcomes, found)
    report.show(output.console, outcomes, found)
    failed = [o for o in outcomes if o.status == "failed"]
    record.end("finished with failures" if failed else "finished")
    for path in paths:
        output.console.print(f"wrote {path}", highlight=False, markup=False)
    if failed:
        print_command(output.err, f"{len(failed)} of {len(outcomes)} runs failed (said above "
                                  "and in suite.json); fix what they say, then run again "
                                  "(finished runs are not run again):", again, style="yellow")
    return 1 if failed or any(o.errors for o in outcomes) else 0


def benchmarks_list(text: str | None) -> tuple[str, ...]:
    return tuple(b.strip() for b in (text or "").split(",") if b.strip())


def shortcut_from(benchmarks: str | None, backend: str | None, model: str | None,
                  base_url: Sequence[str] | None, api_key_env: str | None,
                  options: Sequence[str] | None, price_in: float | None,
                  price_out: float | None, concurrency: int | None) -> Shortcut | None:
    names = benchmarks_list(benchmarks)
    if not names:
        given = [flag for flag, v in (("--backend", backend), ("--model", model),
                                      ("-o", options)) if v]
        if given:
            raise ValueError(f"{', '.join(given)} go with --benchmarks (a suite file names "
                             "its models and options itself)")
        return None

    return Shortcut(names, backend, model, split_urls(base_url), api_key_env,
                    tuple(options or ()), price_in, price_out, concurrency)
