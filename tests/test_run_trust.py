"""Reading a run directory never runs code the run names: `report`, `compare`, `view`,
`merge`, `--dry-run --resume` and thumbnails show a run of a user's own benchmark (its
run.json naming a module or file, as `definition` or as `benchmark`) with the generic
definition and one line saying why, unless the user names the definition again with
`--definition`; `evaluate`'s `--allow-scripts` and `--allow-outside-images` recorded in
run.json are not honoured when a run is only read."""

from __future__ import annotations

import json
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from cli_helpers import Viewing, invoke, load
from helpers import png_bytes
from rich.console import Console

from visioneval.commands.dryrun import dry_run_resume
from visioneval.core.rundir import load as load_run
from visioneval.report import thumbs
from visioneval.report.viewer import Viewer
from visioneval.runs.output import Output
from visioneval.runs.request import ResumeGiven, ResumeRequest

COLOURS = Path(__file__).parents[1] / "examples" / "own_benchmark" / "colours.py"
MARKER = "IMPORTED"  # written by marker.py when anything imports it

# The user's benchmark again, plus a line that leaves a file behind when the module is
# imported, and a definition with a report section and a comparison table of its own.
MARKED = COLOURS.read_text().replace(
    "from __future__ import annotations\n",
    "from __future__ import annotations\n\nimport pathlib\n\n"
    f"pathlib.Path(__file__).with_name({MARKER!r}).write_text('marker.py was imported')\n",
    1) + textwrap.dedent('''

    class MarkedDefinition(ColoursDefinition):
        def sections(self, view):
            from visioneval.core.blocks import Note, Section

            return [Section("Colour accuracy", [Note(f"accuracy {view.metrics['accuracy']}")])]

        def comparison(self, views):
            from visioneval.core.blocks import ComparisonTable

            rows = [[v.model, v.directory.name, f"{100 * (v.metrics['accuracy'] or 0):.1f}"]
                    for v in views]
            return ComparisonTable("colours", ["Model", "Run", "Colour accuracy %"], rows,
                                   [True], runs=list(views))
    ''')

# How run.json names the marker module: (field, value); {work} is the folder holding it.
VARIANTS = {
    "definition-relative-file": ("definition", "marker.py:MarkedDefinition"),
    "definition-module-here": ("definition", "marker:MarkedDefinition"),
    "definition-absolute-file": ("definition", "{work}/marker.py:MarkedDefinition"),
    "benchmark-relative-file": ("benchmark", "marker.py:MarkedDefinition"),
    "benchmark-absolute-file": ("benchmark", "{work}/marker.py:MarkedDefinition"),
}
NAMED = "marker.py:MarkedDefinition"  # what a user who trusts it passes to --definition


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A whole builtin run of the user's own colours benchmark and its two shards."""
    root = tmp_path_factory.mktemp("own")
    (root / "mybench.py").write_text(COLOURS.read_text())
    base = [f"{root / 'mybench.py'}:ColoursDefinition", "--backend", "builtin", "--model",
            "random", "-o", "n=9", "--no-progress", "--no-report"]
    for out, extra in (("whole", []), ("s1", ["--shard", "1/2"]), ("s2", ["--shard", "2/2"])):
        result = invoke("run", *base, "--out", root / out, *extra)
        assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    """The current folder, holding marker.py."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "marker.py").write_text(MARKED)
    monkeypatch.chdir(folder)
    return folder


def _naming(made: Path, work: Path, variant: str, *names: str) -> list[Path]:
    """Copies of the made runs whose run.json names the marker module as `variant` says."""
    key, value = VARIANTS[variant]
    value = value.format(work=work)
    out = []
    for name in names:
        target = work.parent / f"{variant}-{name}"
        shutil.copytree(made / name, target)
        info = json.loads((target / "run.json").read_text())
        if key == "benchmark":
            info.pop("definition")
        info[key] = value
        (target / "run.json").write_text(json.dumps(info))
        out.append(target)
    return out


def _warnings(result) -> list[str]:
    return [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]


def _is_the_line(line: str, run: Path) -> bool:
    return (str(run) in line and "never imports code that a run directory names" in line
            and "--definition" in line)


def _data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page,
                      re.DOTALL)
    assert match is not None
    return json.loads(match.group(1).replace("<\\/", "</"))


def _sha_of_first_image(run: Path) -> str:
    first = json.loads((run / "samples.jsonl").read_text().splitlines()[0])
    return next(part["image"]["sha256"] for message in first["prompt"]
                for part in message["parts"] if isinstance(part, dict))


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_reading_a_run_never_imports_what_it_names(made, work, variant):
    run, *shards = _naming(made, work, variant, "whole", "s1", "s2")
    other = shards[0]

    result = invoke("report", run)
    assert result.exit_code == 0, result.output
    lines = _warnings(result)
    assert len(lines) == 1 and _is_the_line(lines[0], run), result.stderr
    page = (run / "report-generic.html").read_text()  # never over report.html
    data = _data(page)
    assert "never imports code that a run directory names" in page
    assert data["total"] == 9 and data["thumbs"] == {} and "No thumbnails" in page
    assert "Colour accuracy" not in page

    result = invoke("compare", run, other, "--out", work.parent / f"{variant}-cmp")
    assert result.exit_code == 0, result.output
    assert [_is_the_line(ln, r) for ln, r in zip(_warnings(result)[:2], (run, other),
                                                 strict=True)] == [True, True]
    assert "Answered %" in result.stdout and "Colour accuracy" not in result.stdout
    assert invoke("compare", run, other, "--common-only").exit_code == 0
    result = invoke("compare", run, "--reference", "paper")
    assert result.exit_code == 2 and "no published numbers are shipped" in result.stderr

    sha = _sha_of_first_image(run)
    found, note = thumbs.collect(load_run(run), [sha], 10)
    assert found == {} and "No thumbnails" in note
    viewer = Viewer.open(run)
    assert viewer.untrusted is not None and viewer.thumbs.get(sha) is None

    # A resume (and its dry run) names the user's definition as `visioneval run` does.
    result = invoke("run", "--resume", run, "--dry-run")
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "a run directory alone never makes visioneval import code, so name it again: " \
        "visioneval run" in lines[0] and str(run) in lines[0]

    merged = work.parent / f"{variant}-merged"
    result = invoke("merge", *shards, "--out", merged)
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert _is_the_line(lines[0], shards[0]) and "merging cannot recompute" in lines[0]
    assert not (merged / "samples.jsonl").exists()

    assert not (work / MARKER).exists()


@pytest.mark.parametrize("variant", ["definition-relative-file", "definition-absolute-file"])
def test_a_definition_named_again_is_trusted(made, work, variant):
    run, *shards = _naming(made, work, variant, "whole", "s1", "s2")
    other = shards[0]
    result = invoke("report", run, "--definition", NAMED)
    assert result.exit_code == 0 and not _warnings(result), result.output
    page = (run / "report.html").read_text()
    assert "Colour accuracy" in page and "never imports" not in page
    assert _data(page)["thumbs"]  # read from the benchmark's own data
    assert (work / MARKER).exists()  # the user named it: it was imported

    result = invoke("compare", run, other, "--definition", NAMED)
    assert result.exit_code == 0 and "never imports" not in result.stderr, result.output
    assert "Colour accuracy %" in result.stdout

    sha = _sha_of_first_image(run)
    found, _ = thumbs.collect(load_run(run, NAMED), [sha], 10)
    assert list(found) == [sha]
    assert Viewer.open(run, NAMED).thumbs.get(sha) is not None

    output = Output(Console(record=True, width=200), Console(stderr=True), progress=False)
    assert dry_run_resume(ResumeRequest(run, None, ResumeGiven(definition=NAMED)), output) == 0
    assert "colours on builtin" in output.console.export_text()

    merged = work.parent / f"{variant}-merged"
    result = invoke("merge", *shards, "--out", merged, "--definition", NAMED)
    assert result.exit_code == 0, result.output
    assert load(merged) == load(made / "whole")
    assert load(merged, "run.json")["definition"] == f"{work / 'marker.py'}:MarkedDefinition"
    # The merge's own report is drawn with the definition it was given.
    assert "Colour accuracy" in (merged / "report.html").read_text()


def test_the_end_of_run_report_trusts_only_code_this_process_has_run(made, work):
    """`try_write_report` (the report a run, resume or merge writes when it ends) draws the
    page with run.json's definition only once this process has imported it."""
    from visioneval.core import registry
    from visioneval.report.page import try_write_report

    (run,) = _naming(made, work, "definition-absolute-file", "whole")
    page = try_write_report(run)
    assert page is not None and "never imports code that a run directory names" in \
        page.read_text()
    assert not (work / MARKER).exists()
    registry.definition(NAMED)  # what `visioneval run marker.py:MarkedDefinition` does first
    assert (work / MARKER).exists()
    page = try_write_report(run)
    assert page is not None and "Colour accuracy" in page.read_text()


def test_a_named_definition_of_another_benchmark_is_refused(made, work):
    (run,) = _naming(made, work, "benchmark-relative-file", "whole")
    result = invoke("report", run, "--definition", NAMED)
    assert result.exit_code == 2
    assert "defines benchmark 'colours', but this is a run of 'marker.py:MarkedDefinition'" \
        in result.stderr
    (registered,) = _naming(made, work, "definition-relative-file", "whole")
    result = invoke("report", registered, "--definition", "salbench")
    assert result.exit_code == 2 and "defines benchmark 'salbench'" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["definition-module-here", "benchmark-absolute-file"])
def test_view_serves_the_generic_page_without_importing(made, work, variant):
    (run,) = _naming(made, work, variant, "whole")
    viewing = Viewing(run, cwd=work)
    try:
        status, _, body = viewing.get("")
        assert status == 200
        page = body.decode()
        assert "never imports code that a run directory names" in page
        assert "Colour accuracy" not in page
        status, _, body = viewing.get(f"thumb/{_sha_of_first_image(run)}")
        assert status == 404 and b"not named" in body
    finally:
        _, err = viewing.stop()
    lines = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    assert len(lines) == 1 and _is_the_line(lines[0], run), err
    assert not (work / MARKER).exists()

    if variant.startswith("definition"):
        viewing = Viewing(run, "--definition", NAMED, cwd=work)
        try:
            status, _, body = viewing.get("")
            assert status == 200 and "Colour accuracy" in body.decode()
            status, _, _ = viewing.get(f"thumb/{_sha_of_first_image(run)}")
            assert status == 200
        finally:
            viewing.stop()
        assert (work / MARKER).exists()


def test_evaluate_scripts_and_outside_images_are_not_honoured_when_read(serve, tmp_path):
    server = serve(answer=lambda prompt: json.dumps({
        "reasoning": "ok", "scores": {"visual_accuracy": 8, "completeness": 8, "clarity": 7,
                                      "relevance": 9},
        "details": {"hallucinations": [], "missing_elements": []}}))
    folder = tmp_path / "cases"
    folder.mkdir()
    (folder / "inside.png").write_bytes(png_bytes((10, 200, 10)))
    (tmp_path / "outside.png").write_bytes(png_bytes((10, 10, 200)))
    ran = tmp_path / "SCRIPT-RAN"
    (folder / "mine.py").write_text(textwrap.dedent(f"""
        import json, pathlib, sys
        json.load(sys.stdin)
        with open({str(ran)!r}, "a") as fh:
            fh.write("ran\\n")
        print(json.dumps({{"status": "processed", "score": 1.0, "passed": True}}))
    """))
    script = {"script": f"{sys.executable} mine.py"}
    judge = {"judge": "image-description"}  # a judge's prompt holds the case's image
    (folder / "cases.yaml").write_text(yaml.safe_dump([
        {"id": "in", "output": "x", "images": ["inside.png"], "evaluators": [judge, script]},
        {"id": "out", "output": "x", "images": ["../outside.png"], "evaluators": [judge]},
    ]))
    made = {}
    for name, extra in (("run", []), ("shard", ["--shard", "1/1"])):
        made[name] = tmp_path / name
        result = invoke("evaluate", folder / "cases.yaml", "--out", made[name],
                        "--judge-backend", "openai", "--judge-model", "m",
                        "--judge-base-url", server.base_url + "/v1", "--no-progress",
                        "--no-report", "--allow-scripts", "--allow-outside-images", *extra)
        assert result.exit_code == 0, result.output
    assert ran.read_text().count("ran") == 2  # the runs the user started ran it
    options = load(made["run"], "run.json")["options"]
    assert options["allow_scripts"] and options["allow_outside_images"]
    ran.unlink()

    assert invoke("report", made["run"]).exit_code == 0
    data = _data((made["run"] / "report.html").read_text())
    shown = {row["id"]: row["img"] for row in data["rows"] if row["id"].endswith("/judge:"
                                                                             "image-description")}
    # The image inside the case file's folder has its thumbnail; the one outside is not read.
    assert shown["in/judge:image-description"] is not None
    assert shown["out/judge:image-description"] is None
    assert invoke("compare", made["run"], made["run"], "--common-only").exit_code == 0
    result = invoke("merge", made["shard"], "--out", tmp_path / "merged")
    assert result.exit_code == 0, result.output
    assert load(tmp_path / "merged") == load(made["run"])
    assert not ran.exists()
