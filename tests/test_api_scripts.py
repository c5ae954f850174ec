"""The Python API from a plain script, as a newcomer writes one: no
`if __name__ == "__main__":` guard, run with `python script.py` in a real process; and from
a notebook-like caller (`visioneval.arun` awaited on a running loop, no script file)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _python(code: str, cwd: Path, script: bool = True) -> subprocess.CompletedProcess:
    """`python script.py`, or the code on standard input (a cell, as a notebook runs it)."""
    code = textwrap.dedent(code)
    if script:
        (cwd / "script.py").write_text(code)
        return subprocess.run([sys.executable, "script.py"], cwd=cwd, capture_output=True,
                              text=True, timeout=300)
    return subprocess.run([sys.executable, "-"], input=code, cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def _clean(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr
    for said in ("Traceback", "BrokenProcessPool", "in use by another"):
        assert said not in done.stderr + done.stdout


@pytest.mark.slow
def test_an_unguarded_script_runs_salbench_with_the_popout_baseline(synth_data, tmp_path):
    done = _python(f"""
        import visioneval
        print("top level ran")
        result = visioneval.run("salbench", backend="builtin", model="popout",
                                options={{"data_dir": {str(synth_data)!r}, "configs": ["P3"]}},
                                out="results/api-try")
        print(result.status, result.n_records, result.n_errors)
    """, tmp_path)
    _clean(done)
    assert done.stdout.splitlines() == ["top level ran", "finished 8 0"]
    assert len((tmp_path / "results" / "api-try" / "samples.jsonl").read_text()
               .splitlines()) == 8


@pytest.mark.slow
def test_an_unguarded_script_runs_layout_with_two_workers(tmp_path):
    from visioneval.canvas.synth import write_random

    write_random(tmp_path / "canvas", 3, boxes=8, width=256, height=192)
    done = _python(f"""
        import visioneval
        result = visioneval.run("layout", backend="none", model="gpt-4o",
                                options={{"base_dir": {str(tmp_path / 'canvas')!r},
                                         "workers": 2, "skip_semantic": True}},
                                out="results/layout")
        print(result.status, result.n_records, result.n_errors)
    """, tmp_path)
    _clean(done)
    assert done.stdout.strip() == "finished 3 0"


@pytest.mark.slow
def test_a_notebook_awaits_arun_on_its_running_loop(synth_data, tmp_path):
    done = _python(f"""
        import asyncio
        import visioneval

        async def cell():
            result = await visioneval.arun(
                "salbench", backend="builtin", model="popout",
                options={{"data_dir": {str(synth_data)!r}, "configs": ["P3_box"]}},
                out="results/notebook")
            print(result.status, result.n_records)

        asyncio.run(cell())
    """, tmp_path, script=False)
    _clean(done)
    assert done.stdout.strip() == "finished 8"


def test_processes_only_where_the_script_is_not_run_again(tmp_path):
    """A worker process imports the caller's script again: a process pool only under the
    script's guard, in a package's __main__ or where there is no file."""
    done = _python("""
        from visioneval.workers import processes_are_safe

        def check():
            return processes_are_safe()

        print("unguarded", check())
        if __name__ == "__main__":
            print("guarded", check())
    """, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["unguarded", "False", "guarded", "True"]
    # No file to import again (`python -c`, a notebook's kernel): processes.
    no_file = subprocess.run([sys.executable, "-c", "from visioneval.workers import "
                              "processes_are_safe; print(processes_are_safe())"],
                             capture_output=True, text=True, timeout=60)
    assert no_file.stdout.strip() == "True", no_file.stderr
