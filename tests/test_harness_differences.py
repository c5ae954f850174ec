"""Why two protocols differ, item by item: the causes' moves add up to the accuracy
difference, an item is joined across its prompts in any order, left-out items are the item
set's, and a failed request is never compared."""

from __future__ import annotations

import csv
import random

from rich.console import Console

from visioneval.core.records import Record, Response
from visioneval.harness.differences import (
    Counterfactual,
    Differences,
    reference_block,
    section,
    show,
    verdicts,
    write_run_csv,
)


def _paper(item: str, s0: float, others: dict[str, Counterfactual], answer: str = "a",
           ok: bool = True) -> Record:
    """The record of the paper's prompt; lmms-eval sends another prompt, vlmevalkit this one."""
    scores = {"paper": reference_block(s0, others)}
    if "vlmevalkit" in others and not others["vlmevalkit"].excluded:
        scores["vlmevalkit"] = {"correct": others["vlmevalkit"].extraction or 0.0}
    response = Response(text=answer) if ok else Response(error="HTTP 500")
    return Record(id=f"{item}/paper", group="g", target="a", response=response,
                  parsed={"paper": answer, "vlmevalkit": answer},
                  scores=scores if ok else {}, metadata={"item": item})


def _lmms(item: str, s3: float, ok: bool = True) -> Record:
    response = Response(text="B") if ok else Response(error="timeout")
    return Record(id=f"{item}/lmms", group="g", target="a", response=response,
                  parsed={"lmms-eval": "B"}, scores={"lmms-eval": {"correct": s3}} if ok else {},
                  metadata={"item": item})


def test_moves_add_up_to_the_accuracy_difference_in_any_order():
    rng = random.Random(7)
    records, s0s, s3s = [], [], []
    for i in range(200):
        s0, s1, s2, s3 = (float(rng.random() < 0.6) for _ in range(4))
        records += [_paper(f"q{i}", s0, {"lmms-eval": Counterfactual(s1, s2),
                                         "vlmevalkit": Counterfactual(None, s2)}),
                    _lmms(f"q{i}", s3)]
        s0s.append(s0)
        s3s.append(s3)
    rng.shuffle(records)
    differences = Differences("paper", ["paper", "lmms-eval", "vlmevalkit"])
    rows = [r for record in records for r in differences.add(record)] + differences.finish()
    summary = differences.summary()
    lmms = summary.of("lmms-eval")
    assert lmms is not None and lmms.compared == 200 and lmms.not_compared == 0
    total = sum(c.points for c in lmms.causes)
    assert abs(total - 100 * (sum(s3s) - sum(s0s)) / 200) < 1e-9
    assert [c.cause for c in lmms.causes] == ["label set", "extraction", "prompt"]
    # vlmevalkit reads the paper's own answer: no prompt cause, and no label-set one.
    vlm = summary.of("vlmevalkit")
    assert vlm is not None and [c.cause for c in vlm.causes] == ["extraction"]
    # Every moved item is a row, and the rows' moves add up per cause.
    for cause in lmms.causes:
        moved = [r.move for r in rows if r.protocol == "lmms-eval" and r.cause == cause.cause]
        assert len(moved) == cause.items and sum(moved) == cause.gained - cause.lost


def test_a_left_out_item_is_the_item_sets_and_a_failure_is_not_compared():
    differences = Differences("paper", ["paper", "lmms-eval"])
    records = [_paper("a", 1.0, {"lmms-eval": Counterfactual(None, 1.0)}), _lmms("a", 1.0),
               _paper("b", 0.0, {"lmms-eval": Counterfactual(None, 0.0)}), _lmms("b", 1.0),
               # left out by lmms-eval (as its HallusionBench drops text-only questions)
               _paper("c", 1.0, {"lmms-eval": Counterfactual(excluded=True)}),
               _paper("d", 1.0, {"lmms-eval": Counterfactual(excluded=True)}),
               # a failed request on either side: neither right nor wrong
               _paper("e", 1.0, {"lmms-eval": Counterfactual(None, 1.0)}), _lmms("e", 0.0, False),
               _paper("f", 1.0, {}, ok=False), _lmms("f", 1.0)]
    for record in records:
        differences.add(record)
    differences.finish()
    lmms = differences.summary().of("lmms-eval")
    assert lmms is not None
    assert (lmms.compared, lmms.excluded, lmms.not_compared, lmms.differ) == (2, 2, 2, 1)
    # The paper scores a, b, c, d, e (f failed): 4/5 = 80%; on lmms-eval's items a, b, e: 2/3.
    assert lmms.item_set_points is not None and abs(lmms.item_set_points - (200 / 3 - 80)) < 1e-9
    assert [(c.cause, c.gained) for c in lmms.causes] == [("prompt", 1)]


def test_verdicts_drop_the_counterfactual_keys():
    block = reference_block(1.0, {"x": Counterfactual(0.0, 1.0),
                                  "y": Counterfactual(excluded=True)})
    assert verdicts(block) == {"correct": 1.0}
    assert set(block) == {"correct", "x|label set", "x|extraction", "y|excluded"}


def test_protocols_csv_the_report_section_and_the_terminal(tmp_path):
    records = [_paper("q1", 1.0, {"lmms-eval": Counterfactual(None, 0.0)}, answer="=cmd"),
               _lmms("q1", 0.0), _paper("q2", 1.0, {"lmms-eval": Counterfactual(None, 1.0)}),
               _lmms("q2", 1.0)]
    path = write_run_csv(records, "paper", ["paper", "lmms-eval"], tmp_path / "protocols.csv")
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["item"], r["cause"], r["move"]) for r in rows] == [("q1", "extraction", "-1")]
    assert rows[0]["paper_answer"] == "'=cmd"  # a spreadsheet never runs it
    differences = Differences("paper", ["paper", "lmms-eval"])
    for record in records:
        differences.add(record)
    summary = differences.summary()
    summary.add_note("lmms-eval", "aggregation", "reports per-question accuracy too", None)
    made = section(summary)
    table = made.blocks[0]
    assert table.rows[0] == ["lmms-eval", "all causes (2 items)", "1", "", "", "-50.0"]
    assert table.rows[-1] == ["", "aggregation [1]", "", "", "", ""]
    assert table.rows[1] == ["", "extraction", "1", "0", "1", "-50.0"]
    console = Console(width=100, record=True)
    show(summary, console)
    text = console.export_text()
    assert "extraction" in text and "-50.0" in text
    assert "[1] lmms-eval, aggregation: reports per-question accuracy too" in text
    assert max(len(line) for line in text.splitlines()) <= 100
