"""Data a run depends on is not rewritten without a word: `visioneval data synth-*` refuses a
folder that already holds data unless --overwrite says so, and `visioneval report` / `view`
of a run whose data changed since it ran say so (one line, and on the page) instead of
showing missing thumbnails silently."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import Viewing, invoke, journal, load

from visioneval.core import registry
from visioneval.core.datacheck import data_change, stat_holds
from visioneval.core.store import RunStore
from visioneval.io.parquet import row_count

CHANGED = re.compile(r"thumbnails are from data that changed since the run: (\S+) \(dataset "
                     r"fingerprint ([0-9a-f]{12}) in run.json, ([0-9a-f]{12}) now\)")


def synth(*args: object):
    return invoke("data", "synth-salbench", *map(str, args))


def contents(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_synth_refuses_a_folder_that_holds_data_and_overwrites_when_asked(tmp_path):
    data = tmp_path / "data" / "synth"
    assert synth("--out", data, "--n", 4).exit_code == 0
    before = contents(data)
    refused = synth("--out", data, "--n", 2, "--seed", 1)
    assert refused.exit_code == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert (f"error: {data} already holds data (P3/, P3_box/, P3_box_img/)" in lines[0]
            and "add --overwrite to replace it" in lines[0])
    assert contents(data) == before  # not a byte changed
    assert refused.stdout == ""

    kept = data / "NOTES.txt"  # not the dataset's: an overwrite leaves it alone
    kept.write_text("mine")
    done = synth("--out", data, "--n", 2, "--seed", 1, "--overwrite")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [f"{data / c}: 2 rows" for c in
                                        ("P3", "P3_box", "P3_box_img")]
    assert {c: row_count(sorted((data / c).glob("*.parquet"))) for c in
            ("P3", "P3_box", "P3_box_img")} == {"P3": 2, "P3_box": 2, "P3_box_img": 2}
    assert kept.read_text() == "mine"
    assert [p.name for p in data.parent.iterdir()] == ["synth"]  # nothing left beside it


def test_synth_into_an_empty_or_new_folder_needs_no_flag(tmp_path):
    (tmp_path / "empty").mkdir()
    assert invoke("data", "synth-illusionbench", "--out", tmp_path / "empty", "--n",
                  "2").exit_code == 0
    assert invoke("data", "synth-illusionbench", "--out", tmp_path / "new" / "ib", "--n",
                  "2").exit_code == 0
    again = invoke("data", "synth-illusionbench", "--out", tmp_path / "new" / "ib", "--n", "2")
    assert again.exit_code == 2 and "already holds data (data/)" in again.stderr
    (tmp_path / "file").write_text("x")
    on_file = invoke("data", "synth-illusionbench", "--out", tmp_path / "file")
    assert on_file.exit_code == 2 and "is a file" in on_file.stderr


def test_layout_overwrite_leaves_no_pair_of_the_old_set(tmp_path):
    out = tmp_path / "canvas"
    assert invoke("data", "synth-layout", "--out", out, "--n", "4", "--boxes", "3").exit_code == 0
    refused = invoke("data", "synth-layout", "--out", out, "--n", "2", "--boxes", "3")
    assert refused.exit_code == 2 and "(benchmarks/, results/)" in refused.stderr
    done = invoke("data", "synth-layout", "--out", out, "--n", "2", "--boxes", "3",
                  "--overwrite")
    assert done.exit_code == 0, done.output
    truth = sorted(p.name for p in (out / "benchmarks" / "generation_gt").glob("*.png"))
    assert truth == ["gid0-0.png", "gid0-1.png"]


@pytest.fixture
def run_on_synth(tmp_path):
    """A SalBench run of the builtin random model on 6 synthetic rows (P3), its data folder
    and its run directory."""
    data = tmp_path / "data" / "sal"
    assert synth("--out", data, "--n", 6).exit_code == 0
    run = tmp_path / "results" / "run"
    result = invoke("salbench", "--backend", "builtin", "--model", "random", "--data-dir",
                    data, "--configs", "P3", "--out", run, "--no-progress")
    assert result.exit_code == 0, result.output
    return data, run


def test_report_of_unchanged_data_says_nothing(run_on_synth):
    data, run = run_on_synth
    info = RunStore.open(run).info
    assert stat_holds(info.dataset.stat)
    result = invoke("report", run)
    assert result.exit_code == 0 and "changed since the run" not in result.output
    page = (run / "report.html").read_text()
    assert "changed since the run" not in page
    assert len(re.findall(r'"i\d+":"data:image/webp;base64,', page)) == 6
    # The same bytes written again: the files' times differ, the fingerprint does not.
    assert synth("--out", data, "--n", 6, "--overwrite").exit_code == 0
    assert not stat_holds(info.dataset.stat)
    assert data_change(info, registry.for_run(info)) is None
    assert "changed since the run" not in invoke("report", run).output


def test_report_names_data_rewritten_since_the_run(run_on_synth):
    data, run = run_on_synth
    info = load(run, "run.json")
    assert synth("--out", data, "--n", 6, "--seed", 1, "--overwrite").exit_code == 0
    result = invoke("report", run)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if "changed since" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: thumbnails are from data")
    source, then, now = CHANGED.search(warnings[0]).groups()
    assert source == info["dataset"]["source"] == str(data.resolve())
    assert then == info["dataset"]["fingerprint"][:12] and now != then
    page = (run / "report.html").read_text()
    assert (f"Thumbnails are from data that changed since the run: {source} (dataset "
            f"fingerprint {then} in run.json, {now} now); 6 of the 6 images of the embedded "
            "samples are not in it now and have no thumbnail.") in page
    assert '"thumbs":{}' in page
    # A resume is refused on that data, as before.
    assert invoke("salbench", "--resume", run, "--no-progress").exit_code == 2


def test_a_run_that_recorded_no_stat_is_checked_by_its_fingerprint(run_on_synth):
    """Runs made before the files' stat was recorded (and benchmarks that record none)."""
    data, run = run_on_synth
    info = load(run, "run.json")
    del info["dataset"]["stat"]
    (run / "run.json").write_text(json.dumps(info))
    assert "changed since" not in invoke("report", run).output
    assert synth("--out", data, "--n", 3, "--seed", 2, "--overwrite").exit_code == 0
    result = invoke("report", run)
    assert CHANGED.search(result.stderr), result.output
    assert "3 of the 6" not in (run / "report.html").read_text()  # all 6 are gone


def test_the_end_of_run_report_of_a_resume_is_not_checked_again(run_on_synth):
    """A resumed run has just read its data (the fingerprints matched): it adds no line."""
    data, run = run_on_synth
    assert synth("--out", data, "--n", 6, "--overwrite").exit_code == 0  # same bytes
    result = invoke("salbench", "--resume", run, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "changed since" not in result.output
    assert stat_holds(RunStore.open(run).info.dataset.stat)  # the files as they are now
    assert len(journal(run)) == 6


@pytest.mark.slow
def test_view_names_data_rewritten_since_the_run(run_on_synth):
    data, run = run_on_synth
    assert synth("--out", data, "--n", 6, "--seed", 1, "--overwrite").exit_code == 0
    viewing = Viewing(run)
    try:
        status, _, body = viewing.get("")
        assert status == 200
        page = body.decode()
        assert "Thumbnails are from data that changed since the run: " in page
        rows = viewing.rows(size=10)
        assert len(rows["rows"]) == 6
        status, _, reason = viewing.get(next(iter(rows["thumbs"].values())))
        assert status == 404
        assert reason.decode().startswith("not in the run's data now: thumbnails are from "
                                          "data that changed since the run: ")
    finally:
        code, err = viewing.stop()
    lines = [line for line in err.splitlines() if "changed since" in line]
    assert len(lines) == 1 and CHANGED.search(lines[0])
