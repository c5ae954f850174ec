"""What a new user meets first: help, version, other tools' spellings of options."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import invoke, load
from typer.testing import CliRunner

from visioneval import __version__
from visioneval.cli import app
from visioneval.loopback.server import answer_popout

COMMANDS = [[], ["salbench"], ["illusionbench"], ["vqa"], ["run"], ["evaluate"], ["layout"],
            ["report"], ["view"], ["compare"], ["merge"], ["rescore"], ["reference"],
            ["cache"], ["cache", "list"], ["cache", "show"], ["cache", "clear"], ["data"],
            ["data", "synth-salbench"], ["data", "synth-illusionbench"],
            ["data", "synth-layout"], ["demo"], ["loopback"], ["validate"], ["probe"],
            ["probe", "resolution"]]
BENCHMARKS = ["salbench", "illusionbench", "vqa", "run", "evaluate"]
SHARED_PANELS = ["Controls", "Engine", "Cost", "Shards and Ray", "Output"]


def _help(args: list[str], width: int = 80) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], terminal_width=width,
                                env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


def _rows(text: str) -> dict[str, str]:
    """Each option's (or argument's) help as one string, by its first name."""
    rows: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        if re.match(r"^  [-A-Z]", line):
            name, _, rest = line.strip().partition("  ")
            last = name.split(",")[0].split(" ")[0]
            rows[last] = rest.strip()
        elif line.startswith("    ") and last is not None:
            rows[last] = (rows[last] + " " + line.strip()).strip()
        else:
            last = None
    return rows


def _panels(text: str) -> list[str]:
    return [line[:-1] for line in text.splitlines() if re.match(r"^\S.*:$", line)]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a) or "root")
def test_help_fits_80_columns_without_cut_words_or_bool_labels(args):
    text = _help(args)
    assert "<bool>" not in text
    # "NAME..." marks an argument that repeats (usage line, argument rows); elsewhere "..."
    # or an ellipsis would be a cut sentence.
    prose = re.sub(r"[\w}\]]\.\.\.(?= |$)", "", text, flags=re.M)
    assert "..." not in prose.replace("wrapped: click cuts", "") and "\u2026" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    # Wrapped between words only: no line ends inside a hyphenated name or a default.
    assert not re.search(r"\w-$|\[default:$", text, flags=re.M)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_help_is_a_table_of_contents(name):
    """The options in panels (the benchmark's own, data, model and endpoints, engine, cost,
    controls, shards and Ray, output), one line each at 100 columns: about a screen. vqa has 19
    options of its own (columns, scorer, judge) and its judge's two prices, so it takes
    more."""
    text = _help([name], width=100)
    own = {"run": ["Arguments", "Benchmark options", "Model and endpoints"],
           "evaluate": ["Arguments", "evaluate options", "Judge"],
           "vqa": ["vqa options", "Data", "Model and endpoints", "Judge"]}
    # evaluate's Controls hold --probe-resolution alone: request variants do not apply to
    # answers already given (its judges are checked by --judge-controls)
    assert _panels(text) == own.get(name, [f"{name} options", "Data",
                                           "Model and endpoints"]) + SHARED_PANELS
    lines = text.splitlines()
    assert len(lines) <= (82 if name == "vqa" else 65), text
    # A second line only under a name too long for the column, or under `run`'s BENCHMARK
    # argument, whose help lists every registered benchmark.
    wrapped = [i for i, line in enumerate(lines) if re.match(r"^ {4,}\S", line)]
    for i in wrapped:
        if name == "run" and lines[i - 1].startswith("  BENCHMARK "):
            continue
        assert re.match(r"^  -\S.{25,}$", lines[i - 1]) and "  " not in \
            lines[i - 1].strip(), (lines[i - 1], lines[i])


def _options(command, path=()):
    """(command path, param) for every visible parameter of every command."""
    import typer

    from visioneval.cli import app as root

    command = command or typer.main.get_command(root)
    for param in command.params:
        if not getattr(param, "hidden", False):
            yield path, param
    for name, sub in getattr(command, "commands", {}).items():
        yield from _options(sub, (*path, name))


def test_every_option_has_help_and_its_default_is_shown():
    from visioneval.cli.panels import shown_default

    helps: dict[tuple, dict[str, str]] = {}
    checked = 0
    for path, param in _options(None):
        assert (param.help or "").strip(), (path, param.name)
        if not path:
            continue
        if path not in helps:  # each command's help once (setdefault rendered it per option)
            helps[path] = _rows(_help(list(path), width=200))
        rows = helps[path]
        name = param.opts[0] if param.param_type_name == "option" else \
            (param.metavar or param.name.upper())
        row = rows[next(k for k in rows if k in (*param.opts, name))] \
            if param.param_type_name == "option" else rows[name]
        default = shown_default(param)
        if default is not None:
            assert f"[default: {default}]" in row, (path, name, row)
            checked += 1
        else:
            assert "[default:" not in row, (path, name, row)
    assert checked > 100


def _shown(args: list[str]) -> dict[str, str]:
    return {k: m.group(1) for k, v in _rows(_help(args, width=200)).items()
            if (m := re.search(r"\[default: ([^\]]*)\]", v))}


def test_shown_defaults_are_the_ones_the_code_applies():
    """Options default to None (a resume tells "not given" apart), so --help's default is
    declared: here it is checked against the code that applies it."""
    from visioneval.cli.generated import settings
    from visioneval.core import registry
    from visioneval.engine.options import EngineOptions
    from visioneval.evaluators.evaluate import EvaluateOptions
    from visioneval.shards import DEFAULT_RAY_SHARDS

    engine = EngineOptions()
    expected = {"--concurrency": engine.concurrency, "--max-attempts": engine.max_attempts,
                "--timeout": engine.timeout_s, "--backoff-base": engine.backoff_base_s,
                "--backoff-cap": engine.backoff_cap_s, "--max-reply-mb": engine.max_reply_mb,
                "--shards": DEFAULT_RAY_SHARDS,
                "--temperature": settings(None, 1, 1).temperature}
    for name in BENCHMARKS:
        shown = _shown([name])
        for flag, value in expected.items():
            if not (name == "evaluate" and flag == "--temperature"):  # its judge's, below
                assert shown[flag] == f"{value:g}", (name, flag)
        assert "~/.cache/visioneval" in shown["--cache-dir"]
    evaluate, fields = _shown(["evaluate"]), EvaluateOptions.model_fields
    for flag, field in (("--judge-samples", "judge_samples"),
                        ("--judge-max-tokens", "judge_max_tokens"),
                        ("--validator-timeout", "validator_timeout_s")):
        assert evaluate[flag] == f"{fields[field].default:g}", flag
    one, several = (EvaluateOptions(cases="c", judge_samples=n).judge_settings().temperature
                    for n in (1, 2))
    assert evaluate["--judge-temperature"] == f"{one:g}; {several:g} for several samples"
    for name in ("salbench", "illusionbench", "vqa"):
        definition = registry.definition(name)
        shown = _shown([name])
        assert shown["--max-tokens"] == str(definition.max_tokens)
        for field, info in definition.command_options.model_fields.items():
            flag = "--" + field.replace("_", "-")
            if info.default not in (None, False) and not info.is_required():
                assert shown[flag] == str(info.default), (name, flag)
    salbench = _shown(["salbench"])
    assert (salbench["--splits"], salbench["--tasks"]) == ("synthetic,natural", "D,R,VR")
    assert _shown(["illusionbench"])["--subsets"] == "ICON,LOGO,IN"
    demo = registry.definition(registry.DEMO)
    assert _shown(["demo"])["--out"] == f"results/{demo.name}-{demo.demo_model}-<time>"


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


@pytest.mark.parametrize(("command", "said"), [
    (("salbench", "--tasks", "D", "--splits", "synthetic"),
     "the builtin baselines that fit salbench: --backend builtin --model popout (or random, "
     "majority); or try `"),
    (("illusionbench", "--subsets", "ICON"),
     "the builtin baselines that fit illusionbench: --backend builtin --model random; or try"),
    (("vqa", "--data", Path(__file__).parents[1] / "examples" / "vqa" / "questions.jsonl"),
     "the model to evaluate); offline, try `"),
])
def test_a_run_never_picks_a_model_and_says_what_to_add(command, said, synth_data,
                                                          tmp_path):
    """No benchmark runs a model the user did not name: one line says --model is needed,
    with the builtin baselines that fit and the offline demo."""
    for missing in ((), ("--backend", "openai"), ("--model", "gpt-4o")):
        result = invoke(*command, *missing, "--out", tmp_path / "run", "--no-progress")
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            "error: --backend and --model are required (the model to evaluate); offline, ")
        assert said in lines[0] and lines[0].endswith("visioneval demo`")
    assert not (tmp_path / "run").exists()
    shown = _shown([command[0]])
    assert "--backend" not in shown and "--model" not in shown


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
    from visioneval.core import registry

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
