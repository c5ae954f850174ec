"""Target-absent control scenes for SalBench-shaped data: every object alike, asked the
Detection question; any feature named is a false alarm. Real parquet (write_synthetic), real
HTTP (the loopback server), the real command."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args
from PIL import Image

from visioneval.baselines import popout
from visioneval.benchmarks.salbench.benchmark import _row_problem
from visioneval.benchmarks.salbench.definition import DEFINITION
from visioneval.benchmarks.salbench.parse import (
    lenient_labels,
    rejects,
    strict_tokens,
    target_absent,
)
from visioneval.benchmarks.salbench.spec import CONFIGS, P3_CLASSES
from visioneval.benchmarks.salbench.synth import QUESTION_D, SCHEMA, write_synthetic
from visioneval.core.records import Record
from visioneval.loopback.server import Prompt, Reply, answer_fixed, answer_hash
from visioneval.stats.binomial import wilson

PRESENT, ABSENT = 8, 4


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> tuple[Path, Path]:
    """The same 8 present scenes, without and with 4 target-absent scenes."""
    plain, mixed = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("mixed")
    write_synthetic(plain, PRESENT, seed=3)
    write_synthetic(mixed, PRESENT, seed=3, target_absent=ABSENT)
    return plain, mixed


def _run(serve, data_dir: Path, out: Path, answer, *extra: str):
    server = serve(answer=answer)
    result = invoke(*salbench_args(server, data_dir, out, "--splits", "synthetic", *extra))
    assert result.exit_code == 0, result.output
    return result


def _without_absent(metrics: dict) -> dict:
    return {config: {k: v for k, v in block.items()
                     if k not in ("target_absent", "target_absent_by_prompt")}
            for config, block in metrics.items()}


def test_absent_rows_follow_the_present_ones_in_the_detection_config_only(data):
    plain, mixed = data
    for config in ("P3", "P3_box", "P3_box_img"):
        before = pq.read_table(plain / config / "shard_00000.parquet")
        after = pq.read_table(mixed / config / "shard_00000.parquet")
        assert after.schema == SCHEMA
        extra = ABSENT if config == "P3" else 0
        assert after.num_rows == PRESENT + extra
        # The present rows are the same bytes with or without absent scenes.
        assert after.slice(0, PRESENT).equals(before)
    rows = pq.read_table(mixed / "P3" / "shard_00000.parquet").slice(PRESENT).to_pylist()
    assert [r["answer"] for r in rows] == ["None"] * ABSENT
    assert [r["question"] for r in rows] == [QUESTION_D] * ABSENT
    assert all(r["image_id"].endswith("-absent") for r in rows)
    assert len({r["image_id"] for r in rows}) == ABSENT
    for r in rows:
        assert r["image"]["path"] == f"{r['image_id']}.png"
        # Every object is the same colour: background and one fill, nothing else.
        image = Image.open(io.BytesIO(r["image"]["bytes"]))
        assert len(image.getcolors()) == 2


def test_more_absent_scenes_extend_fewer(tmp_path):
    write_synthetic(tmp_path / "a", 2, seed=1, target_absent=2)
    write_synthetic(tmp_path / "b", 2, seed=1, target_absent=3)
    a = pq.read_table(tmp_path / "a" / "P3" / "shard_00000.parquet")
    b = pq.read_table(tmp_path / "b" / "P3" / "shard_00000.parquet")
    assert b.slice(0, 4).equals(a)


def test_synth_command_writes_absent_scenes_and_refuses_a_negative_count(tmp_path):
    result = invoke("data", "synth-salbench", "--out", tmp_path / "d", "--n", "3",
                    "--target-absent", "2")
    assert result.exit_code == 0, result.output
    assert f"{tmp_path / 'd' / 'P3'}: 5 rows (2 of them target-absent)" in flat(result.stdout)
    assert f"{tmp_path / 'd' / 'P3_box'}: 3 rows" in result.stdout
    assert pq.read_table(tmp_path / "d" / "P3").column("answer").to_pylist()[3:] == \
        ["None", "None"]
    result = invoke("data", "synth-salbench", "--out", tmp_path / "e", "--target-absent", "-1")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --target-absent: Input should be greater than or equal to 0"]
    assert not (tmp_path / "e").exists()


@pytest.mark.parametrize("reply, strict, lenient", [
    ("None", True, True),
    ("none", True, True),
    ("[None]", True, True),
    ("None.", False, True),
    ("No feature differs", False, True),
    ("Nothing stands out: all objects have the same color.", False, True),
    ("Color", False, False),
    ("color, size", False, False),
])
def test_what_says_no_feature_differs(reply, strict, lenient):
    assert rejects("strict", strict_tokens(reply)) is strict
    assert rejects("lenient", lenient_labels(reply, P3_CLASSES)) is lenient


def test_the_absent_answer_is_read_by_detection_configs_only():
    row = {"question": QUESTION_D, "answer": "None", "image": {"bytes": b"x"}}
    assert target_absent("None") and target_absent(" none ") and not target_absent("color")
    assert _row_problem(CONFIGS["P3"], row) is None
    assert _row_problem(CONFIGS["O3"], row) is None
    assert _row_problem(CONFIGS["P3_box"], row) == (
        "answer 'None' (no feature differs) is read in Detection configs only; P3_box's "
        "question points at a target")
    # Any other answer outside the classes is still a skipped row.
    assert "outside the P3 classes" in _row_problem(CONFIGS["P3"], {**row, "answer": "blue"})


def test_absent_rows_change_no_other_figure(serve, data, tmp_path):
    plain, mixed = data
    _run(serve, plain, tmp_path / "plain", answer_hash)
    _run(serve, mixed, tmp_path / "mixed", answer_hash)
    without, with_absent = load(tmp_path / "plain"), load(tmp_path / "mixed")
    assert all("target_absent" not in block for block in without.values())
    assert not (tmp_path / "plain" / "target_absent.csv").exists()
    assert _without_absent(with_absent) == without
    # Byte for byte, as metrics.json is written (core.store.write_json).
    assert orjson.dumps(_without_absent(with_absent), option=orjson.OPT_INDENT_2) + b"\n" \
        == (tmp_path / "plain" / "metrics.json").read_bytes()
    # Only the Detection config has absent rows.
    assert [c for c, b in with_absent.items() if "target_absent" in b] == ["P3"]
    # The hash answerer always names one of the offered features.
    figures = with_absent["P3"]["target_absent"]["strict"]
    assert (figures["n"], figures["false_alarms"]) == (ABSENT, ABSENT)


@pytest.mark.slow
def test_absent_rows_under_both_prompts(serve, data, tmp_path):
    """--prompt both: the paired prompt test and every other figure stay as without absent
    rows; the second prompt's answers to them are tallied apart too."""
    plain, mixed = data
    _run(serve, plain, tmp_path / "plain", answer_hash, "--configs", "P3", "--prompt", "both")
    _run(serve, mixed, tmp_path / "mixed", answer_hash, "--configs", "P3", "--prompt", "both")
    without, with_absent = load(tmp_path / "plain"), load(tmp_path / "mixed")
    assert "target_absent_by_prompt" not in without["P3"]
    assert _without_absent(with_absent) == without
    assert with_absent["P3"]["target_absent_by_prompt"]["lmms-eval"]["strict"]["n"] == ABSENT
    assert with_absent["P3"]["target_absent"]["strict"]["n"] == ABSENT


def _fails_on(images: set[bytes]):
    """A server error for a request whose image is one of `images`, else "Color"."""
    def reply(protocol: str, body: dict, prompt: Prompt):
        if prompt.last_image() in images:
            return Reply({"error": {"message": "overloaded"}}, status=500)
        return {"choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "Color"}}]}

    return reply


def test_failed_requests_on_absent_rows_are_their_errors_and_no_rate(serve, data, tmp_path):
    table = pq.read_table(data[1] / "P3" / "shard_00000.parquet").slice(PRESENT)
    server = serve(reply=_fails_on({r["image"]["bytes"] for r in table.to_pylist()}))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, data[1], out, "--configs", "P3",
                                   "--max-attempts", "1"))
    assert result.exit_code == 1  # finished, some samples unanswered
    metrics = load(out)
    assert (metrics["P3"]["strict"]["n"], metrics["P3"]["strict"]["n_errors"]) == (PRESENT, 0)
    figures = metrics["P3"]["target_absent"]["strict"]
    assert (figures["n"], figures["n_errors"]) == (0, ABSENT)
    assert figures["unavailable"] == f"no answered target-absent rows ({ABSENT} failed requests)"
    assert "false_alarm_rate" not in figures
    assert (f"P3: false alarms on target-absent scenes: not available: no answered "
            f"target-absent rows ({ABSENT} failed requests)") in flat(invoke("show", out).stdout)


def test_a_model_that_always_names_a_feature_always_false_alarms(serve, data, tmp_path):
    out = tmp_path / "run"
    _run(serve, data[1], out, answer_fixed("Color"))
    for parser in ("strict", "lenient"):
        figures = load(out)["P3"]["target_absent"][parser]
        low, high = wilson(ABSENT, ABSENT)
        assert figures == {
            "n": ABSENT, "n_errors": 0, "false_alarms": ABSENT, "correct_rejections": 0,
            "n_unparsed": 0, "by_feature_named": {"orientation": 0, "color": ABSENT, "size": 0},
            "false_alarm_rate": 1.0, "false_alarm_rate_ci95": [low, high]}
    line = (f"P3: false alarms on target-absent scenes: {ABSENT}/{ABSENT} = 100.0% "
            f"[{100 * low:.1f}%, 100.0%] (lenient {ABSENT}/{ABSENT} = 100.0% "
            f"[{100 * low:.1f}%, 100.0%]); named: color {ABSENT}; correct rejections 0 "
            "(lenient 0)")
    assert line in flat(invoke("show", out).stdout)
    rows = list(csv.reader((out / "target_absent.csv").open()))
    assert rows[1][:10] == ["P3", "paper", "strict", str(ABSENT), "0", str(ABSENT), "100.0",
                            f"{100 * low:.1f}", "100.0", "0"]
    page = (out / "report.html").read_text()
    assert "false alarms strict (95% interval)" in page


def test_a_model_that_says_none_never_false_alarms(serve, data, tmp_path):
    out = tmp_path / "run"
    _run(serve, data[1], out, answer_fixed("None"))
    metrics = load(out)
    for parser in ("strict", "lenient"):
        figures = metrics["P3"]["target_absent"][parser]
        assert (figures["false_alarms"], figures["correct_rejections"]) == (0, ABSENT)
        assert figures["false_alarm_rate"] == 0.0
        assert figures["false_alarm_rate_ci95"] == list(wilson(0, ABSENT))
    # On the present rows "None" names no feature: no exact match, all unparsed.
    assert metrics["P3"]["strict"]["exact_match"] == 0.0
    assert metrics["P3"]["strict"]["n"] == metrics["P3"]["strict"]["n_unparsed"] == PRESENT
    # The sample browser: an absent row's target is "none", and "None" answers it right.
    rows = [DEFINITION.browser_row(Record.model_validate(r)) for r in journal(out)
            if r["metadata"]["image_id"].endswith("-absent")]
    assert len(rows) == ABSENT
    assert all(r["t"] == "none" and r["labels"] == ["none"] and r["v"]["strict"]["ok"]
               for r in rows)


def test_compare_adds_false_alarm_columns_only_for_runs_with_absent_rows(serve, data,
                                                                         tmp_path):
    plain, mixed = data
    _run(serve, plain, tmp_path / "a", answer_fixed("Size"), "--configs", "P3")
    result = invoke("compare", tmp_path / "a", tmp_path / "a", "--out", tmp_path / "c1")
    assert result.exit_code == 0, result.output
    header = next(csv.reader((tmp_path / "c1" / "comparison.csv").open()))
    assert not any("false alarms" in h for h in header)

    _run(serve, mixed, tmp_path / "b", answer_fixed("Size"), "--configs", "P3")
    result = invoke("compare", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "c2")
    assert result.exit_code == 0, result.output
    rows = list(csv.reader((tmp_path / "c2" / "comparison.csv").open()))
    column = rows[0].index("Detection_SYN false alarms")
    cells = {row[0]: row[column] for row in rows[1:]}
    assert sorted(cells.values()) == ["", "100.0"]


def test_popout_names_a_feature_on_every_absent_scene(data):
    table = pq.read_table(data[1] / "P3" / "shard_00000.parquet").slice(PRESENT)
    answers = [popout.answer(QUESTION_D, r["image"]["bytes"]) for r in table.to_pylist()]
    assert all(a in P3_CLASSES for a in answers)
