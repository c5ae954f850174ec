"""run.json names its format: a new run writes `run_format`; a run from before the field
(format 1) still resumes and reports; a run from a newer visioneval is refused in one line.
Run directories as earlier versions wrote them (made here from a run of this version, cut
down to the keys those versions wrote) are read by report, compare, resume and merge."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from cli_helpers import invoke, load

from visioneval.core.store import RUN_FORMAT, RunStore, run_format


def _run(illusion_data, out, *extra):
    return invoke("illusionbench", "--backend", "builtin", "--model", "random", "--data-dir",
                  illusion_data, "--subsets", "ICON", "--num-samples", "3", "--out", out,
                  "--no-progress", "--no-report", *extra)


def test_a_new_run_writes_its_format_and_an_old_run_without_one_still_resumes(
        illusion_data, tmp_path):
    out = tmp_path / "run"
    assert _run(illusion_data, out).exit_code == 0
    info = load(out, "run.json")
    assert info["run_format"] == RUN_FORMAT == run_format(info)
    metrics = load(out)

    del info["run_format"]  # as a run written before the field existed
    (out / "run.json").write_text(json.dumps(info))
    assert RunStore.open(out).written_format == 1
    (out / "metrics.json").unlink()
    result = invoke("illusionbench", "--resume", out, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    assert load(out) == metrics


def test_a_run_from_a_newer_visioneval_is_refused_in_one_line(illusion_data, tmp_path):
    out = tmp_path / "run"
    assert _run(illusion_data, out).exit_code == 0
    info = load(out, "run.json")
    (out / "run.json").write_text(json.dumps(info | {"run_format": RUN_FORMAT + 1}))
    result = invoke("illusionbench", "--resume", out, "--no-progress", "--no-report")
    assert result.exit_code != 0
    assert f"run_format {RUN_FORMAT + 1}" in result.output
    assert "Traceback" not in result.output


# The keys the first visioneval (format 1, before `run_format`) wrote: one URL and where the
# key came from, six engine settings, sessions without host, usage or identities, counts
# without cost.
FORMAT_1 = {
    "backend": ("kind", "model", "base_url", "api_key_env", "key_env_used"),
    "engine": ("concurrency", "max_attempts", "timeout_s", "backoff_base_s", "backoff_cap_s",
               "cache_path"),
    "session": ("started_at", "resumed_from", "ended_at", "seconds", "cpu_seconds", "status",
                "resumed", "sent", "cache_hits", "finished", "errors", "skipped",
                "prompt_tokens", "completion_tokens", "skipped_rows"),
    "counts": ("records", "scored", "errors", "skipped_rows", "cache_hits", "requests_sent",
               "prompt_tokens", "completion_tokens"),
}
# The first format 2 (several URLs, the machine of each session, no cost yet).
FORMAT_2_FIRST = {
    "backend": (*FORMAT_1["backend"][:4], "base_urls", "key_env_used", "base_url_credentials"),
    "engine": (*FORMAT_1["engine"], "rpm", "tpm", "cache_key_url"),
    "session": (*FORMAT_1["session"][:2], "host", "pid", *FORMAT_1["session"][2:],
                "judge_requests", "error_reasons"),
    "counts": FORMAT_1["counts"],
}


def _as_written_by(info: dict, keys: dict, run_format_key: bool) -> dict:
    """`info` (run.json of this version) with only the keys an earlier version wrote."""
    def cut(block: dict, names: tuple[str, ...]) -> dict:
        return {k: block[k] for k in names if k in block}

    old = {k: v for k, v in info.items() if k not in ("run_format", "pricing")}
    if run_format_key:
        old = {"run_format": info["run_format"], **old}
    old["backend"] = cut(info["backend"], keys["backend"])
    old["engine"] = cut(info["engine"], keys["engine"])
    old["sessions"] = [cut(s, keys["session"]) | ({"shard": s["shard"]} if "shard" in s else {})
                       for s in info["sessions"]]
    old["counts"] = cut(info["counts"], keys["counts"])
    old["dataset"] = {k: v for k, v in info["dataset"].items() if k != "stat"}
    return old


def _rewrite(run: Path, keys: dict, run_format_key: bool) -> dict:
    old = _as_written_by(load(run, "run.json"), keys, run_format_key)
    (run / "run.json").write_text(json.dumps(old, indent=2))
    return old


def _salbench(synth_data, out, *extra):
    return invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                  synth_data, "--configs", "P3", "--out", out, "--no-progress", "--no-report",
                  *extra)


def _cards(run: Path) -> dict[str, str]:
    page = (run / "report.html").read_text()
    run = page[page.index('<section id="run">'):]
    return {label: value for value, label in
            re.findall(r'<div class="card"><b>(.*?)</b><span>(.*?)</span></div>', run)}


@pytest.mark.slow
def test_a_format_1_run_reports_compares_and_resumes_as_before(synth_data, tmp_path):
    now, old = tmp_path / "now", tmp_path / "old"
    assert _salbench(synth_data, now).exit_code == 0
    shutil.copytree(now, old)
    metrics = load(now)
    written = _rewrite(old, FORMAT_1, run_format_key=False)
    store = RunStore.open(old)
    assert store.written_format == 1 and store.info.run_format == RUN_FORMAT
    assert store.info.counts is not None and store.info.counts.cost is None

    assert invoke("report", old).exit_code == 0 and invoke("report", now).exit_code == 0
    cards_old, cards_now = _cards(old), _cards(now)
    assert cards_now["samples"] == "8" and cards_now["cost"] == "$0"
    assert cards_old.pop("cost") == "-"  # the run recorded none; never a made-up 0
    assert cards_old == {k: v for k, v in cards_now.items() if k != "cost"}
    assert (old / "run.json").read_text() == json.dumps(written, indent=2)  # reading wrote nothing

    result = invoke("compare", now, old, "--out", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    rows = [line for line in (tmp_path / "cmp" / "comparison.md").read_text().splitlines()
            if line.startswith("| random")]
    assert len(rows) == 2 and rows[0].split("|")[3:-2] == rows[1].split("|")[3:-2]

    (old / "metrics.json").unlink()
    result = invoke("salbench", "--resume", old, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    assert load(old) == metrics
    resumed = load(old, "run.json")
    # Written back in the current format: the one URL becomes the list of URLs; the first
    # session is kept as it was, the resume's own is added.
    assert resumed["run_format"] == RUN_FORMAT and resumed["backend"]["base_urls"] == []
    assert resumed["sessions"][0] == written["sessions"][0]
    assert len(resumed["sessions"]) == 2 and resumed["counts"]["records"] == 8


def test_shards_of_the_first_format_2_merge_as_a_run_done_whole(synth_data, tmp_path):
    whole = tmp_path / "whole"
    assert _salbench(synth_data, whole).exit_code == 0
    shards = []
    for k in (1, 2):
        shard = tmp_path / f"shard-{k}"
        assert _salbench(synth_data, shard, "--shard", f"{k}/2").exit_code == 0
        _rewrite(shard, FORMAT_2_FIRST, run_format_key=True)
        assert RunStore.open(shard).written_format == 2
        shards.append(shard)
    merged = tmp_path / "merged"
    result = invoke("merge", *shards, "--out", merged, "--no-report")
    assert result.exit_code == 0, result.output
    assert (merged / "metrics.json").read_bytes() == (whole / "metrics.json").read_bytes()
    info = load(merged, "run.json")
    assert [m["shard"]["index"] for m in info["merged_from"]] == [1, 2]
    assert [s["shard"] for s in info["sessions"]] == [1, 2]
    assert info["counts"]["records"] == load(whole, "run.json")["counts"]["records"]
    assert invoke("report", merged).exit_code == 0


def test_run_json_is_read_and_written_back_byte_for_byte(synth_data, tmp_path):
    """What a run writes is what the model reads and writes again: no key added, dropped
    or reordered, so the files earlier readers and the docs know stay as they were."""
    out = tmp_path / "run"
    assert _salbench(synth_data, out, "--num-samples", "3").exit_code == 0
    store = RunStore.open(out)
    assert store.info.to_json() == (out / "run.json").read_bytes()
    store.save_info()
    assert RunStore.open(out).info.to_json() == (out / "run.json").read_bytes()


def test_a_run_json_that_is_not_one_is_one_line_naming_the_file_and_field(synth_data,
                                                                           tmp_path):
    out = tmp_path / "run"
    assert _salbench(synth_data, out, "--num-samples", "3").exit_code == 0
    info = load(out, "run.json")
    cases = [(info | {"sessions": [info["sessions"][0] | {"pid": "many"}]}, "sessions.0.pid"),
             (info | {"notes": "mine"}, "notes: Extra inputs are not permitted"),
             ({k: v for k, v in info.items() if k != "backend"}, "backend: Field required")]
    for broken, field in cases:
        (out / "run.json").write_text(json.dumps(broken))
        result = invoke("report", out)
        assert result.exit_code != 0
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and f"{out / 'run.json'}: {field}" in lines[0], result.output
        assert "Traceback" not in result.output
