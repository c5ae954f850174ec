"""`visioneval compare` marks a value best only when its 95% interval clears every other
run's: on real runs of different sizes, the page, the Markdown file and the terminal agree;
and the comparison page fits a 1440 px window (a narrow one scrolls only its table)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from cli_helpers import flat, invoke, load

from visioneval.core.marks import Why, verdict

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NOTE = "no run is ahead beyond its interval"


@pytest.fixture(scope="module")
def scenes(tmp_path_factory) -> Path:
    """60 synthetic P3 scenes per config, and the natural-image configs (O3...) filled
    with the same scenes, so every column of the paper's Table 1 can have a value."""
    from visioneval.benchmarks.salbench.synth import write_synthetic

    root = tmp_path_factory.mktemp("scenes")
    write_synthetic(root, 60, seed=7)
    for config in ("P3", "P3_box", "P3_box_img"):
        shutil.copytree(root / config, root / config.replace("P3", "O3"))
    return root


def _run(data: Path, out: Path, model: str, n: int, *configs: str) -> Path:
    result = invoke("salbench", "--backend", "builtin", "--model", model, "--data-dir", data,
                    "--configs", ",".join(configs or ("P3",)), "--num-samples", str(n),
                    "--out", out, "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    return out


def _compare(out: Path, *runs: Path) -> tuple[str, str, str]:
    """(terminal, comparison.md, comparison.html); the terminal's as a colour terminal
    shows it (FORCE_COLOR: rich writes its styles, a bold value among them)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FORCE_COLOR", "1")
        result = invoke("compare", *runs, "--out", out)
    assert result.exit_code == 0, result.output
    return (result.stdout, (out / "comparison.md").read_text(),
            (out / "comparison.html").read_text())


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _text(terminal: str) -> str:
    """The terminal's words, styles left out, its wrapped sentences joined."""
    return flat(ANSI.sub("", terminal))


def _bold_in_terminal(terminal: str) -> dict[str, list[str]]:
    """Model -> its values drawn bold, from the terminal's table rows."""
    rows = [row for row in terminal.splitlines()
            if ANSI.sub("", row).split()[:1] in (["popout"], ["random"])]
    return {ANSI.sub("", row).split()[0]: re.findall(r"\x1b\[1m([\d.]+)\x1b\[0m", row)
            for row in rows}


def _bold_cells(markdown: str) -> dict[str, list[str]]:
    """Model -> its bold values, from the Markdown table."""
    rows = [line.split(" | ") for line in markdown.splitlines() if line.startswith("| ")]
    return {row[0].lstrip("| "): re.findall(r"\*\*([\d.]+)\*\*", " | ".join(row))
            for row in rows[1:]}


def _best_cells(page: str) -> list[str]:
    return re.findall(r'<td class="num best">([\d.]+)<small>', page)


def _ci(run: Path, metric: str) -> tuple[float, float]:
    low, high = load(run)["P3"]["strict"][f"{metric}_ci95"]
    return 100 * low, 100 * high


@pytest.mark.slow
def test_overlapping_intervals_mark_nothing_and_say_why(scenes, tmp_path):
    """60 samples against 6 of the same model: the small run's value may be higher, its
    interval covers the large run's, so neither is bold, anywhere."""
    big = _run(scenes, tmp_path / "big", "popout", 60)
    small = _run(scenes, tmp_path / "small", "popout", 6)
    for metric in ("exact_match", "macro_f1"):  # the premise, from the runs themselves
        (a_low, a_high), (b_low, b_high) = _ci(big, metric), _ci(small, metric)
        assert a_low <= b_high and b_low <= a_high
    terminal, markdown, page = _compare(tmp_path / "cmp", big, small)
    assert "**" not in markdown and "**" not in terminal
    assert _best_cells(page) == [] and 'class="num best"' not in page
    assert all(not bold for bold in _bold_in_terminal(terminal).values())
    for text in (markdown, _text(terminal), page):
        assert NOTE in text and "95% interval" in text
    assert "Detection\\_SYN F1" in markdown  # the columns it names


@pytest.mark.slow
def test_separated_intervals_mark_the_value_on_every_output(scenes, tmp_path):
    """popout on 60 scenes against random on 6: where popout's interval lies wholly above,
    its value is bold on the page, in the Markdown file and in the terminal, and only
    there."""
    popout = _run(scenes, tmp_path / "popout", "popout", 60)
    chance = _run(scenes, tmp_path / "chance", "random", 6)
    terminal, markdown, page = _compare(tmp_path / "cmp", popout, chance)
    expected = [f"{100 * load(popout)['P3']['strict'][m]:.1f}"
                for m in ("macro_f1", "exact_match")
                if _ci(popout, m)[0] > _ci(chance, m)[1]]
    assert expected  # the premise: popout is ahead beyond the intervals somewhere
    assert _bold_cells(markdown) == {"popout": expected, "random": []}
    assert _bold_in_terminal(terminal) == _bold_cells(markdown)
    assert _best_cells(page) == expected
    if len(expected) == 2:
        assert NOTE not in page and NOTE not in markdown and NOTE not in _text(terminal)


def test_the_mark_needs_a_clear_lead_over_every_other_run():
    higher = True
    # Ahead of the next best, but a small run's wide interval reaches above: no mark.
    assert verdict([80.0, 70.0, 60.0], [(77, 83), (67, 73), (30, 90)], higher) == \
        (None, Why.OVERLAP)
    assert verdict([80.0, 70.0, 60.0], [(77, 83), (67, 73), (50, 70)], higher) == \
        (0, Why.MARKED)
    assert verdict([80.0, 80.0], [(79, 81), (79, 81)], higher) == (None, Why.OVERLAP)  # tie
    assert verdict([80.0, 70.0], [(75, 85), (70, 75)], higher) == (None, Why.OVERLAP)  # touch
    assert verdict([80.0, 20.0], [(75, 85), None], higher) == (None, Why.NO_INTERVAL)
    assert verdict([5.0, 40.0], [(2, 9), (30, 50)], False) == (0, Why.MARKED)  # lower wins
    assert verdict([80.0, None], [(75, 85), None], higher) is None  # nothing to rank


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_the_widest_comparison_fits_1440_and_wraps_at_800(scenes, tmp_path):
    """All six configs (twelve value columns and the cost) for runs whose rows carry long
    run names: no sideways scrolling of the page at 1440 px; at 800 px only the table
    scrolls, inside its card, the run's name kept in view."""
    from playwright.sync_api import sync_playwright

    configs = ("P3", "P3_box", "P3_box_img", "O3", "O3_box", "O3_box_img")
    runs = [_run(scenes, tmp_path / name, "popout", n, *configs) for name, n in
            (("salbench-popout-2025-06-01T12-00-00-all-configs", 12),
             ("salbench-popout-2025-06-02T09-30-00-all-configs", 8))]
    runs.append(_run(scenes, tmp_path / "chance", "random", 6, *configs))
    _, _, page_text = _compare(tmp_path / "cmp", *runs)
    assert page_text.count("<small>") == 3 * 12  # every value with its interval
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox",
                                                                    "--disable-gpu"])
        widths = {}
        for width in (1440, 800):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto((tmp_path / "cmp" / "comparison.html").as_uri())
            widths[width] = page.evaluate("document.documentElement.scrollWidth")
            if width == 800:
                table = page.evaluate("document.querySelector('table.compare')"
                                      ".getBoundingClientRect().width")
                name = page.locator("td.name").first
                before = name.bounding_box()
                page.evaluate("document.querySelector('.scroll').scrollLeft = 10000")
                after = name.bounding_box()
                cost = page.locator("td.num").last.bounding_box()
            page.close()
        browser.close()
    assert widths[1440] <= 1440 and widths[800] <= 800
    assert table > 800  # the table itself is wider: it scrolls in its card...
    assert before and after and cost and cost["x"] + cost["width"] <= 800  # (scrolled)
    assert abs(after["x"] - before["x"]) < 1  # ...with the run's name kept in view
