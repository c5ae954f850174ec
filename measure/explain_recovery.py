"""Does `visioneval explain` find causes of known size? A scripted model on the loopback server
answers MMVP with differences built in, one per cause, and each run's explanation is compared
with what was built:

- a server that halves every image (`downscale 2`): the model answers right with probability
  P_HI when it receives a long side of 280 px or more, P_LO below (the same draw u per item,
  so the two are nested). The stored images are 640 px (320 px arrive); the run's variant
  `max-side:448` shows the model 224 px, as a model with a 224-px encoder saw them. The
  transport step is their pair-accuracy difference: by design 100·(P_HI² − P_LO²).
- a parser difference: a share F_EXTRACT of items is answered "It is <option>." (no letter):
  the paper's reading finds the option's text, lmms-eval's regular expressions find no
  letter (lmms_eval/tasks/mmvp/utils.py lines 32-67), so every such right answer is lost.
- a prompt difference: a share F_PROMPT of the other items is answered with the other
  option when the prompt is lmms-eval's.
- a label set with known swaps: lmms-eval's copy changes four labels (99, 100, 279, 280).

Each item's draw is known, so the script computes what each step must be in this run (the
realised value, which explain must equal) and what it is by design (the expectation, which
the step's 95% interval should cover). The image tells the model which item it is: every
image is one flat colour coding its index, which resizing keeps.

    uv run python measure/explain_recovery.py --runs 100

prints, per step, the mean realised and found values, the largest difference between them,
the design value and how often the interval covered it.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

import visioneval
from visioneval.backends.registry import BackendSpec
from visioneval.benchmarks.mmvp.spec import LMMS_EVAL_CHANGES
from visioneval.benchmarks.mmvp.synth import write_synthetic
from visioneval.commands.explain import ExplainRequest, explanations
from visioneval.core import registry
from visioneval.core.engine_options import EngineOptions
from visioneval.core.records import GenerationSettings
from visioneval.core.rundir import load
from visioneval.harness.waterfall import Explanation, moves_interval
from visioneval.loopback.server import Prompt, ServerScript, ThreadedServer, answer_canary
from visioneval.probe import reader
from visioneval.runs.spec import RunSpec

N = 300  # MMVP's size: 150 pairs
SIDE = 640  # the stored images' side: 320 px arrive
SEEN_SIDE = 280  # the model answers at P_HI from this long side up
P_HI, P_LO = 0.8, 0.5
F_EXTRACT, F_PROMPT = 0.15, 0.10
VARIANT = "max-side:448"  # through a server that halves: 224 px, what a CLIP ViT-B model saw
LMMS = "lmms-eval"
OPTIONS = ("Up", "Down")
STEPS = ("label set", "extraction", "prompt", "protocol", "image transport")


@dataclass(frozen=True)
class Draws:
    """One run's script: per item (1-based), the uniform draw u of being right and v of
    which answer form it gets; the paper's labels as the data holds them."""

    seed: int
    u: dict[int, float]
    v: dict[int, float]
    labels: dict[int, str]  # "a" or "b"

    @classmethod
    def make(cls, seed: int, labels: dict[int, str]) -> Draws:
        rng = random.Random(seed)
        u = {i: rng.random() for i in labels}
        v = {i: rng.random() for i in labels}
        return cls(seed, u, v, labels)

    def right(self, i: int, high: bool) -> bool:
        return self.u[i] < (P_HI if high else P_LO)

    def unlettered(self, i: int) -> bool:
        return self.v[i] < F_EXTRACT

    def flips_on_lmms(self, i: int) -> bool:
        return F_EXTRACT <= self.v[i] < F_EXTRACT + F_PROMPT


def colour(index: int) -> tuple[int, int, int]:
    return tuple(((index >> shift) % 8) * 32 + 16 for shift in (0, 3, 6))  # type: ignore[return-value]


def index_of(image: Image.Image) -> int:
    r, g, b = (round((c - 16) / 32) for c in image.convert("RGB").getpixel(
        (image.width // 2, image.height // 2)))
    return r + (g << 3) + (b << 6)


def write_data(root: Path, n: int = N) -> dict[int, str]:
    """MMVP's layout (Questions.csv and MMVP Images/), `n` questions, every one "Up or Down"
    and each image one flat colour coding its index; returns the paper's labels."""
    questions = write_synthetic(root, n, seed=0)
    rows = list(csv.DictReader(io.StringIO(questions.read_text())))
    labels: dict[int, str] = {}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    for row in rows:
        index = int(row["Index"])
        row["Question"] = "Does the arrow point up or down?"
        row["Options"] = f"(a) {OPTIONS[0]} (b) {OPTIONS[1]}"
        labels[index] = row["Correct Answer"].strip("()")
        writer.writerow(row)
        Image.new("RGB", (SIDE, SIDE), colour(index)).save(
            root / "MMVP Images" / f"{index}.jpg", quality=95)
    questions.write_text(out.getvalue())
    return labels


def answerer(draws: Draws):  # noqa: ANN201 - the loopback server's Answerer
    def answer(prompt: Prompt) -> str:
        if reader.is_canary_question(prompt.text):
            return answer_canary(prompt)
        data = prompt.last_image()
        assert data is not None
        with Image.open(io.BytesIO(data)) as image:
            index, high = index_of(image), max(image.size) >= SEEN_SIDE
        chosen = draws.labels[index] if draws.right(index, high) else \
            ("b" if draws.labels[index] == "a" else "a")
        if "Answer with the option's letter" in prompt.text and draws.flips_on_lmms(index):
            chosen = "b" if chosen == "a" else "a"
        text = OPTIONS[0] if chosen == "a" else OPTIONS[1]
        return f"It is {text}." if draws.unlettered(index) else f"({chosen}) {text}"

    return answer


def lmms_labels(labels: dict[int, str]) -> dict[int, str]:
    """lmms-eval's copy: the four labels it changes, where the data holds the original."""
    out = dict(labels)
    for index, (original, changed) in LMMS_EVAL_CHANGES.items():
        if index in out and f"({out[index]})" == original:
            out[index] = changed.strip("()")
    return out


def pair_accuracy(verdicts: dict[int, float]) -> float:
    pairs = [verdicts[i] * verdicts[i + 1] for i in range(1, len(verdicts) + 1, 2)]
    return 100 * sum(pairs) / len(pairs)


def realised(draws: Draws) -> dict[str, float]:
    """What each step must be in this run, from the script alone."""
    moves = per_item_moves(draws)
    s0 = {i: float(draws.right(i, True)) for i in draws.u}
    s1 = {i: s0[i] + moves["label set"][k] for k, i in enumerate(s0)}
    s3 = {i: 0.0 if draws.unlettered(i) else (1 - s1[i]) if draws.flips_on_lmms(i) else s1[i]
          for i in s0}
    low = {i: float(draws.right(i, False)) for i in s0}
    out = {name: 100 * sum(m) / len(m) for name, m in moves.items()}
    return out | {"protocol": pair_accuracy(s3) - pair_accuracy(s0),
                  "image transport": pair_accuracy(s0) - pair_accuracy(low)}


def designed(labels: dict[int, str]) -> dict[str, float]:
    """Each step's expectation over the script's draws."""
    n = len(labels)
    swapped = sum(1 for i in labels if lmms_labels(labels)[i] != labels[i])
    right_s1 = (n - swapped) * P_HI + swapped * (1 - P_HI)
    return {"label set": 100 * swapped * (1 - 2 * P_HI) / n,
            "extraction": -100 * F_EXTRACT * right_s1 / n,
            "prompt": 100 * F_PROMPT * (n - 2 * right_s1) / n,
            "image transport": 100 * (P_HI ** 2 - P_LO ** 2)}


def per_item_moves(draws: Draws) -> dict[str, list[float]]:
    """Each item's move under each per-item cause (what explain's parts sum), by the script."""
    lmms = lmms_labels(draws.labels)
    s0 = {i: float(draws.right(i, True)) for i in draws.u}
    s1 = {i: (1 - s0[i]) if lmms[i] != draws.labels[i] else s0[i] for i in s0}
    return {"label set": [s1[i] - s0[i] for i in s0],
            "extraction": [-s1[i] if draws.unlettered(i) else 0.0 for i in s0],
            "prompt": [(1 - 2 * s1[i]) if draws.flips_on_lmms(i) else 0.0 for i in s0]}


def draws_coverage(labels: dict[int, str], seeds: range) -> dict[str, float]:
    """The per-item parts' interval (harness.waterfall: the normal interval of a mean of
    moves, their variance bounded by the share of items moved) applied to the draws of many
    more runs without the server: explain finds each part's realised value exactly (above),
    so its interval is this one."""
    design = designed(labels)
    covered = dict.fromkeys(("label set", "extraction", "prompt"), 0)
    for seed in seeds:
        for name, moves in per_item_moves(Draws.make(seed, labels)).items():
            low, high = moves_interval(100 * sum(moves) / len(moves),
                                       sum(1 for m in moves if m), len(moves))
            covered[name] += low <= design[name] <= high
    return {name: count / len(seeds) for name, count in covered.items()}


def run_once(data: Path, labels: dict[int, str], seed: int, out: Path,
             probe: bool = True) -> Explanation:
    """One run through a server that halves images, then its explanation (lmms-eval's)."""
    draws = Draws.make(seed, labels)
    script = ServerScript(models=("scripted",), answer=answerer(draws), downscale=2.0)
    benchmark = registry.definition("mmvp").build({"data_dir": str(data)})
    with ThreadedServer(script) as server:
        spec = RunSpec.of(benchmark, backend=BackendSpec(
            kind="openai", model="scripted", base_url=server.base_url + "/v1"),
            variants=(VARIANT,), probe_resolution=probe, out=out,
            generation=GenerationSettings(temperature=0.0, max_tokens=64),
            engine=EngineOptions(concurrency=16))
        visioneval.run_request(spec, report=False)
    (found,) = explanations(load(out), ExplainRequest(out, paper_value=24.7, protocol=LMMS))
    return found


@dataclass(frozen=True)
class FoundStep:
    """A step of explain's table, as the script compares it."""

    points: float
    interval: tuple[float, float] | None


def found_steps(explanation: Explanation) -> dict[str, FoundStep]:
    out = {}
    for name in STEPS:
        step = explanation.step(name)
        if step is not None:
            out[name] = FoundStep(step.points or 0.0, step.interval)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--questions", type=int, default=N, help="MMVP's 300 by default")
    parser.add_argument("--coverage-draws", type=int, default=0, metavar="N",
                        help="also: the per-item parts' coverage over N more runs' draws, "
                             "without the server")
    args = parser.parse_args(argv)
    rows: dict[str, list[tuple[float, float, bool, float | None]]] = {s: [] for s in STEPS}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        labels = write_data(data, args.questions)
        design = designed(labels)
        started = time.perf_counter()
        for seed in range(args.first_seed, args.first_seed + args.runs):
            found = found_steps(run_once(data, labels, seed, Path(tmp) / f"run{seed}"))
            truth = realised(Draws.make(seed, labels))
            for name in STEPS:
                step = found[name]
                expect = design.get(name)
                covered = step.interval is not None and expect is not None and \
                    step.interval[0] <= expect <= step.interval[1]
                half = (step.interval[1] - step.interval[0]) / 2 if step.interval else None
                rows[name].append((truth[name], step.points, covered, half))
        seconds = time.perf_counter() - started
    print(f"{args.runs} runs of MMVP ({args.questions} questions) through a server that halves "
          f"images ({seconds:.0f} s)")
    print(f"{'step':<16}{'realised':>10}{'found':>8}{'max |diff|':>12}{'design':>8}"
          f"{'covered':>9}{'SD':>7}{'half/1.96':>11}")
    for name in STEPS:
        got = rows[name]
        found = [f for _, f, _, _ in got]
        worst = max(abs(t - f) for t, f, _, _ in got)
        design_text = f"{design[name]:+.1f}" if name in design else "-"
        covered = f"{sum(c for _, _, c, _ in got) / len(got):.0%}" if name in design else "-"
        spread = f"{statistics.stdev(found):.2f}" if len(found) > 1 else "-"
        halves = [h for *_, h in got if h is not None]
        width = f"{statistics.fmean(halves) / 1.96:.2f}" if halves else "-"
        print(f"{name:<16}{statistics.fmean(t for t, _, _, _ in got):>+10.2f}"
              f"{statistics.fmean(found):>+8.2f}{worst:>12.2g}"
              f"{design_text:>8}{covered:>9}{spread:>7}{width:>11}")
    print("SD: of the step's value across runs; half/1.96: the mean interval's half-width "
          "over 1.96 (the standard error it implies)")
    if args.coverage_draws:
        first = args.first_seed + args.runs
        shares = draws_coverage(labels, range(first, first + args.coverage_draws))
        print(f"per-item parts over {args.coverage_draws} more runs' draws: " + ", ".join(
            f"{name} {share:.1%}" for name, share in shares.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
