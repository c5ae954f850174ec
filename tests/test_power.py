"""`visioneval power`: the sample size formulas against published values, the pilot-run path
on real runs against the loopback server (one run: its accuracy is the baseline; two runs on
the same samples: their discordance), the one-line errors, and `--dry-run`'s line."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args
from scipy.stats import norm

from visioneval.stats import power


def test_connor_paired_sample_size_matches_his_worked_example():
    # Connor (1987), Biometrics 43:207-211, p. 209: discordant proportions 0.45 and 0.05,
    # alpha 0.05 two-sided, power 0.8: 23 pairs (rounded up).
    assert math.ceil(power.n_paired(0.45 - 0.05, 0.45 + 0.05)) == 23


def test_fleiss_two_proportions_matches_statsmodels():
    # statsmodels 0.15 samplesize_proportions_2indep_onetail(0.2, 0.65, 0.8, alpha=0.05,
    # alternative="two-sided") = 72.393 (Fleiss, Levin & Paik's pooled-null formula).
    assert power.n_unpaired(0.20, 0.65) == pytest.approx(72.393, abs=1e-3)
    assert power.n_unpaired(0.05, 0.70) == pytest.approx(1250.717, abs=1e-3)


def test_detectable_difference_and_samples_needed_are_inverses():
    d = power.detectable_paired(500, 0.3)
    assert d is not None and power.n_paired(d, 0.3) == pytest.approx(500, rel=1e-6)
    assert power.power_paired(500, d, 0.3) == pytest.approx(0.8, abs=1e-6)
    fall, sign = power.detectable_unpaired(500, 0.7) or (0.0, 0)
    assert sign == -1  # towards 50% the variance grows: the fall is the harder direction
    assert power.n_unpaired(-fall, 0.7) == pytest.approx(500, rel=1e-6)
    assert power.power_unpaired(500, -fall, 0.7) == pytest.approx(0.8, abs=1e-6)
    # A discordance smaller than any detectable difference detects nothing.
    assert power.detectable_paired(10, 0.05) is None
    # From 95%, discordance 0.2 needs a fall of at least 10 points (p01 <= 5%), at most 20.
    assert power.feasible(0.95, 0.05, 0.2) is not None
    assert power.feasible(0.95, 0.10, 0.2) is None and power.feasible(0.95, 0.2, 0.2) is None


def test_exact_mcnemar_power_matches_enumerating_every_table():
    """The exact test's power summed over every (only A right, only B right) count at n = 20,
    each tested with scipy's binomtest as `visioneval compare` tests it."""
    from scipy.stats import binomtest, multinomial

    n, p10, p01 = 20, 0.05, 0.35
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            if b + c and binomtest(min(b, c), b + c, 0.5).pvalue < 0.05:
                total += multinomial.pmf([b, c, n - b - c], n, [p10, p01, 1 - p10 - p01])
    assert power.power_paired_exact(n, p01 - p10, p01 + p10) == pytest.approx(total, abs=1e-9)
    # Conservative: below the normal approximation's power at Connor's n.
    assert power.power_paired_exact(100, 0.107, 0.15) < power.power_paired(100, 0.107, 0.15)


def _json(*args: object) -> dict:
    result = invoke("power", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_command_without_runs_gives_connors_n_and_the_detectable_difference():
    out = _json("--difference", "0.05", "--discordance", "0.3")
    row = out["results"][0]
    za, zb = norm.ppf(0.975), norm.ppf(0.8)  # Connor's formula written out here
    assert row["n"] == math.ceil((za * math.sqrt(0.3) + zb * math.sqrt(0.3 - 0.0025)) ** 2
                                 / 0.0025)
    assert (row["design"], row["solved"], row["discordance_from"]) == \
        ("paired", "n", "given")
    out = _json("--n", "800", "--baseline", "0.7", "--alpha", "0.01", "--power", "0.9")
    row = out["results"][0]
    assert row["discordance_from"] == "assumed" and row["discordance"] == pytest.approx(0.42)
    assert power.power_paired(800, row["difference"], 0.42, 0.01) == pytest.approx(0.9)
    assert row["exact_power"] == pytest.approx(
        power.power_paired_exact(800, row["difference"], 0.42, 0.01))
    # From 50%, 50 points with 90% discordance needs 70% of samples right only in one
    # model: more than either model has right (a rise) or wrong (a fall).
    odd = _json("--difference", "0.5", "--baseline", "0.5", "--discordance", "0.9")
    assert odd["results"][0]["note"] == ("a discordance of 0.900 at a baseline of 50.0% means "
                                         "the models differ by 0.0 to 10.0 points, not 50.0")
    fits = _json("--difference", "0.3", "--baseline", "0.5", "--discordance", "0.5")
    assert fits["results"][0]["note"] == ""
    unpaired = _json("--n", "800", "--baseline", "0.7", "--unpaired")["results"][0]
    assert unpaired["discordance"] is None and unpaired["difference"] > 0
    # Independent samples need a larger difference than paired ones of less discordance.
    paired = _json("--n", "800", "--discordance", "0.2")["results"][0]
    assert paired["difference"] < unpaired["difference"]


def test_the_table_fits_80_columns_and_says_what_is_assumed(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    result = invoke("power", "--n", "300", "--baseline", "0.7")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    text = flat(result.stdout)
    assert "McNemar's test (Connor 1987)" in text and "0.420 *" in text
    assert "as if the two models' errors were independent: an upper bound" in text
    d = power.detectable_paired(300, 0.42)
    assert d is not None and f"±{100 * d:.1f} pts" in text


@pytest.mark.parametrize(("args", "message"), [
    (("--n", "10", "--difference", "0.1"), "give --n or --difference, not both"),
    (("--baseline", "0.7"), "give --n N"),
    (("--n", "10", "--discordance", "0.2", "--unpaired"), "--unpaired has none"),
    (("--n", "10", "--unpaired"), "--unpaired needs --baseline"),
    (("--n", "10"), "the paired design needs --discordance"),
    (("--difference", "5", "--discordance", "0.2"), "--difference 5 must be between"),
    (("--n", "10", "--baseline", "70"), "--baseline 70 must be between 0 and 1"),
    (("no-such-run", "--n", "10"), "no-such-run is not a run directory"),
])
def test_bad_flags_are_one_line(args, message):
    result = invoke("power", *args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def says_size(prompt) -> str:
    return "Size"


def says_color(prompt) -> str:
    return "Color"


def _run(serve, data, out, answer):
    server = serve(answer=answer)  # two answer functions: two models (and cache entries)
    result = invoke(*salbench_args(server, data, out, "--configs", "P3,P3_box"))
    assert result.exit_code == 0, result.output
    return out


def _outcomes(run) -> dict[str, dict[str, float]]:
    """Per config, each sample's strict exact match, read from the journal as written."""
    out: dict[str, dict[str, float]] = {}
    for record in journal(run):
        out.setdefault(record["group"], {})[record["id"]] = \
            record["scores"]["strict"]["exact_match"]
    return out


def test_pilot_runs_give_the_baseline_and_the_discordance(serve, synth_data, tmp_path):
    size = _run(serve, synth_data, tmp_path / "size", says_size)
    color = _run(serve, synth_data, tmp_path / "color", says_color)
    metrics = load(size)

    one = _json(size, "--n", "400")["results"]
    assert [r["metric"] for r in one] == ["P3 exact match", "P3_box exact match"]
    for row, config in zip(one, ("P3", "P3_box"), strict=True):
        assert row["baseline"] == pytest.approx(metrics[config]["strict"]["exact_match"])
        assert row["pilot_n"] == metrics[config]["strict"]["n"]
        assert row["discordance_from"] == "assumed"
    # Without --n, the pilot's own size is the planned n.
    own = _json(size, "--metric", "P3 exact match")["results"]
    assert len(own) == 1 and own[0]["n"] == own[0]["pilot_n"] == 8

    two = _json(size, color, "--difference", "0.1")["results"]
    a, b = _outcomes(size), _outcomes(color)
    for row, config in zip(two, ("P3", "P3_box"), strict=True):
        differ = sum(a[config][k] != b[config][k] for k in a[config]) / len(a[config])
        assert row["discordance"] == pytest.approx(differ) and differ > 0
        assert row["discordance_from"] == "pilot runs"
        assert row["n"] == math.ceil(power.n_paired(0.1, differ))

    result = invoke("power", size, color, "--n", "100", "--discordance", "0.2")
    assert result.exit_code == 2 and "they measure it" in result.stderr
    result = invoke("power", size, "--n", "100", "--baseline", "0.5")
    assert result.exit_code == 2 and "its accuracy is the baseline" in result.stderr
    result = invoke("power", size, size, size, "--n", "100")
    assert result.exit_code == 2 and "not 3" in result.stderr
    result = invoke("power", size, "--metric", "O3 exact match")
    assert result.exit_code == 2 and "'P3 exact match'" in result.stderr

    # A run of the user's own benchmark, whose definition visioneval does not import from a
    # run directory: no proportion it can read, in one line saying why.
    info = json.loads((color / "run.json").read_text())
    info["benchmark"] = "my_bench:DEFINITION"
    (color / "run.json").write_text(json.dumps(info))
    result = invoke("power", color, "--n", "100")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no main number that is a share of samples" in lines[0]


def test_vqa_pilot_runs_read_the_overall_accuracy(serve, tmp_path):
    """A benchmark without paired rows of its own (`vqa`): its overall accuracy is the
    baseline, each record's scorer block its 0/1 outcome."""
    from visioneval.loopback.server import answer_hash

    questions = Path(__file__).parent.parent / "examples" / "vqa" / "questions.jsonl"
    server = serve(answer=answer_hash)
    hashed, chance = tmp_path / "hash", tmp_path / "random"
    for out, model in ((hashed, ["--backend", "openai", "--base-url",
                                 server.base_url + "/v1", "--model", "m"]),
                       (chance, ["--backend", "builtin", "--model", "random"])):
        result = invoke("vqa", "--data", questions, "--scorer", "choice", *model, "--out", out,
                        "--no-progress", "--no-report")
        assert result.exit_code == 0, result.output
    one = _json(hashed, "--n", "500")["results"]
    overall = load(hashed)["overall"]
    assert [(r["metric"], r["pilot_n"]) for r in one] == [("accuracy", overall["n"])]
    assert one[0]["baseline"] == pytest.approx(overall["accuracy"])
    two = _json(hashed, chance, "--n", "500")["results"][0]
    a = {r["id"]: r["scores"]["choice"]["correct"] for r in journal(hashed)}
    b = {r["id"]: r["scores"]["choice"]["correct"] for r in journal(chance)}
    assert two["discordance"] == pytest.approx(sum(a[k] != b[k] for k in a) / len(a))
    assert two["discordance_from"] == "pilot runs" and 0 < two["discordance"] < 1


def test_dry_run_prints_the_detectable_difference_at_its_n(synth_data):
    result = invoke("salbench", "--backend", "builtin", "--model", "popout", "--data-dir",
                    synth_data, "--configs", "P3,P3_box", "--dry-run")
    assert result.exit_code == 0, result.output
    requests = int(re.search(r"requests\s+(\d+)", result.stdout).group(1))
    d = power.detectable_paired(requests, 0.5)
    assert requests == 16 and d is not None
    assert (f"detectable difference at this n: ±{100 * d:.1f} points (paired, discordance "
            "assumed 0.5, alpha 0.05, power 0.8") in flat(result.stdout)


@pytest.mark.slow
def test_dry_run_of_a_benchmark_without_a_proportion_headline_has_no_such_line(tmp_path):
    data = tmp_path / "stimuli"
    made = invoke("data", "synth-psychophysics", "--out", data, "--n", "2")
    assert made.exit_code == 0, made.output
    result = invoke("psychophysics", "--backend", "builtin", "--model", "popout", "--data",
                    data, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "requests" in result.stdout and "detectable difference" not in result.stdout
