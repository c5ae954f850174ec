"""NaturalBench end to end: the loader on a folder in the Hub's layout, bad rows, the real
command against the loopback server over real HTTP (one request per prompt, the three
protocols side by side, the fixed layout against the answer columns, why the protocols
differ), the offline random baseline and the blind control against chance."""

from __future__ import annotations

import csv
import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke, journal, load
from PIL import Image

from visioneval.benchmarks.naturalbench.benchmark import build
from visioneval.benchmarks.naturalbench.synth import COLOURS, make_row, schema, write_synthetic
from visioneval.core.records import SkippedRow
from visioneval.loopback.server import Prompt

GROUPS = 8


@pytest.fixture(scope="module")
def nb_data(tmp_path_factory):
    """8 groups in the Hub's layout (data/train-*.parquet); the last two break the fixed
    layout (their images swapped, their answer columns No/Yes/Yes/No)."""
    root = tmp_path_factory.mktemp("naturalbench")
    write_synthetic(root, GROUPS, seed=1, layout_breaks=2)
    return root


def colour_of(image: bytes) -> str:
    """The colour of the shape in a synthetic image (the pixel furthest from grey)."""
    pixels = np.asarray(Image.open(io.BytesIO(image)).convert("RGB")).reshape(-1, 3)
    shape = pixels[np.abs(pixels.astype(int) - 128).sum(axis=1).argmax()]
    return min(COLOURS, key=lambda n: int(np.abs(np.array(COLOURS[n]) - shape).sum()))


def truthful(prompt: Prompt) -> str:
    """Looks at the image and answers the question right."""
    image = prompt.last_image()
    assert image is not None
    colour = colour_of(image)
    if "Option:" in prompt.text:
        first = prompt.text.split("A:", 1)[1].split(";", 1)[0]
        return "A" if first == colour else "B"
    return "Yes" if f" {colour}?" in prompt.text else "No"


def args(server, data, out, *extra):
    return ["naturalbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
            "--model", "m", "--data-dir", data, "--out", out, "--no-progress", *extra]


def test_the_loader_reads_a_hub_shaped_folder(nb_data):
    bench = build({"data_dir": nb_data})
    samples = list(bench.samples())
    assert len(samples) == GROUPS * 4 * 2  # four items, two prompts
    first = samples[0]
    assert first.id == "0000/q0_i0/paper" and first.metadata["layout"] == "fixed"
    assert first.messages[0].parts[1].endswith("?Please answer Yes or No.")
    spaced = next(s for s in samples if s.id == "0000/q0_i0/spaced")
    assert spaced.messages[0].parts[1].endswith("? Please answer Yes or No.")
    # the stored bytes go to the model
    row = pq.read_table(next(nb_data.rglob("train-*.parquet"))).to_pylist()[0]
    assert first.messages[0].parts[0].data == row["Image_0"]["bytes"]
    broken = [s for s in samples if s.metadata["group_id"] == "0006"]
    assert {s.metadata["layout"] for s in broken} == {"breaks"}
    assert [s.target for s in broken if s.metadata["family"] == "paper"][0] == \
        {"original": "Yes", "corrected": "No"}
    assert bench.total() == GROUPS * 8


def test_a_bad_row_is_one_line_naming_the_row_and_field(tmp_path):
    rows = [make_row(i, 0, False) for i in range(4)]
    rows[1]["Question_Type"] = "open_ended"
    rows[2]["Question_1"] = ""
    rows[3]["Image_1"] = {"bytes": b"not an image", "path": "x.png"}
    path = tmp_path / "data" / "train-00000-of-00001.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema()), path)
    made = list(build({"data_dir": tmp_path}).samples())
    skipped = [m for m in made if isinstance(m, SkippedRow)]
    assert [m.line() for m in skipped][0].count("open_ended") == 1
    assert len(skipped) == 3 and all(m.samples == 8 for m in skipped)
    assert "train row 2 (Index 2)" in skipped[1].line() and "Question_1" in skipped[1].line()
    assert "Image_1" in skipped[2].line()
    assert sum(not isinstance(m, SkippedRow) for m in made) == 8


def test_three_protocols_two_prompts_and_the_layout_check(serve, nb_data, tmp_path):
    server = serve(answer=truthful)
    out = tmp_path / "run"
    result = invoke(*args(server, nb_data, out))
    assert result.exit_code == 0, result.output
    assert server.stats.requests == GROUPS * 4 * 2  # lmms-eval and VLMEvalKit share one
    metrics = load(out)
    fixed, columns = metrics["results"]["original"], metrics["results"]["corrected"]
    for protocol in ("paper", "vlmevalkit"):
        # a truthful model: every group right on the answer columns; the two groups that
        # break the layout are all wrong on it (their answers are the other way round)
        assert columns[protocol]["g_acc"] == 1.0 and columns[protocol]["acc"] == 1.0
        assert fixed[protocol]["g_acc"] == pytest.approx(6 / 8)
        assert fixed[protocol]["acc"] == pytest.approx(24 / 32)
        assert fixed[protocol]["g_acc_ci95_clusters"] == "group"
    assert "acc" not in fixed["lmms-eval"] and "naturalbench_ACC" in \
        fixed["lmms-eval"]["acc_unavailable"]
    assert fixed["lmms-eval"]["g_acc"] == pytest.approx(6 / 8)
    assert metrics["layout"] == {"groups": 8, "fixed": 6, "breaks": 2, "unreadable": 0,
                                 "breaking_groups": ["0006", "0007"], "unreadable_groups": []}
    assert metrics["label_set_difference"]["paper"]["g_acc"] == pytest.approx(0.25)
    differences = metrics["differences"]["protocols"]
    assert [d["differ"] for d in differences] == [0, 0]  # same answers to both prompts
    assert "Answer columns vs the fixed layout: 6 of 8 groups agree, 2 break it" in \
        result.output
    assert all(len(line) <= 100 for line in result.output.splitlines())
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert {r["protocol"] for r in rows} == {"paper", "lmms-eval", "vlmevalkit"}


def test_why_the_protocols_differ_when_the_space_changes_the_answer(serve, nb_data, tmp_path):
    def space_sensitive(prompt: Prompt) -> str:
        answer = truthful(prompt)
        if "? Please" in prompt.text:  # the harnesses' prompt: always the first answer
            return "Yes"
        return answer

    server = serve(answer=space_sensitive)
    out = tmp_path / "run"
    result = invoke(*args(server, nb_data, out, "--labels", "original"))
    assert result.exit_code == 0, result.output
    metrics = load(out)
    lmms = metrics["differences"]["protocols"][0]
    yes_no = [r for r in journal(out) if r["group"] == "yes_no"
              and r["metadata"]["family"] == "paper"]
    # the paper's answers are right where the layout holds; the spaced prompt's "Yes" is
    # right on q0_i0 and q1_i1 only
    moved = sum(r["scores"]["paper"]["correct"] != float(r["metadata"]["position"] in
                                                         ("q0_i0", "q1_i1")) for r in yes_no)
    assert lmms["protocol"] == "lmms-eval" and lmms["differ"] == moved
    assert [c["cause"] for c in lmms["causes"]] == ["prompt"]
    notes = [n for n in metrics["differences"]["notes"] if n["cause"] == "prompt, on G-Acc"]
    paper_g = metrics["results"]["original"]["paper"]["g_acc"]
    harness_g = metrics["results"]["original"]["vlmevalkit"]["g_acc"]
    assert notes[0]["points"] == pytest.approx(100 * (harness_g - paper_g))
    lines = list(csv.DictReader((out / "protocols.csv").open()))
    assert len([x for x in lines if x["protocol"] == "lmms-eval"]) == moved
    assert "Why the protocols differ" in result.output


@pytest.mark.slow
def test_random_baseline_and_the_blind_control(nb_data, tmp_path):
    out = tmp_path / "run"
    result = invoke("naturalbench", "--backend", "builtin", "--model", "random",
                    "--data-dir", nb_data, "--out", out, "--no-progress", "--protocol",
                    "paper", "--variant", "blind")
    assert result.exit_code == 0, result.output
    metrics = load(out)
    paper = metrics["results"]["original"]["paper"]
    assert paper["unparsed"] == 0 and paper["n_items"] == 32
    blind = metrics["controls"]["blind"]["original"]["paper"]
    # Without the image a question's two items are the same request: the same answer, so
    # no question is right on both images, and no group is.
    assert blind["q_acc"] == 0.0 and blind["g_acc"] == 0.0 and blind["chance"]["g_acc"] == \
        0.0625
    variants = load(out, "variants.json")
    assert "1/2" in variants["chance_rule"]
    assert "differences" not in metrics  # one protocol: nothing to compare
