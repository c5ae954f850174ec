"""What a suite file (or the command line) may ask of a benchmark: options it does not have,
numbers and nesting beyond reason, field names that only look like secrets. Each is one line
naming the file and the key, before anything is sent or written."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import invoke

import visioneval

ROOT = Path(__file__).parent.parent
VQA = ROOT / "examples" / "vqa" / "questions.jsonl"


def vqa_suite(path: Path, options: str, engine: str = "", model: str = "") -> Path:
    path.write_text(f'''name = "t"
[[models]]
backend = "builtin"
model = "random"
{model}
[[benchmarks]]
name = "vqa"
options = {{ data = "{VQA}", scorer = "choice", {options} }}
{engine}
''')
    return path


def errors(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize(("options", "key", "nearest"), [
    ("num_sample = 3", "options.num_sample", "num_samples"),
    ('grup_col = "category"', "options.grup_col", "group_col"),
])
def test_an_option_the_benchmark_does_not_have_is_refused_with_the_nearest_name(
        tmp_path, options, key, nearest):
    file = vqa_suite(tmp_path / "s.toml", options)
    for extra in ((), ("--dry-run",)):
        result = invoke("suite", file, "--out", tmp_path / "out", "--no-progress", *extra)
        lines = errors(result)
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert f"{file}: benchmarks[1].{key}" in lines[0]
        assert f"did you mean {nearest}?" in lines[0]
    assert not (tmp_path / "out").exists()


def test_a_vary_key_the_benchmark_does_not_have_is_refused(tmp_path):
    file = vqa_suite(tmp_path / "s.toml", "num_samples = 3")
    file.write_text(file.read_text() + "vary = { shot = [0, 3] }\n")
    lines = errors(invoke("suite", file, "--out", tmp_path / "out", "--dry-run"))
    assert len(lines) == 1 and "benchmarks[1].vary.shot" in lines[0], lines


def test_an_unknown_option_on_the_command_line_is_refused(tmp_path):
    suite = invoke("suite", "--benchmarks", "vqa", "--backend", "builtin", "--model",
                   "random", "-o", f"vqa.data={VQA}", "-o", "vqa.num_sample=3",
                   "--out", tmp_path / "a", "--no-progress")
    assert suite.exit_code == 2, suite.output
    assert errors(suite) == ["error: -o vqa.num_sample: vqa has no option num_sample; "
                             "did you mean num_samples?"]
    run = invoke("run", "vqa", "--backend", "builtin", "--model", "random",
                 "-o", f"data={VQA}", "-o", "num_sample=3", "--out", tmp_path / "b",
                 "--no-progress")
    assert run.exit_code == 2 and len(errors(run)) == 1, run.output
    assert "num_sample" in errors(run)[0] and "did you mean num_samples?" in errors(run)[0]
    with pytest.raises(ValueError, match="did you mean group_col"):
        visioneval.run("vqa", model="random", backend="builtin", out=tmp_path / "c",
                       options={"data": str(VQA), "grup_col": "category"})
    assert not any((tmp_path / d).exists() for d in "abc")


def test_a_known_option_still_runs_as_asked(tmp_path):
    file = vqa_suite(tmp_path / "s.toml", "num_samples = 3")
    result = invoke("suite", file, "--out", tmp_path / "out", "--no-progress")
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "out" / "vqa" / "random" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 3


@pytest.mark.parametrize(("options", "key", "why"), [
    ("num_samples = 99999999999999999999", "benchmarks[1].options.num_samples",
     "99999999999999999999 is out of range"),
    ("tolerance = nan", "benchmarks[1].options.tolerance", "nan is not a finite number"),
    ("choices_col = " + "[" * 20 + "]" * 20, "benchmarks[1].options.choices_col[1]",
     "nested deeper than 16 levels"),
    ("choices_col = " + "[" * 5000 + "]" * 5000, "line 8", "nested deeper than 16 levels"),
])
def test_numbers_and_nesting_a_run_cannot_hold_are_refused_when_the_file_is_read(
        tmp_path, options, key, why):
    file = vqa_suite(tmp_path / "s.toml", options)
    for extra in (("--dry-run",), ()):
        result = invoke("suite", file, "--out", tmp_path / "out", "--no-progress", *extra)
        lines = errors(result)
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert f"{file}: {key}" in lines[0] and why in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def test_a_model_s_number_a_run_cannot_hold_is_refused(tmp_path):
    file = vqa_suite(tmp_path / "s.toml", "num_samples = 3",
                     model="price_in = inf\nprice_out = 0")
    lines = errors(invoke("suite", file, "--out", tmp_path / "out", "--dry-run"))
    assert len(lines) == 1 and "models[1].price_in: inf is not a finite number" in lines[0]


@pytest.mark.parametrize(("flag", "said"), [
    (["--samples", "99999999999999999999"], "option num_samples: 99999999999999999999 is"),
    (["--max-tokens", "99999999999999999999"], "--max-tokens: Input should be less than"),
    (["--rpm", "99999999999999999999"], "--rpm: Input should be less than"),
    (["--timeout", "inf"], "--timeout: Input should be a finite number"),
    (["--temperature", "nan"], "--temperature: Input should be a finite number"),
])
def test_a_flag_a_run_cannot_record_is_refused_before_the_run_starts(tmp_path, flag, said):
    result = invoke("vqa", "--data", VQA, "--scorer", "choice", "--backend", "builtin",
                    "--model", "random", "--out", tmp_path / "r", "--no-progress", *flag)
    lines = errors(result)
    assert result.exit_code == 2 and len(lines) == 1 and said in lines[0], result.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("name", "secret"), [
    ("api_key", True), ("apiKey", True), ("x-api-key", True), ("judge_api_key", True),
    ("key", True), ("secret_key", True), ("private_key", True), ("token", True),
    ("hf_token", True), ("access_token", True), ("client_secret", True), ("password", True),
    ("monkey", False), ("keypoints", False), ("key_col", False), ("sort_key", False),
    ("answer_key", False), ("primary_key", False), ("max_tokens", False),
    ("token_limit", False), ("api_key_env", False), ("judge_api_key_env", False),
])
def test_only_a_field_that_names_a_secret_is_refused_as_one(name, secret):
    from visioneval.suite.spec import names_a_secret

    assert names_a_secret(name) is secret


def test_an_option_whose_name_holds_key_is_checked_as_an_option_not_a_secret(tmp_path):
    file = vqa_suite(tmp_path / "s.toml", 'keypoints = "x"')
    lines = errors(invoke("suite", file, "--out", tmp_path / "out", "--dry-run"))
    assert len(lines) == 1 and "vqa has no option keypoints" in lines[0], lines
    file = vqa_suite(tmp_path / "s.toml", 'hf_token = "hf_abc"')
    lines = errors(invoke("suite", file, "--out", tmp_path / "out", "--dry-run"))
    assert len(lines) == 1 and "benchmarks[1].options.hf_token: a suite file never holds a " \
        "key" in lines[0], lines
