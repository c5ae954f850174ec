"""IllusionBench end to end: the real command against the loopback server over real HTTP,
the offline random baseline, bad rows, resume and the synthetic set."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load
from helpers import png_bytes

from visioneval.baselines.prompt_reading import choices
from visioneval.benchmarks.illusionbench.benchmark import build
from visioneval.benchmarks.illusionbench.names import parse
from visioneval.benchmarks.illusionbench.prompts import lmms_prompt, original_prompt
from visioneval.benchmarks.illusionbench.synth import write_synthetic
from visioneval.core.records import SkippedRow
from visioneval.io.parquet import iter_rows, parquet_files, write_hf_parquet
from visioneval.loopback.server import Prompt, answer_hash

SUBSETS = ("ICON", "LOGO", "IN")


def args(server, data: Path, out: Path, *extra: str) -> list:
    return ["illusionbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
            "--model", "m", "--data-dir", data, "--out", out, "--no-progress",
            "--backoff-base", "0.01", "--backoff-cap", "0.05", *extra]


def names(data: Path, subset: str) -> list[str]:
    files = [f for f in parquet_files(data) if f.name.startswith(f"Illusion_{subset}-")]
    return [row.values["image_name"] for row in iter_rows(files, ("image_name",))]


def labels(data: Path, subset: str) -> list[tuple[str, str]]:
    """(shape, scene) by the original's own split: scene is field [2] for ICON, else [1]."""
    out = []
    for name in names(data, subset):
        fields = name.split("-")
        out.append((fields[0], fields[2] if subset == "ICON" else fields[1]))
    return out


def is_scene_prompt(text: str) -> bool:
    return "Identify the background" in text or "depicting a SCENE" in text


def fixed_answers(shape: str, scene: str):
    """A scripted model: one shape and one scene, in the format each prompt asks for."""
    def answer(prompt) -> str:
        choice = scene if is_scene_prompt(prompt.text) else shape
        return f"Answer: {choice}" if "Answer: <your choice>" in prompt.text else choice
    return answer


def test_protocol_all_shares_requests_and_shows_the_three_side_by_side(serve, illusion_data,
                                                                        tmp_path):
    scenes = Counter(s for sub in SUBSETS for _, s in labels(illusion_data, sub))
    scene = scenes.most_common(1)[0][0]
    server = serve(answer=fixed_answers("Animal", scene))
    out = tmp_path / "run"
    result = invoke(*args(server, illusion_data, out, "--protocol", "all"))
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 12 * 3 * 2 * 2  # 2 prompt families, not 3 protocols
    metrics = load(out)
    assert list(metrics) == ["original", "lmms-strict", "lmms-recall"]
    for subset in SUBSETS:
        truth = labels(illusion_data, subset)
        animal = sum(s == "animal" for s, _ in truth) / len(truth)
        share = sum(s == scene for _, s in truth) / len(truth)
        for protocol in metrics:
            block = metrics[protocol][subset]
            assert (block["shape"]["n"], block["scene"]["n"]) == (12, 12), protocol
            assert block["shape_recall"] == pytest.approx(animal), (protocol, subset)
            assert block["scene_recall"] == pytest.approx(share), (protocol, subset)
    assert metrics["original"]["ICON"]["labels_not_offered"]["shape"] == ["stationary"]
    assert metrics["original"]["LOGO"]["labels_not_offered"]["shape"] == ["benz"]
    assert metrics["lmms-strict"]["LOGO"]["labels_not_offered"]["shape"] == []
    rows = list(csv.DictReader((out / "protocols.csv").open()))
    assert len(rows) == 3 * 4 and rows[0]["protocol"] == "original"
    records = journal(out)
    assert len(records) == 144 and len({r["id"] for r in records}) == 144
    first = records[0]
    assert first["id"].startswith("ICON/") and first["id"].endswith("/shape/original")
    assert set(first["parsed"]) == {"original", "original-fixed", "lmms-recall"}
    assert {tuple(r["parsed"]) for r in records if r["metadata"]["family"] == "lmms"} == \
        {("lmms-strict",)}
    info = load(out, "run.json")
    assert info["benchmark"] == "illusionbench" and info["generation"]["max_tokens"] == 64
    assert info["dataset"]["rows"] == {"ICON": 12, "LOGO": 12, "IN": 12}
    assert "lmms-strict" in result.stdout and "lmms-recall" in result.stdout  # the main table
    shown = invoke("show", out)  # every table: the protocols, the bias view, the quirks
    assert shown.exit_code == 0, shown.output
    for text in ("lmms-strict", "lmms-recall", "Shape or scene?", "'stationary' is not among"):
        assert text in flat(shown.stdout)


def test_each_protocol_alone_and_recall_reuses_the_original_requests(serve, illusion_data,
                                                                      tmp_path):
    server = serve(answer=fixed_answers("Cat", "Forest"))
    for protocol, sent in (("original", 72), ("lmms-recall", 72), ("lmms-strict", 144)):
        out = tmp_path / protocol
        result = invoke(*args(server, illusion_data, out, "--protocol", protocol))
        assert result.exit_code == 0, result.output
        assert server.stats.requests == sent, protocol  # lmms-recall: all from the cache
        assert list(load(out)) == [protocol]
        in_block = load(out)[protocol]["IN"]
        truth = labels(illusion_data, "IN")
        assert in_block["shape_recall"] == pytest.approx(
            sum(s == "cat" for s, _ in truth) / 12)
    assert load(tmp_path / "lmms-recall", "run.json")["counts"]["cache_hits"] == 72


def test_fix_quirks_reports_the_corrected_rule_and_what_it_changes(serve, illusion_data,
                                                                    tmp_path):
    server = serve(answer=fixed_answers("Stationery", "Ocean"))
    out = tmp_path / "run"
    result = invoke(*args(server, illusion_data, out, "--subsets", "icon", "--tasks", "shape",
                          "--protocol", "original", "--fix-quirks"))
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 12
    block = load(out)["original"]["ICON"]
    share = sum(s == "stationary" for s, _ in labels(illusion_data, "ICON")) / 12
    assert share > 0
    assert block["rule"] == "original-fixed" and block["shape_recall"] == pytest.approx(share)
    assert block["quirks"]["rule"] == "original" and block["quirks"]["shape_recall"] == 0
    assert "scene" not in block and "scene_recall" not in block
    assert "original (fixed)" in result.stdout and "as published" in result.stdout  # main


def _icon_row(name, image=None):
    image = {"bytes": png_bytes(), "path": "x.png"} if image is None else image
    return {"image_name": name, "image": image}


def test_bad_rows_are_named_skipped_and_counted(serve, tmp_path):
    data = tmp_path / "data"
    write_hf_parquet(data / "data" / "Illusion_ICON-00000-of-00002.parquet", [
        _icon_row("animal-1-Ocean-Easy-1.25-1.png"),
        _icon_row("animal-Ocean-Easy-1.25-2.png"),  # the LOGO/IN pattern, no icon index
        _icon_row("animal-1-Ocean-Medium-1.25-3.png"),
        _icon_row("music-2-City-Hard-0.85-4.png", image={"bytes": b"", "path": "a.png"}),
        _icon_row("music-2-City-Hard-0.85-5.png", image={"bytes": None, "path": "far.png"}),
        _icon_row("music-2-City-Hard-0.85-6.png", image={"bytes": b"not an image", "path": ""}),
        _icon_row(None),
        _icon_row("sport-3-Cloud-Hard-1.05-8.png"),
    ], ["image"])
    write_hf_parquet(data / "data" / "Illusion_ICON-00001-of-00002.parquet",
                     [{"image_name": "vehicle-1-Ocean-Easy-1.25-9.png"}], [])
    server = serve(answer=fixed_answers("Animal", "Ocean"))
    out = tmp_path / "run"
    result = invoke(*args(server, data, out, "--subsets", "ICON"))
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if "skipped" in ln]
    expected = {
        "image_name animal-Ocean-Easy-1.25-2.png": "does not follow the ICON pattern",
        "image_name animal-1-Ocean-Medium-1.25-3.png": "does not follow the ICON pattern",
        "image_name music-2-City-Hard-0.85-4.png": "undecodable image: empty image bytes",
        "image_name music-2-City-Hard-0.85-5.png": "image has no bytes (only a path: far.png)",
        "image_name music-2-City-Hard-0.85-6.png": "undecodable image: not a PNG",
        "#6": "image_name is empty or not text",
        "Illusion_ICON-00001-of-00002.parquet (every row)": "missing column(s) image",
    }
    for name, reason in expected.items():
        assert any(f"skipped ICON row {name}: " in ln and reason in ln for ln in lines), \
            (name, lines)
    assert len(lines) == len(expected)
    assert load(out, "run.json")["counts"]["skipped_rows"] == len(expected)
    # Each skipped row stands for its 4 samples (2 tasks x 2 families) on the progress bar;
    # the file without an image column for its one row.
    skipped = [s for s in build({"subsets": ["ICON"], "data_dir": str(data)}).samples()
               if isinstance(s, SkippedRow)]
    assert sorted(s.samples for s in skipped) == [4] * len(expected)
    assert load(out)["original"]["ICON"]["shape"]["n"] == 2
    assert server.stats.requests == 2 * 2 * 2


@pytest.mark.slow
def test_resume_retries_only_failed_samples(serve, illusion_data, tmp_path):
    server = serve(answer=fixed_answers("Dog", "City"), fail_rate=0.25, faults=("500",),
                   seed=3)
    out = tmp_path / "run"
    result = invoke(*args(server, illusion_data, out, "--max-attempts", "1", "--subsets",
                          "LOGO,IN", "--no-cache"))
    assert result.exit_code == 1 and "--resume" in result.stderr
    failed = [r for r in journal(out) if r["response"]["error"]]
    assert failed
    in_shape = [r for r in failed if r["group"] == "IN" and r["metadata"]["task"] == "shape"
                and r["metadata"]["family"] == "original"]
    assert load(out)["original"]["IN"]["shape"]["n_errors"] == len(in_shape)
    server.script.fail_rate = 0.0
    before = server.stats.requests
    result = invoke("illusionbench", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    assert server.stats.requests - before == len(failed)
    clean = tmp_path / "clean"
    invoke(*args(server, illusion_data, clean, "--subsets", "LOGO,IN", "--no-cache"))
    assert load(out) == load(clean)


def test_builtin_random_runs_offline(illusion_data, tmp_path):
    out = tmp_path / "run"
    base = ["illusionbench", "--backend", "builtin", "--model", "random", "--data-dir",
            illusion_data, "--no-progress", "--no-cache"]
    result = invoke(*base, "--out", out)
    assert result.exit_code == 0, result.output
    records = journal(out)
    assert len(records) == 144 and not any(r["response"]["error"] for r in records)
    for r in records:
        text = r["response"]["text"]
        if r["metadata"]["family"] == "lmms":
            assert text.startswith("Answer: ")  # the random baseline follows the format
        else:
            assert text in r["prompt"][0]["parts"][1]  # one of the offered options
    assert list(load(out)) == ["original", "lmms-strict", "lmms-recall"]
    invoke(*base, "--out", tmp_path / "again")
    assert load(tmp_path / "again") == load(out)  # seeded per request


def test_sample_seed_draws_the_same_stratified_rows(serve, illusion_data, tmp_path):
    server = serve(answer=fixed_answers("Animal", "Ocean"))
    picked = []
    for run in ("a", "b"):
        result = invoke(*args(server, illusion_data, tmp_path / run, "--subsets", "ICON",
                              "--tasks", "shape", "--protocol", "original", "--num-samples",
                              "6", "--sample-seed", "4"))
        assert result.exit_code == 0, result.output
        picked.append(sorted(r["metadata"]["row"] for r in journal(tmp_path / run)))
    assert picked[0] == picked[1] and len(picked[0]) == 6 and picked[0] != list(range(6))
    bad = invoke(*args(server, illusion_data, tmp_path / "c", "--sample-seed", "4"))
    assert bad.exit_code == 2 and "--num-samples" in bad.stderr


def test_missing_split_is_one_clear_error(illusion_data, tmp_path):
    result = invoke("illusionbench", "--backend", "builtin", "--model", "random",
                    "--data-dir", tmp_path, "--subsets", "LOGO")
    assert result.exit_code == 2
    assert "no Illusion_LOGO-*.parquet file" in result.stderr
    result = invoke("illusionbench", "--backend", "builtin", "--model", "random",
                    "--data-dir", illusion_data, "--subsets", "ICON,SIN")
    assert result.exit_code == 2 and "unknown SIN" in result.stderr
    result = invoke("illusionbench", "--backend", "builtin", "--model", "random")  # offline
    assert result.exit_code == 2
    assert "cannot download arshiahemmat/IllusionBench" in result.stderr
    assert "--data-dir" in result.stderr


def test_loopback_hash_model_answers_from_the_options_in_the_asked_format():
    text = lmms_prompt("LOGO", "shape")
    answer = answer_hash(Prompt(text, []))
    assert answer.startswith("Answer: ") and answer.removeprefix("Answer: ") in text
    text = original_prompt("IN", "scene")
    assert len(choices(text)) == 16 + 11
    assert answer_hash(Prompt(text, [])) in choices(text)


def test_synthetic_set_is_deterministic_and_in_the_real_patterns(tmp_path):
    a = write_synthetic(tmp_path / "a", 22, seed=1)
    b = write_synthetic(tmp_path / "b", 22, seed=1)
    for subset in SUBSETS:
        assert a[subset].read_bytes() == b[subset].read_bytes()
        assert a[subset].name == f"Illusion_{subset}-00000-of-00001.parquet"
        parsed = [parse(subset, n) for n in names(tmp_path / "a", subset)]
        assert {p.difficulty for p in parsed} == {"Easy", "Hard"}
        shapes = {p.shape for p in parsed}
        assert {"ICON": "stationary", "LOGO": "benz", "IN": "paper_clip"}[subset] in shapes
    assert write_synthetic(tmp_path / "c", 22, seed=2)["IN"].read_bytes() != \
        a["IN"].read_bytes()


def test_offline_baselines_read_lettered_options():
    """Multiple-choice prompts ("A. red" lines, vqa's) offer letters; the other styles keep
    their own options, and one lettered line alone is not a list of options."""
    from visioneval.baselines.prompt_reading import choices

    assert choices("Which colour?\nA. red\nB. green\n(C) blue\nAnswer with the letter.") == \
        ("A", "B", "C")
    assert choices("Options: [cat, dog]") == ("cat", "dog")
    assert choices("A. single line only. Options: [x, y]") == ("x", "y")
