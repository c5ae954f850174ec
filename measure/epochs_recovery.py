"""`--epochs`' variance split recovers a model's known answer variation.

Each run starts the loopback server with `--answer varying:A,B` (its seed the run's): every
item has its own chance of a right answer drawn from Beta(A, B), and every request is right
with that chance, drawn anew per request seed. visioneval runs the known-items benchmark
(examples/epochs/known_items.py: the right answer is always option A) with `--epochs K`
through real HTTP, and reads epochs.json. The true values are the Beta's:

    mean score        A / (A + B)
    between items     Var(p) = AB / ((A + B)^2 (A + B + 1))
    within items      E[p (1 - p)] = AB / ((A + B) (A + B + 1))
    answer share      (within / K) / (between + within / K)

and each run's 95% intervals should cover them in about 95% of runs. Beside it, the same
spend (items x K answers) put into K times as many items asked once: Miller's argument says
that interval is narrower whenever the items differ at all; and the same items asked once
with `--score expected` (the server reports each answer's chances as log-probabilities):
one request per item, no sampling within an answer, so a narrower interval than the sampled
first answers at the same spend.

Run by hand (about ten minutes on two cores):
    uv run python measure/epochs_recovery.py --runs 200 --items 100 --epochs 4
The table goes into docs/epochs.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "examples" / "epochs"))

from known_items import KnownItems, Options  # noqa: E402

from visioneval import api  # noqa: E402
from visioneval.engine.options import EngineOptions  # noqa: E402
from visioneval.loopback.server import ServerScript, ThreadedServer  # noqa: E402
from visioneval.loopback.varying import answer_varying, between_within  # noqa: E402

SETTINGS = ((2.0, 1.0), (0.5, 0.5))


@dataclass
class Tally:
    runs: int = 0
    covered: dict[str, int] = field(default_factory=lambda: {
        "mean": 0, "between": 0, "within": 0, "share": 0, "expected": 0, "first": 0})
    estimates: dict[str, list[float]] = field(default_factory=lambda: {
        "between": [], "within": [], "share": []})
    width_epochs: list[float] = field(default_factory=list)
    width_first: list[float] = field(default_factory=list)
    width_items: list[float] = field(default_factory=list)
    width_expected: list[float] = field(default_factory=list)

    def coverage(self, key: str) -> str:
        share = self.covered[key] / self.runs
        error = math.sqrt(share * (1 - share) / self.runs)
        return f"{100 * share:.1f} ± {100 * error:.1f}%"


def _inside(interval: Sequence[float] | None, value: float) -> bool:
    return interval is not None and interval[0] <= value <= interval[1]


def _width(score: dict | None) -> float:
    interval = score.get("ci95") if score else None
    return 100 * (interval[1] - interval[0]) if interval else math.nan


def one_run(a: float, b: float, seed: int, items: int, epochs: int, root: Path) -> dict:
    """One seeded run with K epochs, and one of K x items asked once (the same spend)."""
    script = ServerScript(answer=answer_varying(a, b, seed), seed=seed)
    engine = EngineOptions(cache_path=None, concurrency=32)
    with ThreadedServer(script) as server:
        url = f"{server.base_url}/v1"
        repeated = api.run(KnownItems(Options(items=items)), model="m", base_url=url,
                           engine=engine, report=False, epochs=epochs,
                           out=root / f"k{seed}")
        once = api.run(KnownItems(Options(items=items * epochs)), model="m", base_url=url,
                       engine=engine, report=False, out=root / f"n{seed}")
        expected = api.run(KnownItems(Options(items=items)), model="m", base_url=url,
                           engine=engine, report=False, score="expected",
                           out=root / f"e{seed}")
    assert repeated.epochs is not None and expected.epochs is not None
    assert repeated.n_errors == once.n_errors == expected.n_errors == 0
    return {"epochs": repeated.epochs, "once": once.metrics, "expected": expected.epochs}


def measure(a: float, b: float, runs: int, items: int, epochs: int) -> Tally:
    between, within = between_within(a, b)
    share = (within / epochs) / (between + within / epochs)
    mean = a / (a + b)
    tally = Tally()
    with tempfile.TemporaryDirectory() as scratch:
        for seed in range(runs):
            found = one_run(a, b, seed, items, epochs, Path(scratch))
            summary, split = found["epochs"], found["epochs"]["split"]
            tally.runs += 1
            tally.covered["mean"] += _inside(summary["item_means"].get("ci95"), mean)
            tally.covered["first"] += _inside(summary["first_answers"].get("ci95"), mean)
            scored = found["expected"]["item_means"]
            tally.covered["expected"] += _inside(scored.get("ci95"), mean)
            tally.width_expected.append(_width(scored))
            tally.covered["between"] += _inside(split["between"].get("ci95"), between)
            tally.covered["within"] += _inside(split["within"].get("ci95"), within)
            tally.covered["share"] += _inside(split["within_share"].get("ci95"), share)
            for key, name in (("between", "between"), ("within", "within"),
                              ("share", "within_share")):
                tally.estimates[key].append(split[name]["value"])
            tally.width_epochs.append(_width(summary["item_means"]))
            tally.width_first.append(_width(summary["first_answers"]))
            overall = found["once"]["overall"]
            low, high = overall["accuracy_ci95"]
            tally.width_items.append(100 * (high - low))
    return tally


def _median(values: list[float]) -> float:
    ordered = sorted(v for v in values if not math.isnan(v))
    return ordered[len(ordered) // 2]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"{args.runs} runs a row, {args.items} items x {args.epochs} answers through the "
          "loopback server; coverage of the 95% intervals ± one Monte Carlo standard error")
    print("| Beta(A, B) | between (true) | within (true) | answer share (true) | mean score "
          "| between | within | answer share |")
    print("|---|---|---|---|---|---|---|---|")
    widths = []
    for a, b in SETTINGS:
        tally = measure(a, b, args.runs, args.items, args.epochs)
        between, within = between_within(a, b)
        share = (within / args.epochs) / (between + within / args.epochs)
        print(f"| ({a:g}, {b:g}) | {between:.4f} (median est. "
              f"{_median(tally.estimates['between']):.4f}) | {within:.4f} "
              f"({_median(tally.estimates['within']):.4f}) | {100 * share:.0f}% "
              f"({100 * _median(tally.estimates['share']):.0f}%) | {tally.coverage('mean')} "
              f"| {tally.coverage('between')} | {tally.coverage('within')} "
              f"| {tally.coverage('share')} |")
        widths.append((a, b, tally))
    print()
    print("Median width of the 95% interval of the score in points, and how often it holds the "
          "true mean score")
    print(f"| Beta(A, B) | first answers, sampled ({args.items} requests) | expected scores "
          f"({args.items} requests) | item means ({args.items} x {args.epochs}) "
          f"| {args.items * args.epochs} items once |")
    print("|---|---|---|---|---|")
    for a, b, tally in widths:
        print(f"| ({a:g}, {b:g}) | {_median(tally.width_first):.1f} "
              f"({tally.coverage('first')}) | {_median(tally.width_expected):.1f} "
              f"({tally.coverage('expected')}) | {_median(tally.width_epochs):.1f} "
              f"({tally.coverage('mean')}) | {_median(tally.width_items):.1f} |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
