"""Could popout say "nothing stands out"? Its Detection answer is the feature with the
largest robust outlier score; this prints that score's distribution on SalBench-shaped
present and target-absent scenes (`synth.make_scene`, `synth.make_absent_scene`) and on the
psychophysics detection arrays (the same question), and, per candidate threshold, how many
present answers an "answer None at or below it" rule would change and how many absent
scenes would still get a feature (false alarms).

    uv run python measure/popout_absent.py [--scenes 300] [--seeds 0,1]

Figures: docs/decisions.md (popout and target-absent scenes)."""

from __future__ import annotations

import argparse

import numpy as np

from visioneval.baselines import popout
from visioneval.benchmarks.psychophysics.dataset import Design, trials
from visioneval.benchmarks.psychophysics.stimuli import make_stimulus
from visioneval.benchmarks.salbench.synth import (
    QUESTION_D,
    _png,
    make_absent_scene,
    make_scene,
)

THRESHOLDS = (1.0, 1.25, 1.4, 1.5, 2.0)


def top(image: bytes) -> tuple[float, str]:
    scores = popout._scores(QUESTION_D, image)
    assert scores is not None
    feature = max(scores, key=lambda f: scores[f])
    return scores[feature], feature


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenes", type=int, default=300)
    parser.add_argument("--seeds", default="0,1")
    args = parser.parse_args()
    for seed in (int(s) for s in args.seeds.split(",")):
        present = []
        for i in range(args.scenes):
            scene = make_scene(seed, i)
            score, feature = top(_png(scene.image))
            present.append((score, feature == scene.feature))
        absent = np.array([top(_png(make_absent_scene(seed, i).image))[0]
                           for i in range(args.scenes)])
        correct = [s for s, ok in present if ok]
        print(f"seed {seed}, {args.scenes} scenes each: present min {min(present)[0]:.2f} "
              f"(lowest correct {min(correct):.2f}); absent median {np.median(absent):.2f}, "
              f"max {absent.max():.2f}")
        for t in THRESHOLDS:
            changed = sum(s <= t for s, _ in present)
            print(f"  threshold {t}: present answers changed {changed} "
                  f"(correct ones {sum(s <= t for s in correct)}); absent false alarms "
                  f"{int((absent > t).sum())}/{len(absent)}")
    design = Design(experiments=("detection",), trials=10, pool_levels={})
    arrays = []
    for _, trial in trials(design, 0):
        score, feature = top(make_stimulus(trial).png)
        arrays.append((score, feature == trial.feature))
    print(f"psychophysics detection arrays (seed 0, {len(arrays)}, the same question):")
    for t in THRESHOLDS:
        below = [ok for s, ok in arrays if s <= t]
        print(f"  threshold {t}: answers changed {len(below)} (correct ones {sum(below)})")


if __name__ == "__main__":
    main()
