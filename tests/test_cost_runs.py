"""Cost over real HTTP: runs of the real command against the loopback server, which reports
token usage (and, when scripted, OpenRouter's `usage.cost`). A priced run costs exactly what
its token counts imply; the provider's own cost wins; `--dry-run` sends and writes nothing;
`--max-cost` stops with exit code 3 and `--resume` finishes; an unknown price is absent with
its reason."""

from __future__ import annotations

import math
import re

import pytest
from cli_helpers import flat, invoke, journal, load, salbench_args

from visioneval.core.store import RunStore
from visioneval.cost.images import image_rule
from visioneval.cost.prices import GIVEN
from visioneval.cost.total import NOTHING_SENT

P3 = ("--configs", "P3,P3_box")  # 8 samples each in the session's synthetic set


def counts(run) -> dict:
    return load(run, "run.json")["counts"]


def test_a_priced_run_costs_exactly_what_its_token_counts_imply(serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, *P3, "--price-in", "1",
                                   "--price-out", "2"))
    assert result.exit_code == 0, result.output
    got = counts(out)
    assert got["prompt_tokens"] > 0 and got["completion_tokens"] > 0
    cost = got["cost"]
    assert cost["usd"] == (got["prompt_tokens"] * 1 + got["completion_tokens"] * 2) / 1e6
    assert cost["source"] == GIVEN
    # Per config: the tokens of its own records (the loopback reports them per reply).
    for config in ("P3", "P3_box"):
        records = [r["response"] for r in journal(out) if r["group"] == config]
        tokens = sum(r["prompt_tokens"] + 2 * r["completion_tokens"] for r in records)
        assert cost["groups"][config] == tokens / 1e6
    assert load(out, "run.json")["pricing"] == {"price_in": 1.0, "price_out": 2.0}
    line = next(x for x in result.stdout.splitlines() if x.startswith("cost: "))
    assert GIVEN in line and "per group: P3 $" in line
    # The report's card shows it too.
    assert invoke("report", out).exit_code == 0
    assert "Cost $" in (out / "report.html").read_text()


def test_the_providers_reported_cost_wins_and_is_summed(serve, synth_data, tmp_path):
    server = serve(cost_usd=0.00125)
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, *P3, "--price-in", "1",
                                   "--price-out", "2"))
    assert result.exit_code == 0, result.output
    got = counts(out)
    assert got["requests_sent"] == server.stats.answered == 16
    assert got["cost"]["usd"] == math.fsum([0.00125] * 16)
    assert got["cost"]["source"] == "provider"
    assert all(r["response"]["cost_usd"] == 0.00125 for r in journal(out))


def test_an_unknown_price_is_absent_with_its_reason(serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3"))
    assert result.exit_code == 0
    cost = counts(out)["cost"]
    assert cost["usd"] is None and cost["unavailable"] == \
        "no price for m at 127.0.0.1 (your own server?)"
    assert cost["groups"] == {"P3": None}
    assert "cost: unknown (no price for m at 127.0.0.1 (your own server?))\n" in result.stdout
    # How to price it is said once, on a line of its own.
    assert result.stdout.count("--price-in") == 1
    assert "  to price it: --price-in USD --price-out USD per million tokens (0 and 0: your " \
        "own server)" in result.stdout


def test_cached_answers_cost_nothing_this_session(serve, synth_data, tmp_path):
    server = serve()
    first = invoke(*salbench_args(server, synth_data, tmp_path / "a", "--configs", "P3",
                                  "--price-in", "1", "--price-out", "2",
                                  "--cache-dir", tmp_path / "cache"))
    assert first.exit_code == 0 and counts(tmp_path / "a")["cost"]["usd"] > 0
    again = invoke(*salbench_args(server, synth_data, tmp_path / "b", "--configs", "P3",
                                  "--price-in", "1", "--price-out", "2",
                                  "--cache-dir", tmp_path / "cache"))
    assert again.exit_code == 0 and server.stats.answered == 8
    assert counts(tmp_path / "b")["cost"] == {"usd": 0.0, "source": NOTHING_SENT,
                                              "groups": {}}
    assert "8 answers from the cache cost nothing this session" in flat(again.stdout)


def test_a_dry_run_sends_nothing_writes_nothing_and_counts_what_a_run_would(
        serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    args = salbench_args(server, synth_data, out, *P3, "--shots", "3", "--dry-run",
                         "--price-in", "1", "--price-out", "2")
    args[args.index("m")] = "gpt-4o"  # a model whose image rule is published
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert server.stats.requests == 0 and not out.exists()
    text = result.stdout
    assert "nothing sent, nothing written" in text
    assert re.search(r"requests\s+16\n", text)
    assert "at most 2,048 (16 x max tokens 128)" in text
    # Every request carries 3 example images and the query, all of the synthetic set's
    # size, at OpenAI's tile rule for gpt-4o.
    from visioneval.core import registry

    bench = registry.build("salbench", {"data_dir": str(synth_data), "configs":
                                        ["P3", "P3_box"], "shots": 3})
    sizes = [(p.width, p.height) for s in bench.samples() for m in s.messages
             for p in m.parts if not isinstance(p, str)]
    assert len(sizes) == 16 * 4
    tiles = sum(image_rule("gpt-4o").tokens(w, h) for w, h in sizes)
    assert f"images {tiles:,} by OpenAI's tile rule for gpt-4o" in flat(text)
    total = int(re.search(r"input tokens\s+~([\d,]+)", text).group(1).replace(",", ""))
    low, high = total / 1e6, (total + 2 * 2048) / 1e6
    cost_line = next(x for x in text.splitlines() if x.strip().startswith("cost"))
    assert f"${low:.{2 - math.floor(math.log10(low))}f} to " in cost_line
    assert f"${high:.{2 - math.floor(math.log10(high))}f}" in cost_line


def test_a_dry_run_of_an_unpriced_model_says_what_it_cannot_know(serve, synth_data,
                                                                 tmp_path):
    server = serve()
    result = invoke(*salbench_args(server, synth_data, tmp_path / "run", "--configs", "P3",
                                   "--dry-run"))
    assert result.exit_code == 0 and server.stats.requests == 0
    assert "8 images: tokens unknown" in result.stdout
    assert "cost            unknown: no price for m at 127.0.0.1" in result.stdout
    assert result.stdout.count("--price-in") == 1 and "  to price it     --price-in USD " \
        "--price-out USD" in result.stdout


def test_max_cost_stops_cleanly_with_exit_3_and_resume_finishes(serve, synth_data,
                                                                tmp_path):
    server = serve()
    out = tmp_path / "run"
    # About 170 tokens a request at $1000 per million: each answer costs about $0.17.
    priced = ("--price-in", "1000", "--price-out", "1000")
    result = invoke(*salbench_args(server, synth_data, out, *P3, *priced, "--max-cost",
                                   "0.5", "--concurrency", "1", "--no-cache"))
    assert result.exit_code == 3, result.output
    assert "--max-cost $0.500 reached" in result.stderr
    assert f"visioneval salbench --resume {out}" in result.stderr
    info = load(out, "run.json")
    assert info["status"] == "stopped"
    recorded = len(journal(out))
    # No request after the limit: each one went out only while less than $0.5 was spent.
    assert recorded == server.stats.requests == info["counts"]["requests_sent"] < 16
    session = info["sessions"][-1]
    assert session["spent_usd"] >= 0.5 and session["max_cost_usd"] == 0.5
    spent_before = session["spent_usd"] - (journal(out)[-1]["response"]["prompt_tokens"]
                                           + journal(out)[-1]["response"]
                                           ["completion_tokens"]) * 1000 / 1e6
    assert spent_before < 0.5
    assert info["counts"]["cost"]["usd"] == session["spent_usd"]
    # The limit was this session's: a resume without it finishes, and the sessions add up.
    again = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                   server.base_url + "/v1")
    assert again.exit_code == 0, again.output
    done = load(out, "run.json")
    assert done["status"] == "finished" and len(RunStore.open(out).latest_records()) == 16
    assert done["counts"]["cost"]["usd"] == (done["counts"]["prompt_tokens"]
                                             + done["counts"]["completion_tokens"]) / 1000
    assert server.stats.requests == 16


def test_max_cost_without_a_price_refuses_to_start(serve, synth_data, tmp_path):
    server = serve()
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   "--max-cost", "1"))
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: --max-cost needs a price")
    assert len(result.stderr.strip().splitlines()) == 1
    assert server.stats.requests == 0 and not out.exists()


def test_one_price_alone_is_refused(serve, synth_data, tmp_path):
    result = invoke(*salbench_args(serve(), synth_data, tmp_path / "run", "--configs", "P3",
                                   "--price-in", "1"))
    assert result.exit_code == 2 and "give both --price-in and --price-out" in result.stderr


def test_a_judges_requests_are_counted_and_priced_apart(serve, tmp_path):
    """vqa's judge scorer: the model priced by --price-in/--price-out, the judge (another
    server) by the cost it reports; both per group."""
    from test_vqa_judge import strict_judge
    from test_vqa_run import EXAMPLE

    model = serve(answer=lambda prompt: "B")
    judge = serve(answer=strict_judge([]), cost_usd=0.01)
    out = tmp_path / "run"
    result = invoke("vqa", "--data", EXAMPLE / "questions.jsonl", "--scorer", "judge",
                    "--group-col", "category", "--judge-backend", "openai",
                    "--judge-model", "m", "--judge-base-url", judge.base_url + "/v1",
                    "--backend", "openai", "--model", "m", "--base-url",
                    model.base_url + "/v1", "--out", out, "--no-progress", "--price-in", "1",
                    "--price-out", "2")
    assert result.exit_code == 0, result.output
    info = load(out, "run.json")
    usage = info["sessions"][-1]["usage"]
    assert set(usage) == {"model", "judge"}
    judged = sum(c["reported"] for c in usage["judge"].values())
    model_usd = sum(c["prompt_tokens"] + 2 * c["completion_tokens"]
                    for c in usage["model"].values()) / 1e6
    assert judged == 12 and model_usd > 0
    cost = info["counts"]["cost"]
    assert cost["usd"] == pytest.approx(math.fsum([0.01] * 12) + model_usd, rel=1e-12)
    assert set(cost["source"].split(" + ")) == {GIVEN, "provider"}
    assert sum(cost["groups"].values()) == pytest.approx(cost["usd"], rel=1e-12)


def test_merged_shards_add_their_costs_up(serve, synth_data, tmp_path):
    server = serve()
    parts = [tmp_path / f"part{k}" for k in (1, 2)]
    for k, part in enumerate(parts, 1):
        result = invoke(*salbench_args(server, synth_data, part, *P3, "--price-in", "1",
                                       "--price-out", "2", "--shard", f"{k}/2"))
        assert result.exit_code == 0, result.output
    merged = tmp_path / "merged"
    assert invoke("merge", *parts, "--out", merged, "--no-report").exit_code == 0
    got = counts(merged)
    assert got["records"] == 16
    assert got["cost"]["usd"] == (got["prompt_tokens"] + 2 * got["completion_tokens"]) / 1e6
    assert got["cost"]["usd"] == pytest.approx(sum(counts(p)["cost"]["usd"] for p in parts),
                                               rel=1e-12)


def test_compare_has_a_cost_column(serve, synth_data, illusion_data, tmp_path):
    """The results table has a Cost column: each run's cost, "unknown" with its
    reason where no price is known, in every output of `visioneval compare`."""
    from visioneval.cost.money import usd

    server = serve()
    priced, cheap, unpriced = tmp_path / "priced", tmp_path / "cheap", tmp_path / "unpriced"
    for out, price in ((priced, ("--price-in", "1", "--price-out", "2")),
                       (cheap, ("--price-in", "0.5", "--price-out", "0.5")), (unpriced, ())):
        result = invoke(*salbench_args(server, synth_data, out, *P3, "--no-report", "--no-cache",
                                       *price))
        assert result.exit_code == 0, result.output
    table = tmp_path / "table"
    result = invoke("compare", priced, cheap, unpriced, "--out", table)
    assert result.exit_code == 0, result.output
    import csv

    with (table / "comparison.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["Cost"] for r in rows] == [usd(counts(run)["cost"]["usd"])
                                         for run in (priced, cheap, unpriced)]
    assert rows[0]["Cost"].startswith("$") and rows[2]["Cost"] == "unknown"
    # One model, one shot count: each row names its run.
    assert [r["Model"] for r in rows] == ["m (priced)", "m (cheap)", "m (unpriced)"]
    assert counts(priced)["cost"]["usd"] > counts(cheap)["cost"]["usd"] > 0
    why = counts(unpriced)["cost"]["unavailable"]
    markdown = (table / "comparison.md").read_text()
    assert "| Cost |" in markdown and f"Cost unknown for m (unpriced): {why}" in markdown
    page = (table / "comparison.html").read_text()
    assert re.search(r"<th[^>]*>Cost</th>", page) and "Cost unknown for m (unpriced)" in page
    assert "Cost unknown for m (unpriced)" in result.stdout

    # IllusionBench: a run's protocols are rows of one run, each showing the run's cost.
    ib = tmp_path / "ib"
    result = invoke("illusionbench", "--backend", "openai", "--base-url",
                    server.base_url + "/v1", "--model", "m", "--data-dir", illusion_data,
                    "--out", ib, "--no-progress", "--no-report", "--price-in", "1",
                    "--price-out", "1", "--num-samples", "2")
    assert result.exit_code == 0, result.output
    result = invoke("compare", ib, "--out", tmp_path / "ibtable")
    assert result.exit_code == 0, result.output
    with (tmp_path / "ibtable" / "comparison.csv").open() as handle:
        costs = {r["Cost"] for r in csv.DictReader(handle)}
    assert costs == {usd(counts(ib)["cost"]["usd"])}
