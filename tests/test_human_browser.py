"""`--backend human` end to end in a real headless Chromium: a scripted observer answers a
person's page from a known psychometric function, through constant stimuli (Vernier
acuity) and the adaptive method (the Psi method of the visual-search thresholds), and the
runs' fits recover it; a page closed mid-run and a run stopped mid-run go on where they
were; the records hold what the page measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import invoke, journal, load
from human_helpers import CHROMIUM, PersonRun, answer_trials, begin, browser

from visioneval.benchmarks.vernier.paradigm import Vernier
from visioneval.loopback.observer import Observer, parse_curves
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.paradigm import Design
from visioneval.stats.psychometric import criterion_level

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium installed")]
PSE, JND = 0.5, 1.0
OBSERVER = Observer(parse_curves(f"vernier={PSE}:{JND}:0.02"), seed=3)


@pytest.fixture(scope="module")
def vernier(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("vernier-person")
    write_dataset(Vernier(), root, Design(trials=10), seed=2)  # 8 levels x 10
    return root


def _vernier(data: Path, out: Path, observer: str = "P01", *extra: str) -> PersonRun:
    return PersonRun.start("vernier", "--data", data, "--backend", "human", "--model",
                           observer, "--out", out, "--no-report", "--bootstrap", "300", *extra)


def test_a_scripted_observer_on_the_page_is_recovered_by_the_fit(vernier, tmp_path):
    from playwright.sync_api import sync_playwright

    run = _vernier(vernier, tmp_path / "run")
    with sync_playwright() as p:
        chromium, page = browser(p)
        begin(page, run.url)
        answered = answer_trials(page, OBSERVER)
        assert page.inner_text("#end-count") == f"{answered} answers given on this page."
        chromium.close()
    code, out, err = run.finish()
    assert code == 0, err
    assert answered == 80
    curve = load(tmp_path / "run")["curves"][0]
    low, high = curve["pse_ci95"]
    assert low <= PSE <= high, curve
    assert curve["jnd"] == pytest.approx(JND, rel=0.6), curve
    records = journal(tmp_path / "run")
    person = records[0]["response"]["person"]
    assert person["observer"] == "P01" and person["display"]["image_device_px"] == 1.0
    assert person["display"]["image_stored"] == [256, 256]
    assert person["procedure"]["fixation_ms"] == 0
    assert sorted(r["response"]["person"]["trial"] for r in records) == list(range(1, 81))
    # the trials came in an order of the person's own, not the data's level by level
    levels = [r["metadata"]["level"] for r in records]
    assert levels != sorted(levels) and levels[:8] != list(Vernier().conditions()[0].levels)
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["backend"]["kind"] == "human" and info["engine"]["concurrency"] == 1
    assert info["engine"]["cache_path"] is None
    shown = invoke("show", tmp_path / "run")
    assert "80 answers by P01; 0 ran out of time" in shown.output
    assert "Shown at its stored pixels (one image pixel on one device pixel) in 80 of 80" \
        in " ".join(shown.output.split())
    # beside the pixel reader on the same stimuli: the person's row, the difference tests
    # with the ratio, and error consistency (absent: the reader is never wrong)
    reader = invoke("vernier", "--data", vernier, "--backend", "builtin", "--model", "reader",
                    "--out", tmp_path / "reader", "--no-progress", "--no-report")
    assert reader.exit_code == 0, reader.output
    compared = invoke("compare", tmp_path / "run", tmp_path / "reader")
    assert compared.exit_code == 0, compared.output
    text = " ".join(compared.output.split())
    assert "P01 (person)" in text and "this / first (95%)" in text
    assert "Error consistency: do they err on the same trials?" in text
    assert "reader was right on all 80 trials: kappa is 0 whatever" in text
    assert max(len(line) for line in compared.output.splitlines()) <= 100


def test_a_page_closed_and_a_run_stopped_mid_run_go_on_where_they_were(vernier, tmp_path):
    from playwright.sync_api import sync_playwright

    out = tmp_path / "run"
    run = _vernier(vernier, out, "P01", "--samples", "24")  # of the 80
    with sync_playwright() as p:
        chromium, page = browser(p)
        begin(page, run.url)
        first = answer_trials(page, OBSERVER, most=5)
        page.wait_for_selector("#trial:not([hidden])")
        shown = page.get_attribute("#trial", "data-key")
        page.close()  # the tab closed with a trial on screen
        again = chromium.new_page()
        begin(again, run.url)
        again.wait_for_selector("#trial:not([hidden])")
        assert again.get_attribute("#trial", "data-key") == shown  # the same trial waits
        second = answer_trials(again, OBSERVER, most=8)
        again.wait_for_selector("#trial:not([hidden])")
        code, _, err = run.interrupt()  # Ctrl-C with a trial on the page
        assert code != 0
        again.click("#options button >> nth=0")  # an answer the stopped run cannot take
        again.wait_for_selector("#lost:not([hidden])", timeout=10_000)  # says the run stopped
        assert len(journal(out)) == first + second
        resumed = PersonRun.start("vernier", "--resume", out)
        begin(again, resumed.url)
        rest = answer_trials(again, OBSERVER)
        chromium.close()
    code, _, err = resumed.finish()
    assert code == 0, err
    assert first + second + rest == 24
    records = journal(out)
    assert len({r["id"] for r in records}) == len(records) == 24
    assert sorted(r["response"]["person"]["trial"] for r in records) == list(range(1, 25))


def test_the_psi_method_places_a_persons_trials_from_their_answers(search_pool, tmp_path):
    """The adaptive method asks the person exactly as it asks a model: each next stimulus
    from the answers so far; the fit recovers the scripted observer's threshold."""
    from playwright.sync_api import sync_playwright

    alpha, beta, lapse, trials = 8.0, 3.0, 0.02, 40
    observer = Observer(parse_curves(f"orientation={alpha:g}:{beta:g}:{lapse:g},"
                                     f"color={alpha:g}:{beta:g}:{lapse:g}"), seed=5)
    run = PersonRun.start("psychophysics", "--data", search_pool, "--backend", "human",
                          "--model", "P02", "--out", tmp_path / "run", "--method", "adaptive",
                          "--adaptive-trials", trials, "--bootstrap", 200)
    with sync_playwright() as p:
        chromium, page = browser(p)
        begin(page, run.url, break_every=None)
        answered = answer_trials(page, observer)
        chromium.close()
    code, _, err = run.finish()
    assert code == 0, err
    assert answered == 2 * trials
    true = criterion_level(0.75, alpha, beta, 1 / 3, lapse, "weibull")
    assert true is not None
    records = journal(tmp_path / "run")
    assert {r["metadata"]["placement"] for r in records} == {"adaptive"}
    levels = [r["metadata"]["level"] for r in records
              if r["metadata"]["feature"] == "orientation"]
    assert sum(true / 2.5 <= level <= true * 2.5 for level in levels) / len(levels) > 0.6
    for fit in load(tmp_path / "run")["thresholds"]:
        low, high = fit["threshold_ci95"]
        assert fit["status"] == "reached" and low <= true <= high, fit


def test_two_observers_shards_merge_into_one_run(tmp_path):
    """Two people each run one shard of the same data; `visioneval merge` joins them, and
    every answer keeps the id of the person who gave it."""
    from playwright.sync_api import sync_playwright

    data = tmp_path / "data"
    write_dataset(Vernier(), data, Design(trials=2), seed=3)  # 16 trials
    with sync_playwright() as p:
        for k, observer in ((1, "P01"), (2, "P02")):
            run = _vernier(data, tmp_path / f"shard{k}", observer, "--shard", f"{k}/2")
            chromium, page = browser(p)
            begin(page, run.url)
            answer_trials(page, OBSERVER)
            chromium.close()
            code, _, err = run.finish()
            assert code == 0, err
    merged = invoke("merge", tmp_path / "shard1", tmp_path / "shard2", "--out",
                    tmp_path / "merged")
    assert merged.exit_code == 0, merged.output
    records = journal(tmp_path / "merged")
    assert len(records) == 16
    by = {r["response"]["person"]["observer"] for r in records}
    assert by == {"P01", "P02"}
    info = json.loads((tmp_path / "merged" / "run.json").read_text())
    assert info["backend"]["model"] == "P01+P02"
    shown = invoke("show", tmp_path / "merged")
    assert "16 answers by P01 (" in shown.output and "P02 (" in shown.output


def test_a_window_too_small_for_the_stored_pixels_shows_no_stimulus(vernier, tmp_path):
    """A 256 px stimulus in a 300 x 260 window: the page says how much room it needs and
    shows nothing until the window is larger, then the trial at its stored pixels."""
    from playwright.sync_api import sync_playwright

    run = _vernier(vernier, tmp_path / "run", "P01", "--samples", "3")
    with sync_playwright() as p:
        chromium, page = browser(p, 300, 260)
        begin(page, run.url)
        page.wait_for_selector("#fit:not([hidden])")
        assert "needs 256 x 256 CSS px" in page.inner_text("#fit-why")
        assert page.is_hidden("#trial")
        page.set_viewport_size({"width": 900, "height": 700})
        page.wait_for_selector("#trial:not([hidden])")
        box = page.locator("#images img").bounding_box()
        assert box is not None and (box["width"], box["height"]) == (256, 256)
        answered = answer_trials(page, OBSERVER)
        chromium.close()
    code, _, err = run.finish()
    assert code == 0, err
    assert answered == 3 and len(journal(tmp_path / "run")) == 3


def test_a_trial_that_runs_out_of_time_is_recorded_with_no_answer(vernier, tmp_path):
    """A time limit of 0.2 s and nobody answering: each trial is recorded as timed out, its
    answer empty, so it is unparsed and in no count of the comparison's curve."""
    from playwright.sync_api import sync_playwright

    run = _vernier(vernier, tmp_path / "run", "P01", "--samples", "3")
    with sync_playwright() as p:
        chromium, page = browser(p)
        begin(page, run.url, time_limit_s=0.2)
        page.wait_for_selector("#end:not([hidden])", timeout=30_000)
        chromium.close()
    code, _, err = run.finish()
    assert code == 0, err
    records = journal(tmp_path / "run")
    assert len(records) == 3
    assert all(r["response"]["person"]["timed_out"] for r in records)
    assert all(r["response"]["text"] == "" for r in records)
    assert all(r["response"]["person"]["response_ms"] >= 200 for r in records)
    assert load(tmp_path / "run")["n_unparsed"] == 3
