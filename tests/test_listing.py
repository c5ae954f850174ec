"""`visioneval list` names every benchmark, builtin model (with the benchmarks it fits),
request variant and backend from the code's own definitions; the builtin models are read
without building a benchmark (building reads its data); `run --help` names the benchmarks
it runs."""

from __future__ import annotations

import re
from typing import get_args

import pytest
from cli_helpers import invoke

from visioneval.backends.builtin import MODELS
from visioneval.backends.registry import CHOICES, BackendKind
from visioneval.commands.listing import Part, lines, listing
from visioneval.core import registry
from visioneval.io.parquet import DataError
from visioneval.variants.kinds import BUILTIN, usage


def _part(parts: list[Part], title: str) -> dict[str, str]:
    [found] = [p for p in parts if p.title.startswith(title)]
    return {e.name: e.text for e in found.entries}


def test_the_list_names_everything_from_the_definitions():
    parts = listing()
    benchmarks = _part(parts, "Benchmarks")
    assert list(benchmarks) == registry.names()
    for name, summary in benchmarks.items():
        assert summary == registry.definition(name).summary
    models = _part(parts, "Builtin models")
    assert list(models) == list(MODELS)
    assert models["popout"].endswith("fits salbench, psychophysics")
    assert models["majority"].endswith("fits salbench")
    fits = [name for name in registry.names()
            if "random" in registry.definition(name).builtin_models()]
    assert {"salbench", "illusionbench", "vqa"} <= set(fits)
    assert all(re.search(rf"\b{name}\b", models["random"]) for name in fits)
    assert "(random answers with --scorer choice" in models["random"]
    variants = _part(parts, "Request variants")
    assert list(variants)[:len(BUILTIN)] == ["blind", "blank", "grayscale", "jpeg:Q",
                                             "scale:F", "max-side:N"]
    assert usage().startswith(", ".join(list(variants)[:len(BUILTIN)]))
    assert variants["lmms-eval"].startswith("salbench only, asked by --prompt both: ")
    backends = _part(parts, "Backends")
    assert list(backends) == list(CHOICES)
    assert set(CHOICES) == set(get_args(BackendKind)) - {"none"}  # every one a user names
    assert "default https://api.openai.com/v1, key in OPENAI_API_KEY" in backends["openai"]
    assert "default http://localhost:11434" in backends["ollama"]


@pytest.mark.parametrize("width", [100, 72])
def test_every_line_fits(width):
    shown = lines(listing(), width)
    assert max(map(len, shown)) <= width
    assert all(line == line.rstrip() for line in shown)


def test_the_command_prints_it(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    result = invoke("list")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == lines(listing(), 100)


def test_builtin_models_are_read_without_building_the_benchmark(synth_data, illusion_data,
                                                                tmp_path):
    """Building reads the data (a folder that is not there is an error); the list asks the
    class, and says the same as the benchmark built on its data."""
    with pytest.raises(DataError, match="nowhere: no such folder"):
        registry.build("salbench", {"data_dir": str(tmp_path / "nowhere")})
    for name, options in (("salbench", {"data_dir": str(synth_data), "configs": ["P3"]}),
                          ("illusionbench", {"data_dir": str(illusion_data)})):
        definition = registry.definition(name)
        assert definition.builtin_models() == registry.build(name, options).builtin_models
    vqa = registry.definition("vqa")
    options_model = vqa.options_model
    assert options_model is not None
    cls = vqa.benchmark_class()
    assert cls is not None and vqa.builtin_models() == ("random",)
    assert cls.builtin_models_for(options_model(data="x.jsonl", scorer="exact")) == ()
    assert cls.builtin_models_for(options_model(data="x.jsonl", scorer="choice")) == \
        ("random",)


def test_run_help_names_the_benchmarks_it_runs():
    result = invoke("run", "--help")
    text = " ".join(result.stdout.split())
    runnable = [n for n in registry.names() if registry.definition(n).command_options]
    assert runnable and f"a registered one ({', '.join(runnable)}), or your own definition" \
        in text
    assert "BENCHMARK A registered benchmark, or your own definition (module:attribute)." \
        in text
    assert set(registry.names()) - set(runnable) == {"evaluate", "layout"}  # own commands
