"""A benchmark whose solver asks its own model and two panel models (`Benchmark.panel`,
several judges grading one answer as `visioneval evaluate` asks them): each request goes to
the model it names, is cached under that model's identity, counted and priced under its own
role (model, panel1, panel2), and a resume refuses a panel server that now serves another
checkpoint. Three loopback servers answer "a", "b" and "c", so every answer says who gave it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, journal, load
from pydantic import BaseModel, Field

from visioneval import api
from visioneval.backends.registry import BackendSpec, make_backend
from visioneval.core.benchmark import Benchmark, BenchmarkDefinition
from visioneval.core.records import GenerationSettings, Request, Sample, SkippedRow, user
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.core.solver import Ask, Solved, Solver
from visioneval.core.store import RunStore
from visioneval.engine.options import EngineOptions
from visioneval.engine.retry import RetryPolicy
from visioneval.engine.runner import Engine, RunStats
from visioneval.loopback.server import answer_fixed

QUESTIONS = 3
DEFINITION = f"{Path(__file__).resolve()}:PanelDefinition"


class Options(BaseModel):
    panel_urls: list[str] = Field(description="The panel models' servers, in order.")


class AskThree(Benchmark[Options]):
    """Each question goes to the run's model, then to panel model 1 and 2; the record keeps
    what each said, and scores whether all three agree."""

    name = "ask-three"

    @property
    def panel(self) -> tuple[BackendSpec, ...]:
        return tuple(BackendSpec(kind="openai", model="m", base_url=url)
                     for url in self.options.panel_urls)

    @property
    def solve(self) -> Solver:
        return self._solve

    def samples(self) -> Iterator[Sample | SkippedRow]:
        for i in range(QUESTIONS):
            yield Sample(id=f"q{i}", group="questions", target="a",
                         messages=(user(f"Question {i}: which letter?"),))

    async def _solve(self, sample: Sample, ask: Ask) -> Solved:
        request = Request(sample.messages, ask.settings)
        own = await ask(request)
        first, second = await ask(request, panel=1), await ask(request, panel=2)
        said = {"model": own.text, "panel1": first.text, "panel2": second.text}
        agree = float(len(set(said.values())) == 1)
        return Solved(own, parsed=said, scores={"panel": {"correct": agree}})

    def score(self, sample: Sample, text: str) -> tuple[dict, dict]:
        return {"model": text}, {"panel": {"correct": float(text == sample.target)}}


class PanelDefinition(BenchmarkDefinition):
    summary = "One question to the model and to two panel models."
    benchmark = AskThree


def _servers(serve):
    return [serve(answer=answer_fixed(letter)) for letter in "abc"]


def _run(model, panel, out: Path, **engine):
    """A run of `AskThree` through the Python API, with the response cache beside `out`
    (runs in one folder share it)."""
    engine.setdefault("cache_path", out.parent / "responses.sqlite3")
    return api.run(PanelDefinition, model="m", backend="openai",
                   base_url=model.base_url + "/v1", out=out, report=False,
                   options={"panel_urls": [p.base_url + "/v1" for p in panel]},
                   engine=EngineOptions(**engine))


def _said(run: Path) -> list[dict]:
    return [r["parsed"] for r in sorted(journal(run), key=lambda r: r["id"])]


def test_each_request_goes_to_the_model_it_names_and_is_counted_under_its_role(serve,
                                                                              tmp_path):
    a, b, c = _servers(serve)
    result = _run(a, [b, c], tmp_path / "run")
    assert result.status == "finished" and result.n_errors == 0
    assert _said(result.directory) == [{"model": "a", "panel1": "b", "panel2": "c"}] * 3
    assert [s.stats.answered for s in (a, b, c)] == [QUESTIONS] * 3
    session = load(result.directory, "run.json")["sessions"][-1]
    served = [json.dumps(identity) for identity in session["panel_identities"]]
    assert "fixed:b" in served[0] and "fixed:c" in served[1]
    assert "fixed:a" in json.dumps(session["model_identity"])
    assert session["judge_requests"] == 0 and session["sent"] == 3 * QUESTIONS
    usage = session["usage"]
    assert set(usage) == {"model", "panel1", "panel2"}
    assert all(usage[role]["questions"]["requests"] == QUESTIONS for role in usage)


def test_the_cache_keeps_each_models_answers_apart(serve, tmp_path):
    a, b, c = _servers(serve)
    _run(a, [b, c], tmp_path / "first")
    sent = [s.stats.requests for s in (a, b, c)]

    again = _run(a, [b, c], tmp_path / "again").directory
    assert [s.stats.requests for s in (a, b, c)] == sent  # nothing sent: all cached
    session = load(again, "run.json")["sessions"][-1]
    assert session["cache_hits"] == 3 * QUESTIONS and session["sent"] == 0
    assert _said(again) == [{"model": "a", "panel1": "b", "panel2": "c"}] * 3

    # The panel in the other order: each position gets its own model's cached answers.
    swapped = _run(a, [c, b], tmp_path / "swapped").directory
    assert [s.stats.requests for s in (a, b, c)] == sent
    assert _said(swapped) == [{"model": "a", "panel1": "c", "panel2": "b"}] * 3

    # A server answering otherwise as panel model 2: only it is asked.
    d = serve(answer=answer_fixed("d"))
    changed = _run(a, [b, d], tmp_path / "changed").directory
    assert [s.stats.requests for s in (a, b, c)] == sent and d.stats.answered == QUESTIONS
    assert _said(changed) == [{"model": "a", "panel1": "b", "panel2": "d"}] * 3
    usage = load(changed, "run.json")["sessions"][-1]["usage"]
    assert set(usage) == {"panel2"} and usage["panel2"]["questions"]["requests"] == QUESTIONS


def test_a_resume_refuses_a_panel_server_that_now_serves_another_checkpoint(serve, tmp_path):
    a, b, c = _servers(serve)
    out = tmp_path / "run"
    _run(a, [b, c], out)
    sent = [s.stats.requests for s in (a, b, c)]
    c.script.checkpoint = "loopback/retrained"
    result = invoke("run", DEFINITION, "--resume", out, "--base-url", a.base_url + "/v1",
                    "--no-progress")
    assert result.exit_code != 0
    line = flat(result.output)
    assert "panel model 2" in line and "loopback/retrained" in line, result.output
    assert "mix two models' answers" in line
    assert [s.stats.requests for s in (a, b, c)] == sent


def test_an_unpriced_panel_model_makes_the_cost_absent_with_the_reason(serve, tmp_path):
    a, b, c = _servers(serve)
    out = _run(a, [b, c], tmp_path / "run", price_in=1.0, price_out=2.0).directory
    cost = load(out, "run.json")["counts"]["cost"]
    assert cost["usd"] is None
    assert "no price for m at 127.0.0.1" in cost["unavailable"]
    assert "--price-in" not in cost["unavailable"]  # the run's own prices are the model's

    # The same model at the same place as the run's is priced as it is: the cost is known.
    same = _run(a, [a, a], tmp_path / "same", price_in=1.0, price_out=2.0,
                cache_path=None).directory
    cost = load(same, "run.json")["counts"]["cost"]
    assert cost["usd"] is not None and cost["usd"] > 0
    assert cost["source"] == "--price-in/--price-out"


def test_max_cost_refuses_an_unpriced_panel_model_before_sending(serve, tmp_path):
    a, b, c = _servers(serve)
    with pytest.raises(ValueError, match="--max-cost needs a price, and there is none: "
                                         "no price for m at 127.0.0.1"):
        _run(a, [b, c], tmp_path / "run", price_in=1.0, price_out=2.0, max_cost=1.0)
    assert [s.stats.requests for s in (a, b, c)] == [0, 0, 0]


def test_asking_the_judge_and_a_panel_model_at_once_is_a_bug_said_so(tmp_path):
    store = RunStore.create(tmp_path / "run", RunInfo(
        benchmark="ask-three", backend=BackendInfo(kind="builtin", model="random")))
    backend = make_backend(BackendSpec(kind="builtin", model="random"))
    engine = Engine(backend, store, GenerationSettings(), RetryPolicy(), judge=backend,
                    panel=(backend,))
    request = Request((user("Which letter?"),), GenerationSettings())

    async def ask(**where):
        return await engine.ask(request, RunStats(), **where)

    with pytest.raises(ValueError, match="the judge and panel model 1 at once"):
        asyncio.run(ask(judge=True, panel=1))
    with pytest.raises(RuntimeError, match="panel model 2, but the run has 1"):
        asyncio.run(ask(panel=2))
    assert asyncio.run(ask(panel=1)).ok
    store.close()
