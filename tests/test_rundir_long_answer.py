"""A very long answer is stored once per sample (in response.text): what the parsers keep is
what they extracted, capped, and the metrics are those of the full parse. The report embeds a
capped answer and says how much it left out."""

from __future__ import annotations

import json
import random
import re

import pytest
from cli_helpers import invoke, journal, load, salbench_args

from visioneval.benchmarks.salbench.benchmark import SalBench, SalBenchOptions
from visioneval.benchmarks.salbench.parse import lenient_labels, strict_tokens, target_labels
from visioneval.benchmarks.salbench.spec import CONFIGS
from visioneval.core.records import Record, Response, Sample
from visioneval.metrics.labelsets import summarize_parser

LONG = 3_000_000  # characters: big enough that a second copy shows


def _line_sizes(out):
    return [len(line) for line in (out / "samples.jsonl").read_bytes().splitlines()]


@pytest.mark.slow
def test_salbench_long_answer_is_stored_once(serve, synth_data, tmp_path):
    text = "color " + "blah " * (LONG // 5)
    server = serve(answer=lambda prompt: text)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3", "--no-cache",
                                   "--num-samples", "2", "--no-report"))
    assert result.exit_code == 0, result.output
    assert all(len(text) < size < len(text) + 20_000 for size in _line_sizes(out))
    record = journal(out)[0]
    assert record["response"]["text"] == text  # the raw answer, whole
    assert len(json.dumps(record["parsed"])) < 1000
    assert record["parsed"]["lenient"] == ["color"]


def test_illusionbench_long_answer_is_stored_once(serve, illusion_data, tmp_path):
    text = "Answer: " + "x" * LONG
    server = serve(answer=lambda prompt: text)
    out = tmp_path / "run"
    result = invoke("illusionbench", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data-dir", illusion_data,
                    "--subsets", "ICON", "--tasks", "shape", "--num-samples", "1", "--out", out,
                    "--no-progress", "--no-cache", "--no-report")
    assert result.exit_code == 0, result.output
    assert all(len(text) < size < len(text) + 20_000 for size in _line_sizes(out))
    strict = next(r for r in journal(out) if "lmms-strict" in r["parsed"])
    assert len(strict["parsed"]["lmms-strict"]) < 200
    assert f"[{LONG} chars, sha256 " in strict["parsed"]["lmms-strict"]


def _random_answer(rng: random.Random, classes) -> str:
    words = [*classes, "Color.", "the", "odd one", "[size]", "x" * 300, "y" * 300, "Size"]
    pieces = [rng.choice(words) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.2:  # a runaway answer: many distinct pieces
        pieces += [f"item {i}" for i in range(rng.randint(30, 80))]
    return rng.choice([", ", " and ", ","]).join(pieces)


def test_salbench_metrics_equal_those_of_the_full_parse(synth_data):
    bench = SalBench(SalBenchOptions(configs=["P3"]), synth_data)
    classes = CONFIGS["P3"].classes
    rng = random.Random(11)
    records, full = [], {"strict": [], "lenient": []}
    for i in range(400):
        gold = ", ".join(rng.sample(list(classes), rng.randint(1, 2)))
        text = _random_answer(rng, classes)
        sample = Sample(f"P3/{i}", "P3", (), gold, {})
        parsed, scores = bench.score(sample, text)
        records.append(Record(id=sample.id, group="P3", target=gold,
                              response=Response(text=text), parsed=parsed, scores=scores))
        full["strict"].append((strict_tokens(text), target_labels(gold)))
        full["lenient"].append((lenient_labels(text, classes), target_labels(gold)))
    records.append(Record(id="P3/err", group="P3", target="color",
                          response=Response(error="gave up")))
    got = bench.summarize(records)["P3"]
    for parser in ("strict", "lenient"):
        # The intervals (only a run's records carry the ids they need) aside.
        point = {k: v for k, v in got[parser].items() if not k.endswith(("_se", "_ci95"))}
        assert point == summarize_parser(full[parser], classes, 1)
    assert any(len(r.parsed["strict"]) < len(strict_tokens(r.response.text or ""))
               for r in records if r.ok)  # some answers were elided in the record


def test_report_caps_a_long_answer_and_says_so(serve, synth_data, tmp_path):
    text = "size " + "z" * 50_000
    server = serve(answer=lambda prompt: text)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3", "--no-cache",
                                   "--num-samples", "2"))
    assert result.exit_code == 0, result.output
    page = (out / "report.html").read_text()
    assert len(page) < 60_000 + 2 * 10_000
    match = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page,
                      re.DOTALL)
    rows = json.loads(match.group(1).replace("<\\/", "</"))["rows"]
    left_out = len(text) - 4000
    assert rows[0]["r"] == text[:4000] + (f"... ({left_out} more characters; full text in "
                                          "samples.jsonl)")
    assert load(out)["P3"]["strict"]["n"] == 2
