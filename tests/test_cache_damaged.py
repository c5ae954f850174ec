"""A response cache with a damaged page (bytes overwritten in the middle of a real file) is
the one line a cache that cannot be opened gets ("caching is off for this run"), and the
run goes on; `visioneval cache list/show/clear` on it is one line, never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import invoke, journal

from visioneval.core.records import Response
from visioneval.engine.cache import Origin, ResponseCache
from visioneval.loopback.server import ServerScript, ThreadedServer

EXAMPLE = Path(__file__).parents[1] / "examples" / "vqa" / "questions.jsonl"
FILE = "responses.sqlite3"


def vqa(server, out: Path, cache: Path):
    return invoke("vqa", "--data", EXAMPLE, "--scorer", "choice", "--backend", "openai",
                  "--base-url", server.base_url + "/v1", "--model", "m", "--out", out,
                  "--no-progress", "--no-report", "--cache-dir", cache)


@pytest.fixture(scope="module")
def whole_cache(tmp_path_factory) -> Path:
    """A real cache: a run's 12 answers among 600 others of another model (many pages)."""
    folder = tmp_path_factory.mktemp("cache")
    with ThreadedServer(ServerScript()) as server:
        assert vqa(server, folder / "run", folder).exit_code == 0
    cache = ResponseCache(folder / FILE)
    origin = Origin("/elsewhere", "other", "{}")
    for i in range(600):
        cache.put(f"filler-{i:04d}", Response(text=f"answer {i} " * 20), origin)
    cache.close()
    return folder / FILE


def damaged(whole: Path, into: Path, at: float) -> Path:
    """A copy of the cache with 512 bytes at `at` of its length overwritten."""
    into.mkdir(parents=True, exist_ok=True)
    data = bytearray(whole.read_bytes())
    middle = int(len(data) * at)
    data[middle:middle + 512] = b"\xa5" * 512
    (into / FILE).write_bytes(data)
    return into


@pytest.mark.parametrize("at", [0.3, 0.5, 0.7, 0.9])
def test_a_damaged_page_turns_the_cache_off_and_the_run_goes_on(serve, whole_cache,
                                                               tmp_path, at):
    server = serve()
    cache = damaged(whole_cache, tmp_path / "cache", at)
    result = vqa(server, tmp_path / "run", cache)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "DatabaseError" not in result.output
    assert len({r["id"] for r in journal(tmp_path / "run")}) == 12
    assert all(r["response"]["error"] is None for r in journal(tmp_path / "run"))
    warned = [ln for ln in result.stderr.splitlines() if "response cache" in ln]
    assert len(warned) <= 1, warned
    if warned:
        assert "caching is off for this run" in warned[0] and str(cache / FILE) in warned[0]


def test_a_damaged_page_the_run_reads_is_said_in_one_line(serve, whole_cache, tmp_path):
    """Damage where the run's own answers are: each offset whose copy the run cannot
    read from is one line, and at least one offset is such a copy."""
    server = serve()
    said = 0
    for i, at in enumerate((0.02, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97)):
        cache = damaged(whole_cache, tmp_path / f"cache{i}", at)
        result = vqa(server, tmp_path / f"run{i}", cache)
        assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        warned = [ln for ln in result.stderr.splitlines() if "caching is off" in ln]
        said += len(warned) == 1
        assert len({r["id"] for r in journal(tmp_path / f"run{i}")}) == 12
    assert said >= 1


@pytest.mark.parametrize("command", [["list"], ["show", "--model", "m"], ["clear", "--all"]])
def test_the_cache_commands_on_a_damaged_file_say_one_line(whole_cache, tmp_path, command):
    for i, at in enumerate((0.02, 0.3, 0.5, 0.9)):
        cache = damaged(whole_cache, tmp_path / f"cache{i}", at)
        result = invoke("cache", *command, "--cache-dir", cache)
        assert "Traceback" not in result.output, result.output
        if result.exit_code:
            lines = result.stderr.splitlines()
            assert result.exit_code == 2 and len(lines) == 1, result.output
            assert str(cache / FILE) in lines[0] and "damaged" in lines[0], lines[0]
        shutil.rmtree(cache)


def test_a_stored_answer_that_does_not_read_back_is_asked_again(tmp_path, caplog):
    import sqlite3

    cache = ResponseCache(tmp_path / FILE)
    origin = Origin("/run", "m", "{}")
    for key in ("a", "b"):
        cache.put(key, Response(text="A"), origin)
    cache.close()
    with sqlite3.connect(tmp_path / FILE) as db:
        db.execute("UPDATE responses SET response = '{\"text\": \"A\", \"laten'")
    db.close()
    again = ResponseCache(tmp_path / FILE)
    assert again.get("a") is None and again.get("b") is None
    said = [r.getMessage() for r in caplog.records if "cannot be read" in r.getMessage()]
    assert len(said) == 1 and str(tmp_path / FILE) in said[0]
    again.put("a", Response(text="B"), origin)  # written anew, and read back
    again.flush()
    hit = again.get("a")
    assert hit is not None and hit.text == "B"
    again.close()
