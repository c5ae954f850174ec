"""`visioneval rescore --from vlmevalkit` on BlindTest: a VLMBlind prediction file in
VLMEvalKit's layout (the dataset's TSV columns `index`, `question`, `task`, `answers`, plus
`prediction`; written as pandas' `to_csv(sep="\\t", quoting=QUOTE_ALL)` writes it) scored by
VLMEvalKit's protocol, the only one that sends its prompt. Each verdict below follows
VLMEvalKit's `VLMBlind.evaluate` (vlmeval/dataset/image_mcq.py at e8e78f05, the line named
beside the row); a failure answer is an error, not a wrong answer."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from cli_helpers import flat, invoke, journal, load

FAIL = "Failed to obtain answer via API."
HEADER = ["index", "question", "task", "answers", "metadata", "prediction"]
ROWS = [
    # line 2592: "no" is a substring of "they are not touching." -> right
    ["0", "Are the two circles touching each other? Answer with Yes/No.", "Touching Circles",
     "No", json.dumps({"distance": 0.1}), "They are not touching."],
    # line 2592: "yes" is not in "no" -> wrong
    ["1", "Are the two circles overlapping? Answer with Yes/No.", "Touching Circles", "Yes",
     json.dumps({"distance": -0.1}), "No"],
    # lines 2538-2545, 2588-2590: the first braces hold "2", equal to the label -> right
    ["2", "Count the intersection points ... e.g., {2}.", "Line Plot Intersections", "2",
     json.dumps({"distances": [1, 3, 4]}), "{2}"],
    # lines 2538-2545: no braces -> "" != "1" -> wrong
    ["3", "Count the intersection points ... e.g., {2}.", "Line Plot Intersections", "1",
     json.dumps({"distances": [2, 2, 5]}), "1"],
    # line 2604: "1" is a substring of "{10}" -> right
    ["4", "How many circles are in the image?", "Olympic Counting - Circles", "1", "",
     "{10}"],
    # lines 2547-2568: Rows ... {5} and Columns ... {6} equal (5, 6) -> right
    ["5", "Count the number of rows and columns ...", "Counting Grid - Blank Grids", "5,6", "",
     "rows={5} columns={6}"],
    # lines 2606-2609: "E" != "e" (case-sensitive) -> wrong
    ["6", "Which letter is being circled?", "Circled Letter", "e", "", "{E}"],
    # a failed request: an error (vlmeval/api/base.py's failure answer), in no accuracy
    ["7", "How many squares are in the image? ... {10}.", "Nested Squares", "3", "", FAIL],
    # line 2575 counts an unknown task label but no branch scores it: skipped here, named
    ["8", "Find the way out.", "Mazes", "2", "", "{2}"],
    # lines 2578-2581: "{2}" -> "2" -> right
    ["9", "How many single-colored paths go from A to B? ...", "Subway Connections", "2", "",
     "{2}"],
]


def write_tsv(path: Path, rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def test_vlmblind_predictions_scored_by_vlmevalkits_rules(tmp_path):
    path = write_tsv(tmp_path / "work" / "GPT4o" / "T20260801_Gabc" / "GPT4o_VLMBlind.tsv",
                     ROWS)
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "vlmevalkit", path, "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    assert set(metrics) >= {"vlmevalkit"} and "paper" not in metrics and \
        "lmms-eval" not in metrics
    block = metrics["vlmevalkit"]["original"]
    accuracy = {t: (b["n"], b.get("accuracy")) for t, b in block["subtasks"].items()}
    assert accuracy == {
        "Touching Circles": (2, 0.5), "Line Plot Intersections": (2, 0.5),
        "Olympic Counting - Circles": (1, 1.0), "Counting Grid - Blank Grids": (1, 1.0),
        "Circled Letter": (1, 0.0), "Nested Squares": (0, None),
        "Subway Connections": (1, 1.0)}
    assert block["subtasks"]["Nested Squares"]["n_errors"] == 1
    # The metadata column gives the magnitude: one gap level only, so no threshold.
    gap = block["thresholds"]["gap"]
    assert gap["status"] == "not reached" and "threshold" not in gap
    assert gap["points"] == [{"level": 0.1, "n": 1, "correct": 1, "p": 1.0,
                              "ci95": gap["points"][0]["ci95"]}]
    records = journal(out)
    assert len(records) == 9
    sent = next(r for r in records if r["id"] == "VLMBlind/2/vlmevalkit")
    assert sent["prompt"][0]["parts"] == ["Question: Count the intersection points ... " \
        "e.g., {2}.\n"]
    failed = next(r for r in records if r["id"] == "VLMBlind/7/vlmevalkit")
    assert failed["response"]["error"] == f"VLMEvalKit: {FAIL}"
    notes = flat(result.stdout + result.stderr)
    assert "'Mazes' is not a BlindTest task label" in notes
    assert "only VLMEvalKit's protocol reads these answers" in notes
    info = load(out, "run.json")
    assert info["backend"]["model"] == "GPT4o"
    assert info["rescored_from"]["tool"] == "vlmevalkit"
