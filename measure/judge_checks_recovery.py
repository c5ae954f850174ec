"""Do the judge checks recover known flaws? Simulated judges with a known blind effect, a
known position bias and a known chance of noticing an edit grade seeded case sets; their
records go through the same reading as a run's (`evaluators.checks.JudgeChecks`), and we
count how often each verdict comes out and how often each 95% interval covers the truth.

    uv run python measure/judge_checks_recovery.py [--runs 200] [--cases 30]

A simulated case has a true quality q ~ U(0.4, 0.95). The judge's score for the case as
asked is q plus its noise (N(0, sd), clipped to [0, 1]); without the images it is
q - blind + noise; with the images swapped q - bias + noise; an edit it notices (with
probability p) costs 0.15 and is named in the detail list, one it misses leaves the score
as it was (plus noise) and unnamed. The verdicts are the run's (docs/judge-checks.md)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from visioneval.core.records import Record, Response
from visioneval.evaluators.checks import JudgeChecks
from visioneval.evaluators.edits import KINDS
from visioneval.evaluators.options import EvaluateOptions
from visioneval.evaluators.rubric import load_rubric

RUBRIC = load_rubric("image-description")
EVALUATOR = "judge:image-description"
DROP = 0.15


def record(case: str, control: str | None, score: float, named: bool = False,
           kind: str = "") -> Record:
    points = round(10 * score)
    details = {"threshold": 0.7, "dimensions": {d.key: {"mean": float(points)}
                                                for d in RUBRIC.dimensions},
               "hallucinations": ["a giraffe (not in the image)"] if named else [],
               "missing_elements": ["giraffe"] if named else []}
    meta = {"case": case, "evaluator": EVALUATOR, "kind": "judge"}
    if control:
        meta |= {"control": control, "control_of": f"{case}/{EVALUATOR}"}
    if control and control.startswith("edit:"):
        detail = "missing_elements" if kind == "missing" else "hallucinations"
        meta["edit"] = {"kind": kind, "change": "a giraffe", "markers": ["giraffe"],
                        "detail": detail}
    result = {"status": "processed", "score": points / 10, "passed": points >= 7,
              "details": details}
    return Record(id=f"{case}/{EVALUATOR}" + (f"+{control}" if control else ""),
                  group=EVALUATOR, target={"rubric": "image-description", "threshold": 0.7},
                  response=Response(text="{}"), parsed={"result": result}, metadata=meta)


def simulate(rng: np.random.Generator, cases: int, blind: float, bias: float, p: float,
             sd: float) -> JudgeChecks:
    checks = JudgeChecks(EvaluateOptions(cases="c", judge_controls=("blind", "order", "probes")),
                         {"image-description": RUBRIC}, "0" * 64)

    def noisy(value: float) -> float:
        return float(np.clip(value + rng.normal(0, sd), 0, 1)) if sd else value

    for i in range(cases):
        q, case = rng.uniform(0.4, 0.95), f"c{i}"
        asked = noisy(q)
        checks.add(record(case, None, asked))
        checks.add(record(case, "blind", noisy(q - blind)))
        checks.add(record(case, "order", noisy(q - bias)))
        for kind in KINDS:
            seen = rng.random() < p
            checks.add(record(case, f"edit:{kind}", noisy(asked - DROP) if seen else noisy(q),
                              named=seen, kind=kind))
    return checks


def covered(interval, value: float) -> bool:
    return interval is not None and interval[0] <= value <= interval[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cases", type=int, default=30)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    scenarios = [  # (name, blind effect, position bias, chance of noticing, noise sd)
        ("ignores the image, temperature 0", 0.0, 0.0, 0.0, 0.0),
        ("looks, no bias, notices 90%", 0.30, 0.0, 0.9, 0.05),
        ("small blind effect 0.05, bias 0.10, notices 50%", 0.05, 0.10, 0.5, 0.05),
        ("noisy judge (sd 0.15), bias 0.05, notices 20%", 0.0, 0.05, 0.2, 0.15),
    ]
    for name, blind, bias, p, sd in scenarios:
        verdicts: dict[str, list[str]] = {"blind": [], "order": [], "edits": []}
        cover = {"blind": [], "order": [], "edits": []}
        for seed in range(args.runs):
            card = simulate(np.random.default_rng(seed), args.cases, blind, bias, p,
                            sd).metrics().cards[0]
            b, o = card.blind[0], card.order[0]
            verdicts["blind"].append(b.finding)
            verdicts["order"].append(o.finding)
            if b.score is not None and sd:
                cover["blind"].append(covered(b.score.ci95, blind))
            if o.score is not None and sd:
                cover["order"].append(covered(o.score.ci95, bias))
            for probe in card.probes:
                verdicts["edits"].append(probe.verdict)
                cover["edits"].append(covered(probe.ci95, p))
        rows.append((name, verdicts, cover))
    for name, verdicts, cover in rows:
        print(f"\n{name} ({args.runs} runs of {args.cases} cases)")
        for check in ("blind", "order", "edits"):
            counts = {v: verdicts[check].count(v) for v in dict.fromkeys(verdicts[check])}
            shares = ", ".join(f"{v} {100 * c / len(verdicts[check]):.0f}%"
                               for v, c in counts.items())
            share = 100 * statistics.fmean(cover[check]) if cover[check] else None
            coverage = "" if share is None else f"; interval covers the truth in {share:.1f}%"
            print(f"  {check}: {shares}{coverage}")
    print(f"\n{time.perf_counter() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
