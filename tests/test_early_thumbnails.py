"""The end-of-run page's thumbnails prepared while answers arrive (`report.early`): the page
is byte for byte the one whose thumbnails are read from the data after the run, and needs no
data read for them; only images the page may show are kept, however many samples; a killed
and resumed run's page is complete; a run without a page makes none (real runs against the
loopback server)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from cli_helpers import invoke, journal, salbench_args, spawn
from rich.console import Console

from visioneval.backends.registry import BackendSpec
from visioneval.benchmarks.salbench.synth import write_synthetic
from visioneval.core import registry
from visioneval.core.records import GenerationSettings, Sample
from visioneval.core.rundir import image_hashes, load
from visioneval.core.store import RunLock, RunStore
from visioneval.engine.options import EngineOptions
from visioneval.loopback.server import Prompt, answer_hash
from visioneval.report.early import EarlyPage
from visioneval.report.page import write_page
from visioneval.report.selection import KINDS, priority
from visioneval.report.thumbs import RUN_END_THUMBS
from visioneval.runs.execute import execute
from visioneval.runs.output import Output
from visioneval.runs.session import SessionResult
from visioneval.runs.spec import RunSpec


def mixed(prompt: Prompt) -> str:
    """Some answers no parser reads, the others a guess: unparsed, wrong and right answers
    (the server's faults add errors)."""
    tail = prompt.images[-1][-64:] if prompt.images else ""
    return "I cannot tell." if zlib.crc32(tail.encode()) % 4 == 0 else answer_hash(prompt)


def session(server, data: Path, out: Path, report: bool = True, early: bool = True,
            concurrency: int = 4) -> SessionResult:
    benchmark = registry.build("salbench", {"data_dir": str(data), "configs": ["P3", "P3_box"]})
    spec = BackendSpec(kind="openai", model="m", base_url=server.base_url + "/v1")
    request = RunSpec.of(benchmark, backend=spec, generation=GenerationSettings(max_tokens=64),
                         engine=EngineOptions(concurrency=concurrency, max_attempts=1), out=out)
    quiet = Console(quiet=True)
    output = Output(quiet, quiet, progress=False, report=report, early_thumbnails=early)
    lock = RunLock(out)
    try:
        return asyncio.run(execute(request, out, output, lock))
    finally:
        lock.release()


def classes(run: Path) -> set[str]:
    """The page's classes of the run's records (`selection.priority`)."""
    definition = load(run).shown
    return {KINDS[priority(definition.browser_row(r) | {"e": r.response.error})]
            for r in RunStore.open(run).iter_latest()}


def page(run: Path, ready=None, limit: int = RUN_END_THUMBS) -> bytes:
    return write_page(load(run, check_data=False), limit, ready=ready).read_bytes()


@pytest.mark.slow
def test_the_page_with_thumbnails_made_during_the_run_is_the_same(serve, tmp_path):
    data = tmp_path / "data"
    write_synthetic(data, 20, seed=6)
    server = serve(answer=mixed, fail_rate=0.2, faults=("500",), latency_s=0.04)
    run = tmp_path / "run"
    result = session(server, data, run, concurrency=8)
    assert classes(run) == set(KINDS)  # errors, unparsed, wrong and right answers
    made = dict(result.thumbnails)
    images = {image_hashes(r)[-1] for r in RunStore.open(run).iter_latest()}
    assert len(images) == 20  # the 40 samples ask about 20 scenes
    assert set(made) == images  # under the page's limit: every one may be shown
    # Made while the loop waited for answers; those of the last answers are handed over
    # as images, for the page to make.
    assert sum(isinstance(v, str) for v in made.values()) >= 10

    after = page(run)  # thumbnails read from the data, as `visioneval report` does
    assert page(run, made) == after
    assert after.count(b"data:image/webp;base64,") == 20

    shutil.move(data, tmp_path / "moved")  # no data to read: the page takes what was made
    assert page(run, made) == after


@pytest.mark.slow
@pytest.mark.parametrize("limit", [1, 4, 10])
def test_only_images_the_page_may_show_are_kept(serve, tmp_path, limit):
    data = tmp_path / "data"
    write_synthetic(data, 50, seed=6)
    server = serve(answer=mixed, fail_rate=0.2, faults=("500",))
    run = tmp_path / "run"
    session(server, data, run, report=False)
    benchmark = registry.build("salbench", {"data_dir": str(data), "configs": ["P3", "P3_box"]})
    samples = {s.id: s for s in benchmark.samples() if isinstance(s, Sample)}
    early = EarlyPage(RunStore.open(run).info, run, limit=limit)
    for record in RunStore.open(run).iter_latest():  # in journal order, as they came
        early.recorded(samples[record.id], record)
    made = dict(early.thumbnails())
    assert limit <= len(made) <= len(KINDS) * limit < 50  # bounded, whatever the run's size

    after = page(run, limit=limit)
    shutil.move(data, tmp_path / "moved")
    assert page(run, made, limit) == after  # the page's first `limit` images were all made


def test_a_run_without_a_page_makes_no_thumbnails(serve, synth_data, tmp_path):
    server = serve()
    assert dict(session(server, synth_data, tmp_path / "a", report=False).thumbnails) == {}
    # The Python API draws its own page and asks for none made early.
    assert dict(session(server, synth_data, tmp_path / "b", early=False).thumbnails) == {}
    assert len(session(server, synth_data, tmp_path / "c").thumbnails) == 8


@pytest.mark.slow
def test_the_command_makes_them_only_with_a_page(serve, synth_data, tmp_path):
    """`--no-report` never loads the code that makes thumbnails; the default does."""
    server = serve()
    probe = ("import sys; from visioneval.cli import main; sys.argv = ['visioneval', "
             "*sys.argv[1:]]\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('made' if 'visioneval.report.early' in sys.modules else 'none')")
    for flag, expected in (("--no-report", "none"), ("--concurrency", "made")):
        args = salbench_args(server, synth_data, tmp_path / expected, "--configs", "P3",
                             *([flag] if flag == "--no-report" else [flag, "4"]))
        done = subprocess.run([sys.executable, "-c", probe, *map(str, args)],
                              capture_output=True, text=True, timeout=120)
        assert done.stdout.strip().splitlines()[-1] == expected, done.stderr
    assert (tmp_path / "made" / "report.html").exists()
    assert not (tmp_path / "none" / "report.html").exists()


@pytest.mark.slow
def test_a_killed_then_resumed_runs_page_is_complete(serve, tmp_path):
    data = tmp_path / "data"
    write_synthetic(data, 30, seed=2)
    server = serve(latency_s=0.05)
    out = tmp_path / "killed"
    proc = spawn(*salbench_args(server, data, out, "--configs", "P3,P3_box",
                                "--concurrency", "2", "--no-cache"))
    journal_file = out / "samples.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if journal_file.exists() and journal_file.read_bytes().count(b"\n") >= 12:
            break
        time.sleep(0.01)
    assert proc.poll() is None, proc.communicate()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 12 <= journal_file.read_bytes().count(b"\n") < 60, "not interrupted mid-way"
    assert not (out / "report.html").exists()

    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    assert len({r["id"] for r in journal(out)}) == 60
    written = (out / "report.html").read_bytes()
    # The earlier session's images were read from the data, this one's made as it ran.
    assert written.count(b"data:image/webp;base64,") == 30
    assert written == page(out)
