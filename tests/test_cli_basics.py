"""What a new user meets first: help, version, other tools' spellings of options."""

from __future__ import annotations

import re

import pytest
from cli_helpers import invoke, load
from typer.testing import CliRunner

from visioneval import __version__
from visioneval.cli import app
from visioneval.loopback.server import answer_popout

COMMANDS = [[], ["salbench"], ["illusionbench"], ["evaluate"], ["layout"], ["compare"],
            ["loopback"], ["data"], ["data", "synth-salbench"], ["run"], ["demo"]]


def _help(args: list[str], width: int = 80) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], terminal_width=width,
                                env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a) or "root")
def test_help_fits_80_columns_without_cut_words_or_bool_labels(args):
    text = _help(args)
    assert "<bool>" not in text
    # "NAME..." marks an argument that repeats (usage line, argument rows); elsewhere "..."
    # or an ellipsis would be a cut sentence.
    prose = re.sub(r"[\w}\]]\.\.\.(?= |$)", "", text, flags=re.M)
    assert "..." not in prose.replace("wrapped: click cuts", "") and "\u2026" not in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"visioneval {__version__}"


def test_num_shots_is_an_alias_of_shots(serve, synth_data, tmp_path):
    server = serve(answer=answer_popout)
    out = tmp_path / "run"
    result = invoke("salbench", "--backend", "openai", "--base-url", server.base_url + "/v1",
                    "--model", "m", "--data-dir", synth_data, "--configs", "P3",
                    "--num-shots", "3", "--samples", "2", "--out", out, "--no-progress",
                    "--no-report")
    assert result.exit_code == 0, result.output
    options = load(out, "run.json")["options"]
    assert (options["shots"], options["num_samples"]) == (3, 2)


def test_illusionbench_takes_samples(illusion_data, tmp_path):
    out = tmp_path / "run"
    result = invoke("illusionbench", "--backend", "builtin", "--model", "random",
                    "--data-dir", illusion_data, "--subsets", "ICON", "--samples", "3",
                    "--out", out, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    assert load(out, "run.json")["options"]["num_samples"] == 3


def test_quick_test_without_a_model_uses_ollama_llava(serve, synth_data, tmp_path):
    """A quick test that names no backend or model: Ollama's llava:7b, said in a line."""
    server = serve(models=("llava:7b",), answer=answer_popout)
    out = tmp_path / "run"
    result = invoke("salbench", "--samples", "5", "--tasks", "D", "--splits", "synthetic",
                    "-v", "--base-url", server.base_url, "--data-dir", synth_data,
                    "--out", out, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    assert "using the default ollama llava:7b" in result.stderr
    backend = load(out, "run.json")["backend"]
    assert (backend["kind"], backend["model"]) == ("ollama", "llava:7b")
    assert load(out)["P3"]["strict"]["n"] == 5


def test_other_backends_need_a_model(synth_data, tmp_path):
    result = invoke("salbench", "--backend", "openai", "--tasks", "D",
                    "--data-dir", synth_data, "--out", tmp_path / "run")
    assert result.exit_code == 2
    assert re.search(r"--model", result.stderr) and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_console_names_the_lenient_columns(synth_data, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # rich's width: a plain 80-column terminal
    result = invoke("salbench", "--backend", "builtin", "--model", "popout", "--configs",
                    "P3,P3_box,P3_box_img",
                    "--data-dir", synth_data, "--out", tmp_path / "run", "--no-progress",
                    "--no-report")
    assert result.exit_code == 0, result.output
    assert "lenient" in result.stdout and "len " not in result.stdout
    # Every header whole at 80 columns (rich cuts a header that does not fit with "…").
    assert "unparsed" in result.stdout and "…" not in result.stdout


def test_generated_command_lists_every_option_of_the_benchmarks_model():
    """A benchmark's command comes from its definition: every field of its options model is
    a flag, with the model's help and the extra spellings it declares."""
    from visioneval.benchmarks import registry

    for name in registry.names():
        model = registry.definition(name).command_options
        if model is None:
            continue
        text = _help([name], width=200)
        for field, info in model.model_fields.items():
            assert "--" + field.replace("_", "-") in text, (name, field)
            for extra in (info.json_schema_extra or {}).get("flags", []):
                assert extra in text
    assert "--prompt [paper|lmms-eval|both]" in _help(["salbench"], 200) or \
        "<paper|lmms-eval|both>" in _help(["salbench"], 200)


def test_generated_command_checks_values_in_one_line(synth_data, tmp_path):
    result = invoke("salbench", "--backend", "builtin", "--model", "popout", "--data-dir",
                    synth_data, "--shots", "4", "--out", tmp_path / "r")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "--shots: Input should be 0, 3 or 5" in \
        result.stderr
