"""`visioneval runs`: every run under a folder (suites' subfolders too) as a table and as
runs.html, each with benchmark, model, status, main number with its interval and n; made
from real builtin and loopback runs, copies given other endings through the real store,
and hand-broken directories (a half-written run.json, a journal without one, ...)."""

from __future__ import annotations

import os
import shutil
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_helpers import invoke, salbench_args

from visioneval.core.runfiles import StoppingInfo
from visioneval.core.store import RunLock, RunStore
from visioneval.loopback.server import ServerScript, ThreadedServer
from visioneval.report.runlist import as_dict, entries

P3 = ("--configs", "P3")


def _builtin(data: Path, out: Path, *extra: str) -> None:
    result = invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                    data, "--out", out, "--no-progress", *P3, *extra)
    assert result.exit_code == 0, result.output


def _status(run: Path, status: str, stopping: StoppingInfo | None = None) -> None:
    """run.json of `run` says `status` (and `stopping`), written by the store."""
    store = RunStore.open(run)
    store.info.status = status
    if stopping is not None:
        store.info.stopping = stopping
    store.save_info()


@pytest.fixture(scope="module")
def results(synth_data, tmp_path_factory) -> Path:
    """A results folder: a finished builtin run (with its report), a suite's run in a
    subfolder, a run with failed requests, one stopped by --max-cost, copies that ended
    otherwise, and broken directories."""
    root = tmp_path_factory.mktemp("index") / "results"
    _builtin(synth_data, root / "finished")
    _builtin(synth_data, root / "suites" / "mine" / "salbench-random", "--no-report")
    with ThreadedServer(ServerScript(fail_rate=0.5, faults=("500",), seed=1)) as server:
        result = invoke(*salbench_args(server, synth_data, root / "errors", *P3,
                                       "--max-attempts", "1", "--no-report"))
        assert result.exit_code == 1, result.output  # finished, some samples failed
    with ThreadedServer(ServerScript()) as server:
        result = invoke(*salbench_args(server, synth_data, root / "max-cost", *P3,
                                       "--price-in", "1000", "--price-out", "1000",
                                       "--max-cost", "0.5", "--concurrency", "1",
                                       "--no-cache", "--no-report"))
        assert result.exit_code == 3, result.output
    for name, status in (("interrupted", "interrupted"), ("killed", "running")):
        shutil.copytree(root / "finished", root / name)
        _status(root / name, status)
    shutil.copytree(root / "finished", root / "target-ci")
    _status(root / "target-ci", "finished", StoppingInfo(
        method="betting", target_ci=30, level=0.95, min_samples=4, seed=0, stopped=True,
        stopped_at=6, n=6, samples=8, ci=[0.1, 0.4], segments=[(0, 30)]))
    (root / "journal-only").mkdir()
    (root / "journal-only" / "samples.jsonl").write_text('{"id": "a"}\n')
    shutil.copytree(root / "finished", root / "half-written")
    text = (root / "half-written" / "run.json").read_text()
    (root / "half-written" / "run.json").write_text(text[: len(text) // 2])
    for name, metrics in (("bad-metrics", '{"P3": {"strict": '), ("odd-metrics", '{"P3": 5}'),
                          ("list-metrics", "[1, 2]")):
        shutil.copytree(root / "finished", root / name)
        (root / name / "metrics.json").write_text(metrics)
    shutil.copytree(root / "finished", root / "no-metrics")
    (root / "no-metrics" / "metrics.json").unlink()
    return root


def _rows(root: Path) -> dict[str, dict]:
    return {row["run"]: row for row in map(as_dict, entries(root))}


def test_every_run_is_a_row_saying_what_became_of_it(results):
    rows = _rows(results)
    assert set(rows) == {"finished", "suites/mine/salbench-random", "errors", "max-cost",
                         "interrupted", "killed", "target-ci", "journal-only", "half-written",
                         "bad-metrics", "odd-metrics", "list-metrics", "no-metrics"}
    errors = RunStore.open(results / "errors").info.counts.errors
    assert 0 < errors < 8
    kinds = {name: (row["kind"], row["status"]) for name, row in rows.items()}
    assert kinds["finished"] == ("finished", "finished")
    assert kinds["errors"] == ("errors", f"finished, {errors} error{'s' * (errors > 1)}")
    assert kinds["max-cost"] == ("stopped", "stopped by --max-cost")
    assert kinds["target-ci"] == ("stopped", "stopped by --target-ci at n=6")
    assert kinds["interrupted"] == ("interrupted", "interrupted")
    assert kinds["killed"] == ("interrupted", "incomplete: its process ended")
    for broken in ("journal-only", "half-written"):
        assert kinds[broken] == ("broken", "broken")
    assert "no run.json" in rows["journal-only"]["why"]
    assert rows["half-written"]["why"].startswith("run.json: not valid JSON")


def test_the_main_number_is_the_benchmarks_reading_with_its_interval(results):
    rows = _rows(results)
    finished = rows["finished"]
    metrics = RunStore.open(results / "finished").read_metrics()["P3"]["strict"]
    assert (finished["benchmark"], finished["model"]) == ("salbench", "random")
    assert finished["label"] == "macro F1, P3" and finished["n"] == metrics["n"] == 8
    assert finished["value"] == f"{100 * metrics['macro_f1']:.1f}%"
    low, high = metrics["macro_f1_ci95"]
    assert finished["interval"] == f"{100 * low:.1f} to {100 * high:.1f}"
    errors = rows["errors"]
    assert errors["n"] == 8 - RunStore.open(results / "errors").info.counts.errors
    # What cannot be read says why, never 0.
    assert rows["no-metrics"]["value"] == "-" and "no metrics.json" in rows["no-metrics"]["why"]
    assert rows["bad-metrics"]["value"] == "-"
    assert rows["bad-metrics"]["why"].startswith("metrics.json: not valid JSON")
    assert rows["list-metrics"]["why"] == "metrics.json: not a JSON object but list"
    assert rows["odd-metrics"]["value"] == "-" and rows["odd-metrics"]["why"]


def test_newest_first_and_only_run_json_and_metrics_are_read(results, tmp_path):
    found = entries(results)
    started = [e.started for e in found]
    assert started == sorted(started, reverse=True)
    # A journal that cannot be opened changes nothing: it is never read.
    copy = tmp_path / "results"
    shutil.copytree(results / "finished", copy / "run")
    (copy / "run" / "samples.jsonl").unlink()
    (copy / "run" / "samples.jsonl").mkdir()
    [row] = map(as_dict, entries(copy))
    assert row["kind"] == "finished" and row["value"] == _rows(results)["finished"]["value"]


def test_a_run_in_use_says_so_and_its_process(results, tmp_path):
    run = tmp_path / "running"
    shutil.copytree(results / "finished", run)
    _status(run, "running")
    with RunLock(run):
        [entry] = entries(run)
        assert (entry.status.kind, entry.status.text) == ("running",
                                                          f"running (pid {os.getpid()})")
        assert entry.relative == "."
    [entry] = entries(run)
    assert entry.status.kind == "interrupted"


def test_the_probe_never_refuses_a_run_that_starts(results, tmp_path):
    """Reading the lock takes it shared for an instant; a run taking it waits that out."""
    import fcntl

    run = tmp_path / "run"
    shutil.copytree(results / "finished", run)
    with open(run / ".lock") as held:  # a reader's probe, held on purpose while it starts
        fcntl.flock(held, fcntl.LOCK_SH | fcntl.LOCK_NB)
        import threading

        threading.Timer(0.015, lambda: fcntl.flock(held, fcntl.LOCK_UN)).start()
        with RunLock(run):
            assert RunLock.holder(run) == str(os.getpid())


def test_the_terminal_table_fits_100_columns(results, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    result = invoke("runs", results, "--no-page")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 100
    for word in ("started", "run", "benchmark", "model", "status", "main number",
                 "95% interval", "what it is", "n"):
        assert word in lines[0] + lines[1]
    # Two lines a run (a third for a reason), each within 100 columns: every run is there,
    # and its words.
    for text in ("--max-cost", "--target-ci", "interrupted", "broken", "macro F1, P3",
                 "suites/mine/", "incomplete:", "finished, ", "no run.json"):
        assert text in result.stdout
    assert sum(line.startswith("20") for line in lines) == len(entries(results))
    assert not (results / "runs.html").exists()


class _Page(HTMLParser):
    """The table's heads, each row's cells and links, and the scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: list[str] = []
        self.rows: list[list[str]] = []
        self.links: list[str] = []
        self.scripts: list[str] = []
        self._where: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "th":
            self.heads.append("")
        elif tag == "tr" and self.heads:
            self.rows.append([])
        elif tag == "td":
            self.rows[-1].append("")
        elif tag == "a":
            self.links.append(dict(attrs)["href"])
        self._where = tag if tag in ("th", "td", "script") else self._where
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag in ("th", "td", "script"):
            self._where = None

    def handle_data(self, data):
        if self._where == "th":
            self.heads[-1] += data
        elif self._where == "td":
            self.rows[-1][-1] += data
        elif self._where == "script":
            self.scripts[-1] += data


def test_the_page_lists_every_run_sortable_and_linked(results):
    result = invoke("runs", results)
    assert result.exit_code == 0, result.output
    page_file = results / "runs.html"
    assert f"page: {page_file}" in result.stdout
    html = page_file.read_text()
    page = _Page()
    page.feed(html)
    assert page.heads == ["started (UTC)", "run", "benchmark", "model", "status",
                          "main number", "value", "95% interval", "n"]
    runs = {row[1]: row for row in page.rows}
    assert set(runs) == set(_rows(results))
    assert runs["finished"][4] == "finished" and runs["max-cost"][4] == "stopped by --max-cost"
    # Each run with a report links it (relative: the page works where it lies); others not.
    assert sorted(page.links) == sorted(f"{name}/report.html" for name in runs
                                        if (results / name / "report.html").exists())
    assert "finished/report.html" in page.links
    assert "suites/mine/salbench-random/report.html" not in page.links
    for link in page.links:
        assert (results / link).is_file()
    assert 'class="data sortable runs"' in html and "data-v=" in html
    assert any("table.sortable" in script and "localeCompare" in script
               for script in page.scripts)
    assert "http://" not in html and "https://" not in html  # nothing fetched


def test_a_folder_that_is_not_there_is_one_line(tmp_path):
    result = invoke("runs", tmp_path / "nowhere")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nowhere'}: no such folder (the runs are under results/ unless "
        "--out put them elsewhere)"]


MARKER = "IMPORTED"


def test_a_run_of_your_own_benchmark_is_read_without_its_code(synth_data, tmp_path,
                                                              monkeypatch):
    """The generic reading (accuracy) of a user's benchmark; its file is never imported,
    unless --definition names it."""
    example = Path(__file__).parents[1] / "examples" / "own_benchmark" / "standout.py"
    mine = tmp_path / "mine.py"
    mine.write_text(example.read_text())
    root = tmp_path / "results"
    result = invoke("run", f"{mine}:StandOutDefinition", "--backend", "builtin", "--model",
                    "random", "-o", f"data={synth_data / 'P3'}", "--out", root / "own",
                    "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    # The run.json names a file this process never imported, which leaves a mark if it is.
    marked = tmp_path / "marked.py"
    marked.write_text(textwrap.dedent(f"""\
        import pathlib
        pathlib.Path(__file__).with_name({MARKER!r}).write_text("imported")
        """) + example.read_text().replace("from __future__ import annotations\n", ""))
    store = RunStore.open(root / "own")
    store.info.definition = f"{marked}:StandOutDefinition"
    store.save_info()
    [row] = map(as_dict, entries(root))
    assert row["benchmark"] == "standout" and row["label"] == "accuracy"
    assert row["value"].endswith("%") and row["n"] == 8
    assert not (tmp_path / MARKER).exists()
    monkeypatch.chdir(tmp_path)
    trusted = invoke("runs", root, "--no-page", "--definition", "marked.py:StandOutDefinition")
    assert trusted.exit_code == 0, trusted.output
    assert (tmp_path / MARKER).exists() and "accuracy" in trusted.stdout
