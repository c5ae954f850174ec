"""Image files named by a data file (`visioneval vqa`) or a case file (`visioneval
evaluate`): a path leading outside the file's folder needs --allow-outside-images, and a
FIFO, a device, a directory or an oversized file is refused before it is read, each with
one line naming the file, the row and the path. A FIFO must never block a run: every
check here runs under a timeout that opens the FIFO's other end if the reader waits."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import invoke, load
from helpers import png_bytes

from visioneval.benchmarks.vqa.benchmark import build
from visioneval.core.records import Sample, SkippedRow
from visioneval.evaluators.cases import UnusableCase, iter_cases
from visioneval.io.images import MAX_FILE_BYTES, ImageError, read_file

QUESTION = {"question": "Which?", "answer": "A", "choices": ["x", "y"]}


def within(seconds: float, fifo: Path, action: Callable[[], Any]) -> Any:
    """`action()`, failing the test (not hanging it) if it waits on the FIFO: after the
    timeout the FIFO's write end is opened, which releases a reader stuck on it."""
    result: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(action())
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        with contextlib.suppress(OSError):  # no reader waiting: nothing to release
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail(f"blocked for over {seconds} s (on the FIFO {fifo}?)")
    if errors:
        raise errors[0]
    return result[0]


def make_tree(root: Path) -> tuple[Path, Path, dict[str, str]]:
    """A data folder with one good image, an image outside it, and the bad kinds of files.
    Returns (folder, the outside image, {name: path as a data file writes it})."""
    folder = root / "d"
    (folder / "img").mkdir(parents=True)
    (folder / "img" / "good.png").write_bytes(png_bytes())
    secret = root / "secret.png"
    secret.write_bytes(png_bytes((10, 200, 10)))
    (folder / "img" / "link.png").symlink_to(secret)
    os.mkfifo(folder / "img" / "pipe.png")
    with open(folder / "img" / "big.png", "wb") as fh:  # sparse: no disk space taken
        fh.truncate(MAX_FILE_BYTES + 1)
    (folder / "img" / "dir.png").mkdir()
    paths = {"good": "img/good.png", "absolute": str(secret), "up": "../secret.png",
             "link": "img/link.png", "zero": "/dev/zero", "fifo": "img/pipe.png",
             "big": "img/big.png", "dir": "img/dir.png"}
    return folder, secret, paths


def expected_vqa_lines(folder: Path, secret: Path, paths: dict[str, str],
                       allowed: bool) -> list[str]:
    """The skip line of every refused row, in row order (row n is paths' n-th entry)."""
    why = {
        "absolute": f"{secret} is outside the data file's folder {folder}",
        "up": f"../secret.png is outside the data file's folder {folder} (it leads to "
              f"{secret})",
        "link": f"img/link.png is outside the data file's folder {folder} (it leads to "
                f"{secret})",
        "zero": f"/dev/zero is outside the data file's folder {folder}",
    }
    lines = []
    for row, name in enumerate(paths, 1):
        if name in why and not allowed:
            reason = why[name] + "; pass --allow-outside-images to read it"
        elif name == "zero":
            reason = "/dev/zero: a character device, not a regular file"
        elif name == "fifo":
            reason = "img/pipe.png: a FIFO (named pipe), not a regular file"
        elif name == "big":
            reason = f"img/big.png: 64.0 MB, over the {MAX_FILE_BYTES / 1e6:g} MB limit " \
                     "for an image file"
        elif name == "dir":
            reason = "img/dir.png: a directory, not a regular file"
        else:
            continue
        lines.append(f"skipped q.jsonl row {row}: column 'image': {reason}")
    return lines


def write_rows(folder: Path, paths: dict[str, str]) -> Path:
    data = folder / "q.jsonl"
    data.write_text("".join(json.dumps({"id": name, "image": path, **QUESTION}) + "\n"
                            for name, path in paths.items()))
    return data


@pytest.mark.parametrize("allowed", [False, True])
def test_vqa_rows_name_each_refused_image(tmp_path, allowed):
    folder, secret, paths = make_tree(tmp_path)
    data = write_rows(folder, paths)
    benchmark = build({"data": str(data), "scorer": "choice",
                       "allow_outside_images": allowed})

    def read() -> tuple[list[Any], dict[str, Any]]:
        return list(benchmark.samples()), benchmark.plan()  # plan() hashes every image

    items, plan = within(30, folder / "img" / "pipe.png", read)
    skipped = [i.line() for i in items if isinstance(i, SkippedRow)]
    assert skipped == expected_vqa_lines(folder, secret, paths, allowed)
    read_ids = [i.id for i in items if isinstance(i, Sample)]
    assert read_ids == (["good", "absolute", "up", "link"] if allowed else ["good"])
    if allowed:
        sent = [i.messages[0].images()[0].data for i in items if isinstance(i, Sample)]
        assert sent[1:] == [secret.read_bytes()] * 3
    assert plan.dataset.fingerprint


def test_the_fingerprint_reads_no_outside_image_unless_allowed(tmp_path):
    folder, secret, paths = make_tree(tmp_path)
    data = write_rows(folder, {"good": paths["good"], "absolute": paths["absolute"]})

    def fingerprint(allowed: bool) -> str:
        return build({"data": str(data), "allow_outside_images": allowed}
                     ).plan().dataset.fingerprint

    before = fingerprint(False), fingerprint(True)
    secret.write_bytes(png_bytes((0, 0, 255)))
    after = fingerprint(False), fingerprint(True)
    assert before[0] == after[0]  # never read without the flag
    assert before[1] != after[1]  # read, and a change is seen, with it


@pytest.mark.slow
def test_the_vqa_command_skips_them_and_runs_the_rest(serve, tmp_path):
    """Real `visioneval vqa` processes (a FIFO in the data must not block them: killed
    after 120 s), without and with --allow-outside-images."""
    server = serve(answer=lambda prompt: "A")
    folder, secret, paths = make_tree(tmp_path)
    data = write_rows(folder, paths)
    for allowed in (False, True):
        out = tmp_path / f"run-{allowed}"
        args = ["vqa", "--data", str(data), "--scorer", "choice", "--backend", "openai",
                "--base-url", server.base_url + "/v1", "--model", "m", "--out", str(out),
                "--no-progress", "--no-report", *(["--allow-outside-images"] if allowed
                                                   else [])]
        proc = subprocess.run([sys.executable, "-m", "visioneval", *args],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        lines = [ln.removeprefix("warning: ") for ln in proc.stderr.splitlines()
                 if "skipped" in ln]
        assert lines == expected_vqa_lines(folder, secret, paths, allowed)
        assert load(out)["overall"]["n"] == (4 if allowed else 1)
        assert load(out, "run.json")["options"]["allow_outside_images"] is allowed


def test_evaluate_cases_refuse_the_same_files(tmp_path):
    folder, secret, paths = make_tree(tmp_path)
    check = {"validator": "ocr", "options": {"keywords": ["x"]}}
    cases = folder / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": name, "output": "x", "images": [path],
                                         "evaluators": [check]}) + "\n"
                             for name, path in paths.items()))
    for allowed in (False, True):
        found = within(30, folder / "img" / "pipe.png",
                       lambda allowed=allowed: list(iter_cases(cases, allowed)))
        reasons = {e.name: e.reason for e in found if isinstance(e, UnusableCase)}
        outside = {f"image: {paths[n]} is outside the case file's folder {folder} (pass "
                   "--allow-outside-images to read it)" for n in ("absolute", "up", "link")}
        assert {reasons.get(n) for n in ("absolute", "up", "link")} == (
            {None} if allowed else outside)
        assert reasons["zero"] == (
            "image: /dev/zero: a character device, not a regular file" if allowed else
            f"image: /dev/zero is outside the case file's folder {folder} (pass "
            "--allow-outside-images to read it)")
        assert reasons["fifo"] == "image: img/pipe.png: a FIFO (named pipe), not a regular file"
        assert reasons["big"] == ("image: img/big.png: 64.0 MB, over the 64 MB limit for an "
                                  "image file")
        assert reasons["dir"] == "image: img/dir.png: a directory, not a regular file"
        assert "good" not in reasons


def test_the_evaluate_command_prints_the_line(tmp_path):
    folder, _, paths = make_tree(tmp_path)
    cases = folder / "cases.jsonl"
    check = {"validator": "ocr", "options": {"keywords": ["x"]}}
    cases.write_text("".join(json.dumps({"id": name, "output": "x", "images": [paths[name]],
                                         "evaluators": [check]}) + "\n"
                             for name in ("good", "fifo", "big")))
    result = within(60, folder / "img" / "pipe.png", lambda: invoke(
        "evaluate", cases, "--out", tmp_path / "run", "--no-progress", "--no-report"))
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if "skipped" in ln]
    assert lines == [
        "warning: skipped cases.jsonl row case fifo: image: img/pipe.png: a FIFO (named "
        "pipe), not a regular file",
        "warning: skipped cases.jsonl row case big: image: img/big.png: 64.0 MB, over the "
        "64 MB limit for an image file"]


def test_the_size_limit_is_exact(tmp_path):
    path = tmp_path / "a.png"
    path.write_bytes(b"x" * 1001)
    with pytest.raises(ImageError, match=r"^a.png: 0.0 MB, over the 0.001 MB limit"):
        read_file(path, "a.png", limit=1000)
    assert read_file(path, "a.png", limit=1001) == b"x" * 1001
