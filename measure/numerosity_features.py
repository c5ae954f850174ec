"""What besides number tells the box with more dots in a numerosity dataset: per condition,
the share of trials in which that box also has the larger total dot area, the larger dots,
the larger convex hull and the denser array (dots per hull area), read from each trial's
stored geometry ("equal": held equal in every trial). A share near 50% says the feature does
not tell which box has more; near 100% (or 0%) that a model could answer from it (or from
its opposite) alone.

    uv run visioneval data synth-numerosity --out data/numerosity
    uv run python measure/numerosity_features.py data/numerosity
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import pyarrow.parquet as pq

FEATURES = {"total dot area": "total_area", "dot diameter": "dot_diameter",
            "hull area": "hull_area"}


def larger(geometry: dict, key: str) -> float:
    """1 when the box with more dots has the larger `key`, 0 when the smaller, 0.5 equal."""
    more = geometry["more"]
    fewer = "left" if more == "right" else "right"
    a, b = geometry[f"{key}_{more}"], geometry[f"{key}_{fewer}"]
    return 0.5 if abs(a - b) <= 1e-9 * max(abs(a), abs(b)) else float(a > b)


def denser(geometry: dict) -> float:
    more = geometry["more"]
    fewer = "left" if more == "right" else "right"
    return float(geometry[f"n_{more}"] / geometry[f"hull_area_{more}"] >
                 geometry[f"n_{fewer}"] / geometry[f"hull_area_{fewer}"])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a folder of `visioneval data synth-numerosity`")
    args = parser.parse_args(argv)
    print("| condition | trials | " + " | ".join(f"more dots, larger {name}"
                                                 for name in FEATURES) + " | more dots, denser |")
    print("|---|---|" + "---|" * (len(FEATURES) + 1))
    for folder in sorted(p for p in args.data.iterdir() if p.is_dir()):
        rows = [json.loads(r) for f in sorted(folder.glob("*.parquet"))
                for r in pq.read_table(f, columns=["stimulus"]).column("stimulus").to_pylist()]
        cells = []
        for key in FEATURES.values():
            found = [larger(g, key) for g in rows]
            cells.append("equal" if set(found) == {0.5} else
                         f"{100 * sum(found) / len(rows):.0f}%")
        dense = sum(denser(g) for g in rows) / len(rows)
        print(f"| {folder.name} | {len(rows)} | " + " | ".join(cells) +
              f" | {100 * dense:.0f}% |")


if __name__ == "__main__":
    main()
