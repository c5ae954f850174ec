"""Every example in docs/evaluators.md runs: JSON and YAML load, the rubric file is a
rubric, the case file and the shell commands run against the scripted loopback judge."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from cli_helpers import invoke
from docs_examples import fenced_blocks, shell_commands

from visioneval.evaluators.judge import Case, render
from visioneval.evaluators.rubric import load_rubric
from visioneval.loopback.server import answer_judge

ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "evaluators.md"
EXAMPLES = ROOT / "examples" / "evaluators"
RUNNABLE = {"json", "yaml", "markdown", "bash"}
LOOPBACK = re.compile(r"http://127\.0\.0\.1:\d+")  # the page's scripted judge, on its port


def _blocks():
    return [b for b in fenced_blocks(PAGE) if b[0] in RUNNABLE]


def test_the_extractor_finds_the_pages_examples():
    langs = [lang for lang, _, _ in _blocks()]
    assert {"yaml", "markdown", "bash"} <= set(langs)
    unknown = {lang for lang, _, _ in fenced_blocks(PAGE)} - RUNNABLE - {"text"}
    assert not unknown, f"blocks neither run nor marked text: {unknown}"


def test_json_and_yaml_examples_load():
    for lang, code, line in _blocks():
        try:
            if lang == "json":
                json.loads(code)
            elif lang == "yaml":
                yaml.safe_load(code)
            elif lang == "markdown":
                yaml.safe_load(code.split("---")[1])  # a rubric's front matter
        except (ValueError, yaml.YAMLError) as exc:
            raise AssertionError(f"docs/evaluators.md:{line}: {exc}") from None


def test_rubric_example_is_a_working_rubric(tmp_path):
    rubrics = [code for lang, code, _ in _blocks() if lang == "markdown"]
    assert rubrics
    for i, code in enumerate(rubrics):
        path = tmp_path / f"rubric{i}.md"
        path.write_text(code)
        rubric = load_rubric(path.name, tmp_path)
        text = render(rubric, Case("Describe it.", "A cat.", "A cat on a mat."))
        assert "{{" not in text and "A cat on a mat." in text


def test_case_file_examples_run_against_the_scripted_judge(serve, tmp_path):
    server = serve(answer=answer_judge)
    ran = 0
    for lang, code, line in _blocks():
        if lang != "yaml":
            continue
        data = yaml.safe_load(code)
        folder = tmp_path / f"block{line}"
        folder.mkdir()
        cases = data["cases"] if isinstance(data, dict) else data
        for case in cases:
            for image in case.get("images", []):
                shutil.copy(EXAMPLES / image, folder / image)
            for spec in case["evaluators"]:
                for word in str(spec.get("script", "")).split():
                    if word.endswith(".py"):  # the doc's own validator: the shipped example
                        shutil.copy(EXAMPLES / "mentions_shelf.py", folder / word)
        path = folder / "cases.yaml"
        path.write_text(code)
        result = invoke("evaluate", path, "--allow-scripts", "--judge-backend", "openai",
                        "--judge-model", "m", "--judge-base-url", server.base_url + "/v1",
                        "--out", folder / "run", "--no-progress")
        assert result.exit_code == 0, f"docs/evaluators.md:{line}: {result.output}"
        assert "skipped" not in result.stderr, f"docs/evaluators.md:{line}: {result.stderr}"
        ran += 1
    assert ran


@pytest.mark.slow
def test_shell_examples_run(serve, tmp_path, monkeypatch):
    server = serve(answer=answer_judge)
    monkeypatch.chdir(ROOT)  # the commands name paths from the repository's root
    ran = 0
    for lang, code, line in _blocks():
        if lang != "bash":
            continue
        for n, command in enumerate(shell_commands(code)):
            argv = command.argv[2:] if command.argv[:2] == ["uv", "run"] else command.argv
            assert argv[0] == "visioneval", f"docs/evaluators.md:{line}: cannot run {argv}"
            if argv[1] == "loopback" and command.background:
                continue  # the `serve` fixture is that server, on a free port
            args = [LOOPBACK.sub(server.base_url, a) for a in argv[1:]]
            if args[0] == "evaluate" and "--out" not in args:
                args += ["--out", str(tmp_path / f"run-{line}-{n}"), "--no-progress"]
            result = invoke(*args)
            assert result.exit_code == command.exit_code, \
                f"docs/evaluators.md:{line}: {' '.join(argv)}\n{result.output}"
            ran += 1
    assert ran >= 2
