"""docs/judge-checks.md's offline example runs as the page shows it: its two loopback judges
are test servers (the judge that reads the scenes, the one that ignores the image), and
every line of the cards the page prints is a line of what `visioneval show` prints of the run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import invoke
from docs_examples import fenced_blocks, shell_commands

from visioneval.loopback.server import ANSWER_MODES

ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "judge-checks.md"


@pytest.mark.slow
def test_the_offline_example_prints_the_card_the_page_shows(serve, tmp_path, monkeypatch):
    blocks = list(fenced_blocks(PAGE))
    bash = next(code for lang, code, _ in blocks if lang == "bash")
    commands = shell_commands(bash)
    loopbacks = [" ".join(c.argv) for c in commands if "loopback" in c.argv]
    assert all(c.background for c in commands if "loopback" in c.argv)
    servers = {}
    for line in loopbacks:  # each judge on the port the page gives it
        words = line.split()
        mode, model, port = (words[words.index(flag) + 1]
                             for flag in ("--answer", "--model", "--port"))
        servers[f"127.0.0.1:{port}"] = serve(answer=ANSWER_MODES[mode], models=(model,))
    assert sorted(line.split("--answer ")[1].split()[0] for line in loopbacks) == [
        "judge", "judge-sees"]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    evaluate, = [c.argv for c in commands if "evaluate" in c.argv]
    args = evaluate[evaluate.index("evaluate"):]
    for where, server in servers.items():
        args = [a.replace(f"http://{where}", server.base_url) for a in args]
    result = invoke(*args, "--no-progress")
    assert result.exit_code == 0, result.output
    run = tmp_path / "results" / "judge-checks"
    assert (run / "report.html").is_file()
    assert "judge 2: text: " in result.stdout and "flags on its judge card" in result.stdout
    show, = [c.argv for c in commands if "show" in c.argv]  # the cards, as the page says
    cards = invoke(*show[show.index("show"):])
    assert cards.exit_code == 0, cards.output
    printed = {line.rstrip() for line in cards.output.splitlines()}
    shown = next(code for lang, code, _ in blocks if lang == "text")
    for line in shown.splitlines():
        if line.strip() and line.strip() != "..." and not set(line.strip()) <= {"─"}:
            assert line.rstrip() in printed, f"docs/judge-checks.md shows {line!r}"
