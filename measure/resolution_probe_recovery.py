"""Does `visioneval probe resolution` recover a known reduction? Each run sends the default
canary series (16 period bands x 10 trials = 160 requests, 2048-pixel canvas) over HTTP to
a loopback server that reduces every image by a known factor F before its canary reader
looks (`visioneval loopback --answer canary --downscale F`, Lanczos), one run per design
seed, and compares the probe's reduction factor (threshold period / baseline period) with F.

Per factor: the probe's verdicts (loss / no loss / not measured), coverage of F by the 95%
interval of the factor (an open upper end counts as +inf; a run without a factor covers
nothing), median error (estimate / F - 1), median absolute error, median interval width
over F, the median threshold period over F (the reader's threshold in the pixels it
receives: what the baseline constant should be) and wall time per run. F = 1 is recovered
when the verdict is "no loss". `--max-side N` adds a row for a server that brings a long
edge over N down to N (F = long side / N).

    uv run python measure/resolution_probe_recovery.py --runs 100

`--costs` instead times the per-image work (CPU time): drawing a canary, the server's
reduction (decode, Lanczos, PNG) and the canary reader, median of 40 images.

    uv run python measure/resolution_probe_recovery.py --costs

`--baseline` scores the runs against another baseline period (the factor is threshold /
baseline), to check the constant in `probe.resolution` against the measured ratio;
`--dump FILE` appends every run's result as it finishes and `--from FILE` scores those again without
running them.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from visioneval.backends.registry import BackendSpec
from visioneval.loopback.server import ServerScript, ThreadedServer, answer_canary
from visioneval.probe.canary import CanaryDesign
from visioneval.probe.resolution import (
    READER_BASELINE_PERIOD,
    ProbeSettings,
    ResolutionEstimate,
    measure_resolution,
)


@dataclass(frozen=True)
class Case:
    """One server: each side divided by `downscale`, or the long edge capped at `max_side`."""

    label: str
    factor: float  # the true reduction
    downscale: float | None = None
    max_side: int | None = None


@dataclass(frozen=True)
class RunResult:
    label: str
    factor: float
    seed: int
    seconds: float
    status: str
    threshold: float | None
    low: float | None
    high: float | None  # math.inf: open
    n_errors: int


def one_run(case: Case, seed: int, long_side: int, resamples: int) -> RunResult:
    script = ServerScript(answer=answer_canary, downscale=case.downscale,
                          max_side=case.max_side)
    settings = ProbeSettings(design=CanaryDesign(long_side=long_side, seed=seed),
                             resamples=resamples)
    with ThreadedServer(script) as server:
        start = time.perf_counter()
        found: ResolutionEstimate = measure_resolution(
            BackendSpec(kind="openai", model="m", base_url=f"{server.base_url}/v1"), settings)
        seconds = time.perf_counter() - start
    low, high = (found.interval[0], math.inf if found.interval[1] is None
                 else found.interval[1]) if found.interval else (None, None)
    return RunResult(case.label, case.factor, seed, seconds, found.status,
                     found.threshold_period, low, high, found.n_errors)


def _star(args: tuple[Case, int, int, int]) -> RunResult:
    return one_run(*args)


def summarize(case: Case, runs: list[RunResult], baseline: float) -> str:
    verdicts = {s: sum(r.status == s for r in runs) for s in ("loss", "no loss",
                                                              "not measured")}
    ratio = [r.threshold / case.factor for r in runs if r.threshold is not None]
    if case.factor == 1.0:
        recovered = f"{verdicts['no loss'] / len(runs):.0%} say no loss"
        return (f"| {case.label} | {len(runs)} | {verdicts['loss']}/{verdicts['no loss']}/"
                f"{verdicts['not measured']} | {recovered} | - | - | - | - | "
                f"{statistics.median(r.seconds for r in runs):.1f} s |")
    measured = [r for r in runs if r.threshold is not None and r.low is not None]
    covers = sum(r.low / baseline <= case.factor <= r.high / baseline  # type: ignore[operator]
                 for r in measured)
    errors = [r.threshold / baseline / case.factor - 1 for r in measured]  # type: ignore[operator]
    widths = [(r.high - r.low) / baseline / case.factor for r in measured]  # type: ignore[operator]

    def med(values: list[float], fmt: str) -> str:
        return format(statistics.median(values), fmt) if values else "-"

    return (f"| {case.label} | {len(runs)} | {verdicts['loss']}/{verdicts['no loss']}/"
            f"{verdicts['not measured']} | {covers / len(runs):.0%} | {med(errors, '+.1%')} | "
            f"{med([abs(e) for e in errors], '.1%')} | {med(widths, '.0%')} | "
            f"{med(ratio, '.3f')} | {statistics.median(r.seconds for r in runs):.1f} s |")


def costs(long_side: int, images: int = 40) -> None:
    """Median CPU milliseconds per image of each step."""
    import pybase64

    from visioneval.loopback.resize import resized
    from visioneval.loopback.server import Prompt
    from visioneval.probe.canary import QUESTION, render, series

    canaries = series(CanaryDesign(long_side=long_side))[::max(1, 160 // images)]

    def timed(step, items):  # type: ignore[no-untyped-def]
        spent, out = [], []
        for item in items:
            start = time.process_time()  # CPU time: a busy machine does not inflate it
            out.append(step(item))
            spent.append(time.process_time() - start)
        return statistics.median(spent) * 1000, out

    draw_ms, pngs = timed(render, canaries)
    size_kb = statistics.median(map(len, pngs)) / 1000
    print(f"canary {long_side} px: draw {draw_ms:.1f} ms, PNG {size_kb:.0f} kB")
    for factor in (2.0, 4.0):
        cut_ms, small = timed(functools.partial(resized, downscale=factor, max_side=None),
                              pngs)
        read_ms, _ = timed(lambda png: answer_canary(
            Prompt(QUESTION, [pybase64.b64encode(png).decode()])), small)
        print(f"  downscale {factor:g}: reduce {cut_ms:.1f} ms, read {read_ms:.1f} ms")
    read_ms, _ = timed(lambda png: answer_canary(
        Prompt(QUESTION, [pybase64.b64encode(png).decode()])), pngs)
    print(f"  no reduction: read {read_ms:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="seeded runs per factor")
    parser.add_argument("--factors", default="1,1.5,2,3,4", help="downscale factors")
    parser.add_argument("--max-side", type=int, action="append", default=[],
                        help="also a server capping the long edge at N (repeatable)")
    parser.add_argument("--long-side", type=int, default=2048)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baseline", type=float, default=READER_BASELINE_PERIOD)
    parser.add_argument("--dump", type=Path, help="write every run's result here (JSON lines)")
    parser.add_argument("--from", dest="source", type=Path,
                        help="score the runs a --dump wrote instead of running them")
    parser.add_argument("--costs", action="store_true", help="time the per-image steps")
    args = parser.parse_args()
    if args.costs:
        costs(args.long_side)
        return
    cases = [Case(f"downscale {f:g}", f, None if f == 1 else f)
             for f in (float(x) for x in args.factors.split(","))]
    cases += [Case(f"max-side {n} ({args.long_side} px sent)", args.long_side / n,
                   max_side=n) for n in args.max_side]
    jobs = [(case, seed, args.long_side, args.resamples) for case in cases
            for seed in range(args.runs)]
    start = time.perf_counter()
    if args.source is not None:
        results = [RunResult(**json.loads(line))
                   for line in args.source.read_text().splitlines()]
        cases = [c for c in cases if any(r.label == c.label for r in results)]
    else:
        results = []
        with ProcessPoolExecutor(args.workers) as pool:
            for result in pool.map(_star, jobs):
                results.append(result)
                if args.dump is not None:  # as they come: a long benchmark can be watched
                    with args.dump.open("a") as out:
                        out.write(json.dumps(asdict(result)) + "\n")
    print(f"{len(results)} runs in {time.perf_counter() - start:.0f} s, {args.workers} workers, "
          f"canvas {args.long_side} px, baseline {args.baseline:g} px, "
          f"{sum(r.n_errors for r in results)} failed requests")
    print("| server | runs | loss/no loss/not measured | 95% coverage of F | median error "
          "| median abs error | median CI width / F | median threshold / F | time per run |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case in cases:
        print(summarize(case, [r for r in results if r.label == case.label], args.baseline))
    ratios = [r.threshold / r.factor for r in results
              if r.threshold is not None and r.factor > 1]
    if ratios:
        print(f"threshold / F over every reduced run: median {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
