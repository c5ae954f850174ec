"""`visioneval compare` on runs over different parts of one dataset: says what differs (the
sample sets and their overlap, the configs) and, with --common-only, compares on the
samples every run has, recomputed from each run's journal."""

from __future__ import annotations

import csv
import io

from cli_helpers import flat, invoke, salbench_args


def _always_size(prompt) -> str:
    return "Size"


def _run(serve, data, out, *extra):
    server = serve(answer=_always_size, models=("m", "ma", "mb"))
    result = invoke(*salbench_args(server, data, out, *extra))
    assert result.exit_code == 0, result.output
    return out


def _rows(path) -> dict[str, list[str]]:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    return {row[0]: row for row in rows[1:]}


def test_runs_on_different_parts_of_one_dataset(serve, synth_data, tmp_path):
    a = _run(serve, synth_data, tmp_path / "a", "--configs", "P3", "--num-samples", "3",
             "--model", "ma")
    b = _run(serve, synth_data, tmp_path / "b", "--configs", "P3,P3_box", "--model", "mb")
    result = invoke("compare", a, b, "--out", tmp_path / "all")
    assert result.exit_code == 0, result.output
    warnings = flat(result.stderr)
    assert "not the same data" not in warnings
    assert "configs differs: ma (a): ['P3']; mb (b): ['P3', 'P3_box']" in warnings
    assert f"dataset parts differ (same source {synth_data}): ma (a): P3; mb (b): P3, P3_box" \
        in warnings
    assert ("sample sets differ: ma (a): 3 samples; mb (b): 16 samples; 3 in common to all "
            "runs (--common-only compares on those)") in warnings
    everything = _rows(tmp_path / "all" / "comparison.csv")
    # Detection_SYN is P3: the first 3 rows against all 8, so the scores differ.
    assert everything["ma"][4:6] != everything["mb"][4:6]

    result = invoke("compare", a, b, "--common-only", "--out", tmp_path / "common")
    assert result.exit_code == 0, result.output
    warnings = flat(result.stderr)
    assert ("compared on the 3 samples common to all runs (--common-only): ma (a): 3 of 3; "
            "mb (b): 3 of 16") in warnings
    common = _rows(tmp_path / "common" / "comparison.csv")
    # The same server answered the same 3 samples: the same numbers, and no P3_box scores.
    assert common["ma"][2:] == common["mb"][2:]
    assert common["ma"][4:6] == everything["ma"][4:6]
    assert common["mb"][8:10] == ["", ""] and everything["mb"][8:10] != ["", ""]
    md = (tmp_path / "common" / "comparison.md").read_text()
    assert "compared on the 3 samples common to all runs" in md


def test_common_only_with_nothing_in_common_is_one_line(serve, synth_data, tmp_path):
    a = _run(serve, synth_data, tmp_path / "a", "--configs", "P3", "--model", "ma")
    b = _run(serve, synth_data, tmp_path / "b", "--configs", "P3_box", "--model", "mb")
    result = invoke("compare", a, b, "--common-only")
    assert result.exit_code == 2
    assert "the runs have no sample in common" in result.stderr
    assert "Traceback" not in result.output
