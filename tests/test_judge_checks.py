"""Checking the judges (`visioneval evaluate --judge-controls`, several `--judge-model`,
`--human-labels`): scripted loopback judges with known flaws are each flagged by the check
that should catch them, and the judge that reads the scenes passes them all.

The judges read what each example scene shows from its PNG (`loopback.scenes`): a stand-in
with known behaviour, so what is tested is visioneval's checks, not vision."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest
import yaml
from cli_helpers import flat, invoke, load

from visioneval.evaluators.panel import split_judges
from visioneval.loopback.server import ANSWER_MODES, SEEDED_MODES

EXAMPLES = Path(__file__).parent.parent / "examples" / "evaluators"


@pytest.fixture
def cases(tmp_path) -> Path:
    """The example file's judge cases on images (scenes, office), in a folder of their own."""
    folder = tmp_path / "cases"
    shutil.copytree(EXAMPLES / "scenes", folder / "scenes")
    shutil.copy(EXAMPLES / "office.png", folder / "office.png")
    shutil.copy(EXAMPLES / "human-labels.csv", folder / "human-labels.csv")
    kept = [c for c in yaml.safe_load((EXAMPLES / "cases.yaml").read_text())["cases"]
            if c.get("images") and all("judge" in e for e in c["evaluators"])]
    (folder / "cases.yaml").write_text(yaml.safe_dump({"cases": kept}))
    return folder / "cases.yaml"


def _judges(*servers) -> list[str]:
    args = ["--judge-backend", "openai"]
    for server in servers:
        args += ["--judge-model", "m", "--judge-base-url", server.base_url + "/v1"]
    return args


def _evaluate(cases: Path, out: Path, servers, *extra: str):
    result = invoke("evaluate", cases, *_judges(*servers), "--out", out, "--no-progress",
                    "--no-cache", *extra)
    assert result.exit_code == 0, result.output
    return result


def _cards(out: Path) -> list[dict]:
    return load(out)["judges"]["cards"]


def _verdicts(card: dict, check: str) -> dict[str, tuple[str, str]]:
    """{evaluator or edit kind: (verdict, finding)} of one check on a card."""
    key = "kind" if check == "probes" else "evaluator"
    return {c[key]: (c["verdict"], c["finding"]) for c in card.get(check, [])}


def test_the_judge_that_sees_passes_every_check(serve, cases, tmp_path):
    out = tmp_path / "sees"
    result = _evaluate(cases, out, [serve(answer=ANSWER_MODES["judge-sees"])],
                       "--judge-controls", "all", "--human-labels",
                       cases.parent / "human-labels.csv")
    card, = _cards(out)
    assert _verdicts(card, "blind") == {
        "judge:image-description": ("pass", "looks at the image"),
        "judge:comparison": ("pass", "looks at the image")}
    assert _verdicts(card, "order") == {"judge:comparison": ("pass", "no position bias")}
    assert {k: v[0] for k, v in _verdicts(card, "probes").items()} == {
        "count": "pass", "object": "pass", "missing": "pass", "colour": "pass"}
    people = {(h["evaluator"], h["dimension"]): h for h in card["humans"]}
    assert people[("judge:image-description", "score")]["alpha"] > 0.8
    assert card.get("flags", []) == []
    assert "flags on its judge card" not in result.output  # the run names no flagged judge
    shown = invoke("show", out).output  # the card
    assert "looks at the image" in shown and "FLAG" not in shown


def test_the_judge_that_ignores_the_image_is_flagged(serve, cases, tmp_path):
    """The checksum judge scores the text alone: the same scores without the images, and
    no edit named."""
    out = tmp_path / "text"
    result = _evaluate(cases, out, [serve(answer=ANSWER_MODES["judge"])],
                       "--judge-controls", "blind,probes")
    card, = _cards(out)
    blind = {c["evaluator"]: c for c in card["blind"]}["judge:image-description"]
    assert (blind["verdict"], blind["finding"]) == ("flag", "ignores the image")
    assert blind["identical"] == blind["n"] == 11 and blind["score"]["mean"] == 0
    assert {p["kind"]: p["verdict"] for p in card["probes"]} == {
        "count": "flag", "object": "flag", "missing": "flag", "colour": "flag"}
    assert all(p["named"] == 0 for p in card["probes"])
    assert "flags on its judge card" in result.output  # the run names the flagged judge
    assert "FLAG ignores the image (judge:image-description)" in invoke("show", out).output
    assert "order" not in card  # not asked for


def test_the_judge_that_prefers_the_first_image_shows_a_position_bias(serve, cases, tmp_path):
    out = tmp_path / "first"
    _evaluate(cases, out, [serve(answer=ANSWER_MODES["judge-first"])],
              "--judge-controls", "order")
    card, = _cards(out)
    order, = card["order"]
    assert (order["evaluator"], order["verdict"], order["finding"]) == (
        "judge:comparison", "flag", "position bias")
    assert order["n"] == 2 and order["score"]["mean"] > 0.1  # as given scores higher
    assert any(f.startswith("position bias (judge:comparison)") for f in card["flags"])


def test_the_judge_that_misses_counts_is_flagged_on_counts_alone(serve, cases, tmp_path):
    out = tmp_path / "no-counts"
    _evaluate(cases, out, [serve(answer=ANSWER_MODES["judge-no-counts"])],
              "--judge-controls", "probes")
    card, = _cards(out)
    probes = {p["kind"]: p for p in card["probes"]}
    assert probes["count"]["verdict"] == "flag" and probes["count"]["detected"] == 0
    assert {k: p["verdict"] for k, p in probes.items() if k != "count"} == {
        "object": "pass", "missing": "pass", "colour": "pass"}
    assert [f for f in card["flags"] if f.startswith("misses")] == [
        f"misses count edits: {probes['count']['why']}"]


def test_a_noisy_judge_agrees_with_nobody_not_even_itself(serve, cases, tmp_path):
    """A judge whose scores are noise: alpha with the judge that sees near 0, and with
    itself over three samples too; the one that sees agrees with itself."""
    out = tmp_path / "panel"
    sees = serve(answer=ANSWER_MODES["judge-sees"])
    noise = serve(answer=SEEDED_MODES["judge-noise"](7))
    result = _evaluate(cases, out, [sees, noise], "--judge-samples", "3", "--concurrency", "1")
    judges = load(out)["judges"]
    between = judges["agreement"]["judge:image-description"]["score"]
    assert between["alpha"] < 0.3 and between["reading"] == "unreliable"
    good, noisy = judges["cards"]
    assert good["self_agreement"]["judge:image-description"]["score"]["alpha"] == 1.0
    own = noisy["self_agreement"]["judge:image-description"]["score"]
    assert own["alpha"] < 0.3 and own["reading"] == "unreliable"
    assert any(f.startswith("disagrees with itself") for f in noisy["flags"])
    assert not any(f.startswith("disagrees with itself") for f in good.get("flags", []))
    assert (good["seeds"], good["samples"], good["temperature"]) == ([0, 1, 2], 3, 0.7)
    assert result.exit_code == 0, result.output
    assert "Agreement between the 2 judges" in invoke("show", out).output


def test_the_panel_score_is_the_judges_mean_or_median(serve, cases, tmp_path):
    servers = [serve(answer=ANSWER_MODES[m]) for m in ("judge-sees", "judge", "judge-first")]
    for how, pick in (("mean", statistics.fmean), ("median", statistics.median)):
        out = tmp_path / how
        _evaluate(cases, out, servers, "--panel-score", how)
        per_judge: dict[str, list[float]] = {}
        for line in (out / "samples.jsonl").read_text().splitlines():
            record = json.loads(line)
            per_judge.setdefault(record["metadata"]["case"], []).append(
                record["parsed"]["result"]["score"])
        metrics = load(out)
        assert metrics["judges"]["panel_score"] == how
        for case, block in metrics["cases"].items():
            (_, result), = block["evaluators"].items()
            assert len(per_judge[case]) == 3
            assert result["score"] == pytest.approx(pick(per_judge[case]))


def test_the_controls_leave_the_headline_as_it_was(serve, cases, tmp_path):
    """The controls are samples of their own, read by the checks alone: pass rates, scores
    and results.csv are those of the run without them."""
    server = serve(answer=ANSWER_MODES["judge-sees"])
    _evaluate(cases, tmp_path / "plain", [server])
    _evaluate(cases, tmp_path / "checked", [server], "--judge-controls", "all")
    plain, checked = load(tmp_path / "plain"), load(tmp_path / "checked")
    assert checked["evaluators"] == plain["evaluators"]
    assert checked["cases"] == plain["cases"]
    assert (tmp_path / "plain" / "results.csv").read_text() == \
        (tmp_path / "checked" / "results.csv").read_text()
    records = (tmp_path / "checked" / "samples.jsonl").read_text().splitlines()
    controls = [json.loads(r)["metadata"] for r in records if "+" in json.loads(r)["id"]]
    assert len(records) == 13 + len(controls)  # 11 descriptions and 2 comparisons
    edits = [m for m in controls if m["control"].startswith("edit:")]
    assert edits and all(set(m["edit"]) == {"kind", "change", "markers", "detail"}
                         for m in edits)


def test_a_resume_names_the_further_judges_servers_again(serve, cases, tmp_path):
    sees, text = serve(answer=ANSWER_MODES["judge-sees"]), serve(answer=ANSWER_MODES["judge"])
    out = tmp_path / "run"
    _evaluate(cases, out, [sees, text], "--judge-controls", "blind")
    run = json.loads((out / "run.json").read_text())
    assert [p["base_url"] for p in run["options"]["panel"]] == [text.base_url + "/v1"]
    refused = invoke("evaluate", "--resume", out, "--no-progress")
    assert refused.exit_code == 2
    assert "judge 2 (m) was asked at" in refused.output and "name its server again" in \
        refused.output
    again = invoke("evaluate", "--resume", out, "--judge-base-url", sees.base_url + "/v1",
                   "--judge-base-url", text.base_url + "/v1", "--no-progress")
    assert again.exit_code == 0, again.output
    wrong = invoke("evaluate", "--resume", out, "--judge-base-url", sees.base_url + "/v1",
                   "--no-progress")  # one URL is every judge's
    assert wrong.exit_code == 2 and "does not match judge 2" in wrong.output
    changed = invoke("evaluate", "--resume", out, "--judge-controls", "all", "--no-progress")
    assert changed.exit_code == 2 and "--judge-controls" in changed.output


def test_a_bad_human_labels_file_is_one_line(serve, cases, tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("case,dimension,score\noffice-description,clarity,eleven\n")
    result = invoke("evaluate", cases, *_judges(serve(answer=ANSWER_MODES["judge"])),
                    "--human-labels", labels, "--out", tmp_path / "run", "--no-progress")
    assert result.exit_code == 2
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "labels.csv" in lines[0] and "line 2" in lines[0], lines


@pytest.mark.slow
def test_human_scores_for_what_the_run_does_not_have_are_counted_and_named(serve, cases,
                                                                          tmp_path):
    server = serve(answer=ANSWER_MODES["judge-sees"])
    _evaluate(cases, tmp_path / "plain", [server], "--human-labels",
              cases.parent / "human-labels.csv")
    plain = load(tmp_path / "plain")["judges"]
    labels = tmp_path / "labels.csv"
    labels.write_text((cases.parent / "human-labels.csv").read_text() +
                      "nosuch-case,judge:image-description,clarity,5\n"
                      "office-description,judge:image-description,sharpness,4\n")
    result = _evaluate(cases, tmp_path / "more", [server], "--human-labels", labels)
    more = load(tmp_path / "more")["judges"]
    # The agreement is the same: the rows the run does not have change nothing ...
    assert more["cards"][0]["humans"] == plain["cards"][0]["humans"]
    # ... and they are said, not dropped without a word.
    info, before = more["human_labels"], plain["human_labels"]
    assert info["unused"] == before.get("unused", 0) + 2
    assert info["labels"] == before["labels"] + 2
    assert "nosuch-case judge:image-description clarity" in " ".join(info["unused_named"]) \
        or len(info["unused_named"]) == 5
    said = flat(result.output)  # the run's end says it once, wrapped at 100 columns
    assert said.count("human labels:") == 1, said
    told = said[said.index("human labels:"):]
    assert told.startswith(f"human labels: {info['unused']} of {info['labels']} scores in "
                           f"{labels}") and "were left out" in told
    assert "were left out" in (tmp_path / "more" / "report.html").read_text()


def test_the_card_is_in_the_report_and_in_compare(serve, cases, tmp_path):
    server = serve(answer=ANSWER_MODES["judge-sees"])
    _evaluate(cases, tmp_path / "a", [server], "--judge-controls", "blind",
              "--human-labels", cases.parent / "human-labels.csv")
    _evaluate(cases, tmp_path / "b", [serve(answer=ANSWER_MODES["judge"])],
              "--judge-controls", "blind")
    page = (tmp_path / "a" / "report.html").read_text()
    assert "<h2>Judges</h2>" in page and "looks at the image" in page
    assert "against people: image-description" in page  # the calibration chart
    compared = invoke("compare", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "cmp")
    assert compared.exit_code == 0, compared.output
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "looks at the image" in text and "ignores the image" in text


@pytest.mark.parametrize(("models", "backends", "urls", "keys", "error"), [
    (["a", "b"], ["openai"], ["u1", "u2", "u3"], [], "--judge-base-url was given 3 times"),
    (["a", "b", "c"], ["openai", "ollama"], [], [], "--judge-backend was given 2 times"),
    (["a", "a"], ["openai"], ["u"], [], "the same model twice"),
    (["a"], ["openai", "ollama"], [], [], "once per --judge-model"),
    (["a", "b"], ["openai", "builtin"], [], [], "a judge is a model on a server"),
])
def test_judge_flags_that_do_not_pair_are_one_line(models, backends, urls, keys, error):
    with pytest.raises(ValueError, match=error):
        split_judges(models, backends, urls, keys)


def test_judge_flags_pair_by_position_or_once_for_all():
    first, panel = split_judges(["a", "b"], ["openai", "anthropic"], ["http://x/v1"],
                                ["KEY_A", "KEY_B"])
    assert (first.kind, first.model, first.base_urls, first.api_key_env) == (
        "openai", "a", ["http://x/v1"], "KEY_A")
    assert [(p.kind, p.model, p.base_url, p.api_key_env) for p in panel] == [
        ("anthropic", "b", "http://x/v1", "KEY_B")]
    alone, none = split_judges(["a"], ["openai"], ["http://r1/v1", "http://r2/v1"], [])
    assert alone.base_urls == ["http://r1/v1", "http://r2/v1"] and none == ()  # replicas


def test_a_dry_run_counts_each_judges_requests_with_its_controls(serve, cases, tmp_path):
    servers = [serve(answer=ANSWER_MODES["judge-sees"]), serve(answer=ANSWER_MODES["judge"])]
    dry = invoke("evaluate", cases, *_judges(*servers), "--judge-controls", "all",
                 "--dry-run")
    assert dry.exit_code == 0, dry.output
    counted = [int(line.split()[1]) for line in dry.output.splitlines()
               if line.strip().startswith("requests")]
    assert [line.startswith("dry run for evaluate") for line in dry.output.splitlines()
            if line.startswith("dry run")] == [True, True]
    assert "(panel model 1)" in dry.output
    _evaluate(cases, tmp_path / "run", servers, "--judge-controls", "all")
    records = [json.loads(r) for r in
               (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    per_judge = [sum(1 for r in records if r["metadata"].get("judge", 1) == k) for k in (1, 2)]
    assert counted == per_judge and per_judge[0] == per_judge[1] > 13


def test_two_noisy_judges_agree_near_zero(serve, cases, tmp_path):
    """Pure noise against pure noise (one request at a time: each judge's draws in a fixed
    order): alpha unreliable, its interval reaching below 0. That noise gives alpha near 0
    over many draws is stats.agreement's own test."""
    out = tmp_path / "noise"
    _evaluate(cases, out, [serve(answer=SEEDED_MODES["judge-noise"](1)),
                           serve(answer=SEEDED_MODES["judge-noise"](2))], "--concurrency", "1")
    found = load(out)["judges"]["agreement"]["judge:image-description"]["score"]
    assert found["alpha"] < 0.667 and found["reading"] == "unreliable"
    assert found["ci95"][0] < 0


@pytest.mark.slow
def test_two_shards_merged_make_the_cards_of_the_whole_run(serve, cases, tmp_path):
    servers = [serve(answer=ANSWER_MODES["judge-sees"]), serve(answer=ANSWER_MODES["judge"])]
    for k in (1, 2):
        _evaluate(cases, tmp_path / f"shard{k}", servers, "--judge-controls", "all",
                  "--shard", f"{k}/2")
    merged = invoke("merge", tmp_path / "shard1", tmp_path / "shard2", "--out",
                    tmp_path / "merged")
    assert merged.exit_code == 0, merged.output
    _evaluate(cases, tmp_path / "whole", servers, "--judge-controls", "all")
    assert load(tmp_path / "merged") == load(tmp_path / "whole")
