"""Request variants (`--variant`) through real loopback runs: what the server receives in each
form, the original family's metrics untouched, the paired tests against the stored images,
the blind control against chance, and resume, shards and merge keeping the families."""

from __future__ import annotations

import base64
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args
from PIL import Image as PILImage
from scipy.stats import binomtest

from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.loopback.server import answer_canary, answer_fixed, answer_popout
from visioneval.variants.kinds import Blind, Jpeg, Scale, VariantError, parse


def _images(body: dict) -> list[bytes]:
    """The images of an OpenAI chat request, decoded from their data URLs."""
    out = []
    for message in body["messages"]:
        content = message["content"]
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                out.append(base64.b64decode(url.split(",", 1)[1]))
    return out


def _text(body: dict) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [p["text"] for p in content if p.get("type") == "text"]
    return "\n".join(parts)


def test_the_flag_names_variants_and_lists():
    assert [v.name for v in parse(["jpeg:90,50,20"])] == ["jpeg:90", "jpeg:50", "jpeg:20"]
    assert [v.name for v in parse(["max-side:1568,768,384", "blind"])] == [
        "max-side:1568", "max-side:768", "max-side:384", "blind"]
    assert parse(["jpeg:90,jpeg:90", "scale:0.5"]) == [Jpeg(90), Scale(0.5)]
    assert isinstance(parse(["BLIND"])[0], Blind)
    with pytest.raises(VariantError, match="JPEG quality is 1 to 95"):
        parse(["jpeg:0"])
    with pytest.raises(VariantError, match="sepia: not a variant; choose from blind"):
        parse(["sepia"])
    with pytest.raises(VariantError, match="blind takes no argument"):
        parse(["blind:3"])
    with pytest.raises(VariantError, match="max-side needs a number"):
        parse(["max-side:big"])


def test_each_variant_sends_what_it_says(serve, synth_data, tmp_path):
    server = serve(answer=answer_popout)
    server.stats.keep_bodies = True
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3", "--no-cache",
                                   "--no-report", "--variant", "blind", "--variant",
                                   "jpeg:50", "--variant", "max-side:96"))
    assert result.exit_code == 0, result.output
    bodies = server.stats.bodies
    assert len(bodies) == 4 * 8  # 8 rows, the stored images and three variants
    by_kind: dict[str, list[bytes]] = {"none": [], "png": [], "jpeg": []}
    for body in bodies:
        images = _images(body)
        assert len(images) <= 1
        if not images:
            by_kind["none"].append(b"")
        elif images[0].startswith(b"\xff\xd8"):
            by_kind["jpeg"].append(images[0])
        else:
            by_kind["png"].append(images[0])
    assert len(by_kind["none"]) == 8  # blind: no image part at all
    assert len(by_kind["jpeg"]) == 8 and len(by_kind["png"]) == 16
    reference = io.BytesIO()
    PILImage.new("RGB", (8, 8)).save(reference, format="JPEG", quality=50)
    tables = PILImage.open(reference).quantization
    for data in by_kind["jpeg"]:
        with PILImage.open(io.BytesIO(data)) as jpeg:
            assert jpeg.quantization == tables  # quality 50's tables
            assert jpeg.size == (384, 384)
    sizes = sorted(PILImage.open(io.BytesIO(d)).size for d in by_kind["png"])
    assert sizes == [(96, 96)] * 8 + [(384, 384)] * 8
    # The text is unchanged in every form: each prompt text comes in all four.
    texts = Counter(_text(b) for b in bodies)
    assert all(count % 4 == 0 for count in texts.values())
    info = load(out, "run.json")
    assert [v["name"] for v in info["variants"]] == ["blind", "jpeg:50", "max-side:96"]
    assert "quality 50" in info["variants"][1]["transform"]
    assert info["variants"][1]["pillow"] == PILImage.__version__
    records = journal(out)
    ids = {r["id"] for r in records}
    assert {f"{i}@jpeg:50" for i in ids if "@" not in i} <= ids
    blind = next(r for r in records if r["id"].endswith("@blind"))
    assert blind["group"] == "P3 [blind]" and blind["metadata"]["variant"] == "blind"
    assert not any("image" in part for m in blind["prompt"] for part in m["parts"]
                   if isinstance(part, dict))


def test_the_benchmark_metrics_are_the_stored_images_alone(serve, synth_data, tmp_path):
    server = serve(answer=answer_popout)
    plain, varied = tmp_path / "plain", tmp_path / "varied"
    for out, extra in ((plain, ()), (varied, ("--variant", "blind,grayscale"))):
        result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3,P3_box",
                                       "--no-report", *extra))
        assert result.exit_code == 0, result.output
    assert load(plain) == load(varied)
    assert not (plain / "variants.json").exists()
    assert (plain / "table1.csv").read_text() == (varied / "table1.csv").read_text()


def _p3(root: Path, n: int) -> Path:
    write_synthetic(root, n, seed=11)
    return root


@pytest.mark.slow
def test_popout_without_the_image_is_at_chance_and_drops_significantly(serve, tmp_path):
    """The popout model answers from the image; without it, it names the first feature the
    prompt lists: exact match at chance (a third on balanced one-feature scenes)."""
    data = _p3(tmp_path / "data", 60)
    server = serve(answer=answer_popout)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, data, out, "--configs", "P3", "--no-report",
                                   "--variant", "blind"))
    assert result.exit_code == 0, result.output
    summary = load(out, "variants.json")
    (blind,) = summary["variants"]
    em = next(m for m in blind["metrics"] if m["metric"] == "P3 exact match")
    assert em["n"] == 60
    assert em["original"]["value"] > 0.8
    assert em["versus_original"]["test"] == "McNemar exact"
    assert em["versus_original"]["significant"] and em["versus_original"]["p"] < 1e-6
    assert em["chance"]["value"] == pytest.approx(1 / 3)
    assert not em["versus_chance"]["significant"]
    low, high = em["variant"]["ci95"]
    assert low <= 1 / 3 <= high
    # McNemar's p from the journal's own outcomes.
    records = {r["id"]: r["scores"]["strict"]["exact_match"] for r in journal(out)}
    only_stored = sum(v == 1 and records[f"{i}@blind"] == 0 for i, v in records.items()
                      if "@" not in i)
    only_blind = sum(v == 0 and records[f"{i}@blind"] == 1 for i, v in records.items()
                     if "@" not in i)
    assert em["versus_original"]["p"] == pytest.approx(
        binomtest(min(only_stored, only_blind), only_stored + only_blind, 0.5).pvalue)
    right = blind["answered_without_image"]
    assert right["count"] == sum(records[f"{i}@blind"] == 1 for i in records if "@" not in i)
    shown = invoke("show", out).stdout  # the variants' table, after the benchmark's own
    assert "Variants against the stored images" in shown
    assert "blind: P3 exact match" in shown and "chance 33.3%" in flat(shown)


def _text_only(prompt) -> str:
    """Answers from the words alone: the same answer with or without the image."""
    return ["Color", "Size", "Orientation"][len(prompt.text) % 3]


def test_a_model_that_reads_only_the_text_loses_nothing_blind(serve, synth_data, tmp_path):
    server = serve(answer=_text_only)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3_box",
                                   "--no-report", "--variant", "blind", "--no-cache"))
    assert result.exit_code == 0, result.output
    (blind,) = load(out, "variants.json")["variants"]
    for metric in blind["metrics"]:
        assert metric["variant"]["value"] == metric["original"]["value"]
        assert metric["versus_original"]["difference"] == 0.0
        assert not metric["versus_original"]["significant"]


def test_resume_keeps_the_variants_and_a_new_one_is_refused(serve, synth_data, tmp_path):
    server = serve(answer=answer_popout, fail_rate=0.3, faults=("500",), seed=2)
    out = tmp_path / "run"
    args = salbench_args(server, synth_data, out, "--configs", "P3", "--no-report",
                         "--variant", "blind", "--max-attempts", "1")
    invoke(*args)
    errors = [r for r in journal(out) if r["response"].get("error")]
    assert errors  # some requests of both families failed: error records, never scored
    server.script.fail_rate = 0.0
    resumed = invoke("salbench", "--resume", out, "--base-url", server.base_url + "/v1",
                     "--no-progress", "--no-report")
    assert resumed.exit_code == 0, resumed.output
    latest = {r["id"]: r for r in journal(out)}
    assert len(latest) == 16 and all(r["response"].get("error") is None
                                     for r in latest.values())
    summary = load(out, "variants.json")
    assert summary["variants"][0]["n_errors"] == 0
    again = invoke("salbench", "--resume", out, "--variant", "jpeg:50", "--no-progress")
    assert again.exit_code == 2
    assert "--variant" in again.output and "recorded" in again.output


@pytest.mark.slow
def test_shards_keep_a_row_s_families_together_and_merge_to_the_whole(serve, synth_data,
                                                                      tmp_path):
    server = serve(answer=answer_popout)
    whole = tmp_path / "whole"
    common = ("--configs", "P3", "--no-report", "--variant", "blind", "--variant", "jpeg:40")
    assert invoke(*salbench_args(server, synth_data, whole, *common)).exit_code == 0
    parts = []
    for k in (1, 2):
        part = tmp_path / f"shard{k}"
        result = invoke(*salbench_args(server, synth_data, part, *common, "--shard", f"{k}/2"))
        assert result.exit_code == 0, result.output
        ids = {r["id"] for r in journal(part)}
        originals = {i for i in ids if "@" not in i}
        assert ids == originals | {f"{i}@{v}" for i in originals for v in ("blind", "jpeg:40")}
        parts.append(part)
    merged = tmp_path / "merged"
    result = invoke("merge", *parts, "--out", merged)
    assert result.exit_code == 0, result.output
    assert load(merged, "variants.json") == load(whole, "variants.json")
    assert load(merged) == load(whole)


def _dry(data: Path, *extra: str) -> tuple[int, int]:
    result = invoke("salbench", "--backend", "openai", "--model", "gpt-4o", "--data-dir",
                    data, "--configs", "P3", "--dry-run", *extra)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    requests = int(lines[1].split()[1])
    tokens = int(lines[2].split()[2].strip("~").replace(",", ""))
    return requests, tokens


def test_a_dry_run_counts_every_family(synth_data):
    requests, tokens = _dry(synth_data)
    varied, varied_tokens = _dry(synth_data, "--variant", "blind", "--variant", "max-side:96")
    assert (requests, varied) == (8, 24)
    # Priced by what each form sends: no image blind, a smaller one at 96 px.
    assert tokens < varied_tokens < 3 * tokens


@pytest.mark.slow
def test_the_report_and_compare_show_the_controls(serve, synth_data, tmp_path):
    popout, fixed = serve(answer=answer_popout), serve(answer=answer_fixed("Color"))
    runs = []
    for server, name in ((popout, "popout"), (fixed, "fixed")):
        out = tmp_path / name
        result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                       "--variant", "blind", "--variant", "jpeg:80,30"))
        assert result.exit_code == 0, result.output
        runs.append(out)
    page = (runs[0] / "report.html").read_text()
    assert "Controls: the same samples, changed" in page
    assert "P3 exact match by JPEG quality" in page
    assert "answered correctly without the image" in page.lower()
    compared = invoke("compare", *runs, "--out", tmp_path / "cmp")
    assert compared.exit_code == 0, compared.output
    assert "Controls: the same samples, changed" in compared.stdout
    assert "Answerable without the image" in compared.stdout
    html = (tmp_path / "cmp" / "comparison.html").read_text()
    assert "without image" in html
    # The paired tests between runs are the stored images' alone.
    assert "[blind]" not in compared.stdout.split("Paired tests")[-1]
    rows = json.loads((runs[1] / "variants.json").read_text())["variants"]
    assert {v["name"] for v in rows} == {"blind", "jpeg:80", "jpeg:30"}


@pytest.mark.slow
def test_the_python_api_takes_variants(synth_data, tmp_path):
    from visioneval import api

    result = api.run("salbench", model="popout", backend="builtin", report=False,
                     options={"data_dir": synth_data, "configs": ["P3"]},
                     out=tmp_path / "run", variants=["blind", "jpeg:60"])
    assert [v["name"] for v in result.variants["variants"]] == ["blind", "jpeg:60"]
    assert result.variants == load(tmp_path / "run", "variants.json")
    assert result.n_records == 3 * 8


def _curve(out: Path) -> dict[float, float]:
    """Exact match per max-side variant, and the stored images' as the data's 384 px."""
    summary = load(out, "variants.json")
    found = {}
    for variant in summary["variants"]:
        em = next(m for m in variant["metrics"] if m["metric"] == "P3 exact match")
        found[variant["axis_value"]] = em["variant"]["value"]
        found[384.0] = em["original"]["value"]
    return found


@pytest.mark.slow
def test_a_downscaling_server_is_measured_and_shifts_the_size_curve(serve, tmp_path):
    """A server that halves every image before its model looks: the probe recovers the
    factor 2 into run.json, and the max-side curve against it is the plain server's curve
    at half the size (what the model sees is max-side N / 2)."""
    data = _p3(tmp_path / "data", 60)
    variants = ("--variant", "max-side:192,96,48,24")
    plain, halved = tmp_path / "plain", tmp_path / "halved"
    result = invoke(*salbench_args(serve(answer=answer_canary), data, plain, "--configs", "P3",
                                   "--no-report", *variants))
    assert result.exit_code == 0, result.output
    result = invoke(*salbench_args(serve(answer=answer_canary, downscale=2.0), data, halved,
                                   "--configs", "P3", "--no-report", "--probe-resolution",
                                   *variants))
    assert result.exit_code == 0, result.output
    probed = load(halved, "run.json")["resolution_probe"]
    assert probed["status"] == "loss" and probed["factor"] == pytest.approx(2.0, rel=0.25)
    assert "resolution probe: detail finer than 1/" in result.output
    assert "resolution_probe" not in load(plain, "run.json")
    seen, through = _curve(plain), _curve(halved)
    for size in (384.0, 192.0, 96.0, 48.0):  # halved at N is plain at N / 2
        assert through[size] == pytest.approx(seen[size / 2], abs=0.12), (size, seen, through)
    assert seen[384.0] - seen[24.0] > 0.3  # the curve falls within the sizes tried


def test_target_absent_rows_stay_out_of_the_blind_count(serve, tmp_path):
    """Control rows (SalBench's target-absent scenes) have no 0/1 outcome of their own in the
    paired metrics: the blind family's "answered without the image" counts present rows."""
    data = tmp_path / "data"
    write_synthetic(data, 8, seed=3, target_absent=4)
    out = tmp_path / "run"
    result = invoke(*salbench_args(serve(answer=answer_popout), data, out, "--configs", "P3",
                                   "--no-report", "--variant", "blind"))
    assert result.exit_code == 0, result.output
    (blind,) = load(out, "variants.json")["variants"]
    assert blind["n_records"] == 12
    assert blind["answered_without_image"]["n"] == 8
    assert all(m["n"] == 8 for m in blind["metrics"])
