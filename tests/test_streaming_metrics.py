"""Metrics are accumulated in one pass over a stream of records (a big run's records are
never all in memory), and agree with a plain recomputation from the list."""

from __future__ import annotations

import random

from visioneval.benchmarks.illusionbench import metrics as ib
from visioneval.benchmarks.salbench.metrics import summarize_config
from visioneval.benchmarks.vqa import metrics as vqa
from visioneval.core.records import Record, Response

CLASSES = ["orientation", "color", "size"]


def _record(i: int, ok: bool, **fields) -> Record:
    response = Response(text="x") if ok else Response(error="HTTP 500")
    defaults = {"group": "P3", "target": "", "metadata": {}, "parsed": {}, "scores": {}}
    return Record.model_construct(id=str(i), response=response, prompt=[],
                                  **(defaults | fields))


def _salbench_records(rng: random.Random, n: int) -> list[Record]:
    out = []
    for i in range(n):
        ok = rng.random() > 0.1
        gold = rng.sample(CLASSES, rng.randint(1, 2))
        parsed = {p: rng.sample([*CLASSES, "none"], rng.randint(1, 2))
                  for p in ("strict", "lenient")} if ok else {}
        out.append(_record(i, ok, target=",".join(gold), parsed=parsed))
    return out


def test_salbench_per_class_f1_streamed_equals_a_plain_count():
    records = _salbench_records(random.Random(0), 400)
    got = summarize_config(iter(records), CLASSES)["strict"]
    scored = [r for r in records if r.ok]
    assert got["n"] == len(scored) and got["n_errors"] == len(records) - len(scored)
    for label in CLASSES:
        pairs = [(set(r.parsed["strict"]), set(str(r.target).split(","))) for r in scored]
        tp = sum(label in p and label in g for p, g in pairs)
        fp = sum(label in p and label not in g for p, g in pairs)
        fn = sum(label not in p and label in g for p, g in pairs)
        assert (got["per_class"][label]["support"], got["per_class"][label]["predicted"]) \
            == (tp + fn, tp + fp)
    exact = sum(set(r.parsed["strict"]) == set(str(r.target).split(",")) for r in scored)
    assert abs(got["exact_match"] - exact / len(scored)) < 1e-12


def test_vqa_and_illusionbench_take_a_one_shot_stream():
    rng = random.Random(1)
    records = [_record(i, rng.random() > 0.2, group=rng.choice("ab"),
                       scores={"exact": {"correct": float(rng.random() < 0.5)}})
               for i in range(300)]
    got = vqa.summarize(iter(records), "exact")
    for group in "ab":
        scored = [r for r in records if r.group == group and r.ok]
        right = sum(r.scores["exact"]["correct"] for r in scored)
        assert got["groups"][group]["accuracy"] == right / len(scored)
    ib_records = [_record(i, rng.random() > 0.2, group="ICON", target={"shape": "cat",
                                                                        "scene": "forest"},
                          metadata={"task": "shape", "family": "lmms", "difficulty": "Easy"},
                          parsed={"lmms-strict": "cat"},
                          scores={"lmms-strict": {"correct": float(rng.random() < 0.3)}})
                  for i in range(300)]
    block = ib.summarize(iter(ib_records), ["lmms-strict"], ["ICON"], ["shape"],
                         False)["lmms-strict"]["ICON"]
    scored = [r for r in ib_records if r.ok]
    assert block["shape"]["n"] == len(scored)
    assert block["shape_recall"] == sum(r.scores["lmms-strict"]["correct"]
                                        for r in scored) / len(scored)
    assert block["shape"]["per_difficulty"]["Easy"]["n_errors"] == 300 - len(scored)
