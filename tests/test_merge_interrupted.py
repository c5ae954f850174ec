"""`visioneval merge` killed halfway leaves a directory that says it is unfinished, and the
same command completes it with the metrics of a clean merge; a shard still running (its
run directory's lock held) is refused, or left out with --allow-partial."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import textwrap
import time
from pathlib import Path

import pytest
from cli_helpers import invoke, load, spawn

COLOURS = Path(__file__).parents[1] / "examples" / "own_benchmark" / "colours.py"

# The user's colours benchmark, whose summarize or write_tables waits when a file named
# `pause-at-<step>` is beside it (after writing `paused-at-<step>`): a merge can be killed
# at a known point between its writes.
PAUSING = COLOURS.read_text() + textwrap.dedent('''

    import os as _os
    import time as _time
    from pathlib import Path

    _HERE = Path(__file__).parent


    def _pause(step):
        if (_HERE / f"pause-at-{step}").exists():
            (_HERE / f"paused-at-{step}").write_text(str(_os.getpid()))
            _time.sleep(600)


    class Pausing(Colours):
        def summarize(self, records):
            metrics = super().summarize(records)
            _pause("summarize")
            return metrics

        def write_tables(self, metrics, info, directory):
            _pause("write_tables")
            return super().write_tables(metrics, info, directory)


    class PausingDefinition(ColoursDefinition):
        def build(self, options):
            return Pausing(Options.model_validate(options))
    ''')


@pytest.fixture
def shards(tmp_path) -> tuple[Path, list[Path], str]:
    """(the folder holding pausing.py, two shards of a builtin colours run, --definition)."""
    (tmp_path / "pausing.py").write_text(PAUSING)
    definition = f"{tmp_path / 'pausing.py'}:PausingDefinition"
    dirs = []
    for k in (1, 2):
        out = tmp_path / f"s{k}"
        result = invoke("run", definition, "--backend", "builtin", "--model", "random",
                        "-o", "n=40", "--out", out, "--no-progress", "--no-report",
                        "--shard", f"{k}/2")
        assert result.exit_code == 0, result.output
        dirs.append(out)
    return tmp_path, dirs, definition


def _wait_for(path: Path, proc, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize("step", ["summarize", "write_tables"])
def test_a_merge_killed_halfway_is_completed_by_the_same_command(shards, step):
    folder, dirs, definition = shards
    clean = folder / "clean"
    assert invoke("merge", *dirs, "--out", clean, "--definition", definition,
                  "--no-report").exit_code == 0
    assert load(clean, "run.json")["status"] == "finished"

    out = folder / "killed"
    args = ["merge", *dirs, "--out", out, "--definition", definition, "--no-report"]
    (folder / f"pause-at-{step}").touch()
    proc = spawn(*args, cwd=folder)
    try:
        _wait_for(folder / f"paused-at-{step}", proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    (folder / f"pause-at-{step}").unlink()

    # The journal is written, but run.json still says the merge is unfinished.
    info = load(out, "run.json")
    assert info["status"] == "merging" and "counts" not in info
    assert (out / "samples.jsonl").read_bytes() == (clean / "samples.jsonl").read_bytes()
    assert (out / "metrics.json").exists() == (step == "write_tables")

    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert (out / "metrics.json").read_bytes() == (clean / "metrics.json").read_bytes()
    info = load(out, "run.json")
    assert info["status"] == "finished" and info["counts"]["records"] == 40
    # A merge that finished is a run: merging into it again is refused.
    again = invoke(*args)
    assert again.exit_code == 2 and "already holds a run" in again.stderr


def test_a_merged_run_without_metrics_is_completed(shards):
    """A merge killed by a visioneval that wrote run.json's final status first (a
    "finished" run.json and no metrics.json) is completed too."""
    folder, dirs, definition = shards
    out = folder / "merged"
    args = ["merge", *dirs, "--out", out, "--definition", definition, "--no-report"]
    assert invoke(*args).exit_code == 0
    metrics = (out / "metrics.json").read_bytes()
    (out / "metrics.json").unlink()
    assert invoke(*args).exit_code == 0
    assert (out / "metrics.json").read_bytes() == metrics


class Held:
    """A shard's run lock held by this process, as a running `visioneval` holds it."""

    def __init__(self, directory: Path):
        self.fd = os.open(directory / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        os.close(self.fd)


def test_a_shard_still_running_is_refused_or_left_out(shards):
    folder, dirs, definition = shards
    held = Held(dirs[1])
    try:
        result = invoke("merge", *dirs, "--out", folder / "m", "--definition", definition,
                        "--no-report")
        lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert "shard 2/2" in lines[0] and str(dirs[1]) in lines[0]
        assert "still running" in lines[0] and f"pid {os.getpid()}" in lines[0]
        assert "--allow-partial" in lines[0] and not (folder / "m").exists()

        partial = folder / "partial"
        result = invoke("merge", *dirs, "--out", partial, "--definition", definition,
                        "--allow-partial", "--no-report")
        assert result.exit_code == 1, result.output
        assert "shards 2/2 are missing (2/2 was still running" in result.stderr
        info = load(partial, "run.json")
        assert info["status"] == "partial"
        assert info["missing_shards"] == [{"index": 2, "count": 2, "still_running": True}]
        assert [m["shard"]["index"] for m in info["merged_from"]] == [1]
        assert load(partial)["n"] == json.loads((dirs[0] / "metrics.json").read_text())["n"]
    finally:
        held.release()
    done = folder / "done"
    assert invoke("merge", *dirs, "--out", done, "--definition", definition,
                  "--no-report").exit_code == 0
    assert load(done, "run.json")["status"] == "finished"
