"""Shards of a run (`--shard K/N`) merged with `visioneval merge` equal the run done whole:
SalBench, IllusionBench `--protocol all`, evaluate and layout, against the loopback; every
refusal is one line and exit code 2."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
import yaml
from cli_helpers import invoke, load, salbench_args
from helpers import png_bytes

from visioneval.shards import Shard, shard_of
from visioneval.stats.exactsum import ExactSum


def _metrics_bytes(run: Path) -> bytes:
    return (run / "metrics.json").read_bytes()


def _shards(make_args, tmp_path: Path, n: int = 3, name: str = "s") -> list[Path]:
    dirs = []
    for k in range(1, n + 1):
        out = tmp_path / f"{name}{k}"
        result = invoke(*make_args(out), "--shard", f"{k}/{n}")
        assert result.exit_code == 0, result.output
        dirs.append(out)
    return dirs


def _merge(dirs, out, *extra):
    return invoke("merge", *dirs, "--out", out, "--no-report", *extra)


# ------------------------------------------------------------------ the partition


def test_every_id_is_in_exactly_one_shard_whatever_the_order():
    ids = [f"P3/img{i}/D" for i in range(500)]
    for count in (1, 2, 3, 7):
        owners = {i: [k for k in range(1, count + 1) if Shard(k, count).holds(i)] for i in ids}
        assert all(len(found) == 1 for found in owners.values())
        shuffled = ids[:]
        random.Random(1).shuffle(shuffled)
        assert {i: shard_of(i, count) for i in shuffled} == \
            {i: found[0] for i, found in owners.items()}
    sizes = [sum(Shard(k, 4).holds(i) for i in ids) for k in range(1, 5)]
    assert min(sizes) > 90  # a hash spreads the ids, not a position


def test_shard_flag_is_checked():
    for bad in ("0/3", "4/3", "2", "a/b", "1/0"):
        with pytest.raises(ValueError, match="--shard"):
            Shard.parse(bad)
    assert Shard.parse(" 2 / 4 ") == Shard(2, 4)


def test_exact_sums_do_not_depend_on_order():
    values = [random.Random(i).choice([1 / 3, 2 / 3, 0.1, 0.7, 1e-8]) for i in range(2000)]
    forward, backward = ExactSum(), ExactSum()
    for v in values:
        forward += v
    for v in reversed(values):
        backward += v
    assert forward.value == backward.value == __import__("math").fsum(values)


# ------------------------------------------------------------------ equal to the whole run


def test_salbench_shards_merge_to_the_whole_runs_metrics(serve, synth_data, tmp_path):
    server = serve()

    def make(out):
        return salbench_args(server, synth_data, out, "--configs", "P3,P3_box,P3_box_img",
                             "--no-report")

    whole = tmp_path / "whole"
    assert invoke(*make(whole)).exit_code == 0
    dirs = _shards(make, tmp_path)
    sizes = [len((d / "samples.jsonl").read_text().splitlines()) for d in dirs]
    assert sum(sizes) == len((whole / "samples.jsonl").read_text().splitlines())
    assert all(s > 0 for s in sizes)
    info = load(dirs[1], "run.json")
    assert info["shard"] == {"index": 2, "count": 3}

    merged = tmp_path / "merged"
    result = _merge(dirs, merged)
    assert result.exit_code == 0, result.output
    assert _metrics_bytes(merged) == _metrics_bytes(whole)
    assert "merged 3 of 3 shards" in result.stderr
    merged_info = load(merged, "run.json")
    assert "shard" not in merged_info and merged_info["status"] == "finished"
    assert [m["shard"]["index"] for m in merged_info["merged_from"]] == [1, 2, 3]
    assert merged_info["counts"]["records"] == sum(sizes)
    for table in ("table1.csv", "table1_exact_match.csv"):
        assert (merged / table).read_bytes() == (whole / table).read_bytes()


@pytest.mark.slow
def test_illusionbench_protocol_all_shards_merge_exactly(serve, illusion_data, tmp_path):
    server = serve()

    def make(out):
        return ["illusionbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
                "--model", "m", "--data-dir", illusion_data, "--out", out, "--no-progress",
                "--no-report", "--protocol", "all"]

    whole = tmp_path / "whole"
    assert invoke(*make(whole)).exit_code == 0
    merged = tmp_path / "merged"
    assert _merge(_shards(make, tmp_path), merged).exit_code == 0
    assert _metrics_bytes(merged) == _metrics_bytes(whole)


def _evaluate_cases(tmp_path: Path) -> Path:
    (tmp_path / "a.png").write_bytes(png_bytes())
    cases = []
    for i in range(9):
        cases.append({"id": f"c{i}", "input": "Count.", "images": ["a.png"],
                      "output": f"{i} bottles, 3 cans", "expected_output": "4 bottles, 3 cans",
                      "evaluators": [{"validator": "count"},
                                     {"judge": "image-description"}]})
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump(cases))
    return path


def test_evaluate_shards_merge_exactly(serve, tmp_path):
    def reply(prompt) -> str:
        score = 3 + len(str(prompt)) % 7
        return json.dumps({"reasoning": "ok", "scores": {
            "visual_accuracy": score, "completeness": 8, "clarity": 7, "relevance": 9},
            "details": {"hallucinations": [], "missing_elements": []}})

    server = serve(answer=reply)
    cases = _evaluate_cases(tmp_path)

    def make(out):
        return ["evaluate", cases, "--judge-backend", "openai", "--judge-model", "m",
                "--judge-base-url", server.base_url + "/v1", "--out", out, "--no-progress",
                "--no-report"]

    whole = tmp_path / "whole"
    assert invoke(*make(whole)).exit_code == 0
    merged = tmp_path / "merged"
    assert _merge(_shards(make, tmp_path), merged).exit_code == 0
    assert _metrics_bytes(merged) == _metrics_bytes(whole)
    assert "pass_rate_ci95" in json.loads(_metrics_bytes(whole))["evaluators"]["validator:count"]


def _layout_whole(tmp_path: Path) -> tuple[Path, Path]:
    from visioneval.canvas.synth import write_random

    base = tmp_path / "canvas"
    write_random(base, 12, boxes=8, seed=4)
    whole = tmp_path / "whole"
    assert invoke("layout", "--base-dir", base, "--embedder", "bow", "--workers", "1",
                  "--out", whole, "--no-progress", "--no-report").exit_code == 0
    return base, whole


def _without_times(path: Path) -> dict:
    document = json.loads(path.read_text())
    document.pop("seconds", None)
    return document


@pytest.mark.slow
def test_layout_shards_merge_to_the_whole_results_file(tmp_path):
    """A layout run is a run like any other: its shards merge through the generic merge into
    the metrics, results file and CSV of the run done whole."""
    base, whole = _layout_whole(tmp_path)
    parts = _shards(lambda out: ["layout", "--base-dir", base, "--embedder", "bow",
                                 "--workers", "1", "--out", out, "--no-progress",
                                 "--no-report"], tmp_path, name="part")
    counts = [len(json.loads((p / "results.json").read_text())["samples"]) for p in parts]
    assert sum(counts) == 12 and max(counts) < 12
    merged = tmp_path / "merged"
    result = invoke("merge", *parts, "--out", merged)
    assert result.exit_code == 0, result.output
    assert _metrics_bytes(merged) == _metrics_bytes(whole)
    assert _without_times(merged / "results.json") == _without_times(whole / "results.json")
    assert (merged / "results.csv").read_text() == (whole / "results.csv").read_text()
    page = (merged / "report.html").read_text()
    assert "Distributions" in page and "merged from 3 of 3 shards" in page

    twice = _merge([parts[0], parts[0], parts[1]], tmp_path / "x")
    assert twice.exit_code == 2 and "given twice" in twice.stderr
    missing = _merge(parts[:2], tmp_path / "x")
    assert missing.exit_code == 2 and "3/3 is missing" in missing.stderr
    partial = _merge(parts[:2], tmp_path / "p", "--allow-partial")
    assert partial.exit_code == 1 and "missing" in partial.stderr
    samples = json.loads((tmp_path / "p" / "results.json").read_text())["samples"]
    assert len(samples) == counts[0] + counts[1]


# ------------------------------------------------------------------ refusals


@pytest.fixture
def three(serve, synth_data, tmp_path):
    """Three shards of a loopback SalBench run, and how to make more."""
    server = serve(models=("m", "other"))

    def make(out, *extra):
        return salbench_args(server, synth_data, out, "--configs", "P3", "--no-report", *extra)

    return _shards(make, tmp_path), make


def _one_error_line(result) -> str:
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    return lines[0]


def test_shards_of_different_runs_are_refused_naming_the_difference(three, tmp_path,
                                                                    synth_data):
    dirs, make = three
    variants = {
        "model": ("--model", "other"),
        "temperature": ("--temperature", "0.5"),
        "option prompt": ("--prompt", "lmms-eval"),
    }
    for words, flag in variants.items():
        other = tmp_path / f"other-{flag[0]}"
        args = make(other)
        if flag[0] == "--model":
            args[args.index("--model") + 1] = "other"
        else:
            args += list(flag)
        assert invoke(*args, "--shard", "3/3").exit_code in (0, 1)
        line = _one_error_line(_merge([dirs[0], dirs[1], other], tmp_path / "m"))
        assert "not shards of one run" in line and words.split()[0] in line, line

    count = tmp_path / "count"
    assert invoke(*make(count), "--shard", "3/4").exit_code == 0
    assert "shard count (3 vs 4)" in _one_error_line(_merge([*dirs[:2], count],
                                                            tmp_path / "m"))

    changed = tmp_path / "data-copy"
    shutil.copytree(synth_data, changed)
    (changed / "P3" / "extra.parquet").write_bytes(
        next((synth_data / "P3").glob("*.parquet")).read_bytes())
    other_data = tmp_path / "other-data"
    args = make(other_data)
    args[args.index("--data-dir") + 1] = str(changed)
    assert invoke(*args, "--shard", "3/3").exit_code == 0
    assert "data fingerprint" in _one_error_line(_merge([*dirs[:2], other_data],
                                                        tmp_path / "m"))

    other_bench = tmp_path / "evaluate"
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": "x", "output": "3 cans", "expected_output": "3 cans",
          "evaluators": [{"validator": "count"}]}]))
    assert invoke("evaluate", tmp_path / "cases.yaml", "--out", other_bench, "--no-progress",
                  "--no-report", "--shard", "1/1").exit_code == 0
    assert "benchmark (salbench vs evaluate)" in _one_error_line(
        _merge([dirs[0], other_bench], tmp_path / "m"))


def test_missing_repeated_and_foreign_shards_are_refused(three, tmp_path, serve, synth_data):
    dirs, make = three
    assert "3/3 is missing" in _one_error_line(_merge(dirs[:2], tmp_path / "m"))
    assert "given twice" in _one_error_line(_merge([dirs[0], dirs[0], dirs[1]],
                                                   tmp_path / "m"))
    plain = tmp_path / "plain"
    assert invoke(*make(plain)).exit_code == 0
    assert "is not a shard" in _one_error_line(_merge([*dirs[:2], plain], tmp_path / "m"))
    assert "is not a run directory" in _one_error_line(
        _merge([*dirs[:2], tmp_path / "nowhere"], tmp_path / "m"))

    # A sample copied into another shard's journal would be counted twice.
    tampered = tmp_path / "tampered"
    shutil.copytree(dirs[2], tampered)
    stolen = (dirs[0] / "samples.jsonl").read_text().splitlines()[0]
    with open(tampered / "samples.jsonl", "a") as fh:
        fh.write(stolen + "\n")
    line = _one_error_line(_merge([dirs[0], dirs[1], tampered], tmp_path / "m"))
    assert "belongs to another shard" in line and json.loads(stolen)["id"] in line
    assert not (tmp_path / "m" / "samples.jsonl").exists()  # refused before writing


def test_partial_merge_says_what_is_missing_and_resume_completes_it(three, tmp_path,
                                                                    serve, synth_data):
    dirs, make = three
    whole = tmp_path / "whole"
    assert invoke(*make(whole)).exit_code == 0
    partial = tmp_path / "partial"
    result = _merge(dirs[:2], partial, "--allow-partial")
    assert result.exit_code == 1 and "shards 3/3 are missing" in result.stderr, result.output
    info = load(partial, "run.json")
    assert info["status"] == "partial" and info["missing_shards"] == [{"index": 3, "count": 3}]
    assert invoke("report", partial).exit_code == 0
    page = (partial / "report.html").read_text()
    assert "merged from 2 of 3 shards (missing 3/3)" in page and "shard 2:" in page
    resumed = invoke("salbench", "--resume", partial, "--no-progress", "--no-report",
                     "--base-url", info["backend"]["base_url"])
    assert resumed.exit_code == 0, resumed.output
    assert _metrics_bytes(partial) == _metrics_bytes(whole)


def test_a_shard_resumes_on_its_own_and_keeps_its_own_cache(three, tmp_path):
    dirs, make = three
    info = load(dirs[0], "run.json")
    cache = Path(info["engine"]["cache_path"])
    assert cache.name == "responses-shard-1-of-3.sqlite3" and cache.exists()
    again = invoke("salbench", "--resume", dirs[0], "--no-progress", "--no-report",
                   "--base-url", info["backend"]["base_url"])
    assert again.exit_code == 0 and "shard 1/3" in again.stderr
    url = ("--base-url", info["backend"]["base_url"])
    same = invoke("salbench", "--resume", dirs[0], "--shard", "1/3", "--no-progress",
                  "--no-report", *url)  # the recorded shard, given again: taken
    assert same.exit_code == 0 and "shard 1/3" in same.stderr, same.output
    refused = invoke("salbench", "--resume", dirs[0], "--shard", "2/3", *url)
    assert refused.exit_code == 2
    assert "--shard: the run recorded 1/3, given 2/3" in refused.stderr
