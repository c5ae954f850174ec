"""The pictures' index page (`visioneval layout --viz`) comes from a jinja2 template with
autoescaping: a hostile sample id, variant, model name or error message is text, never
markup; its headline scores fit a 1440 px window."""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image

from visioneval.canvas.draw import sample_dir
from visioneval.canvas.report import write_index

EVIL = "<script>alert(1)</script>"


def _thumb(viz, variant, sample_id, size=(8, 8)):
    folder = sample_dir(viz, variant, sample_id)
    folder.mkdir(parents=True)
    buf = io.BytesIO()
    Image.new("RGB", size, "red").save(buf, "JPEG")
    (folder / "thumb.jpg").write_bytes(buf.getvalue())


def test_hostile_ids_and_model_names_are_escaped(tmp_path):
    viz = tmp_path / "viz"
    _thumb(viz, "image_only", EVIL)
    document = {
        "model": EVIL, "variants": ["image_only"],
        "samples": [{"id": EVIL, "variant": "image_only", "mean_iou": 0.4375,
                     "psnr": None, "absent": {"psnr": f"identical {EVIL}"},
                     "pixel_fidelity_error": f"bad {EVIL}"},
                    {"id": "plain", "variant": "image_only", "mean_iou": 1.0}],
        "summary": {"image_only": {"mean_iou": {"mean": 0.7, "median": 0.7, "count": 2}}},
        "skipped": [{"variant": "image_only", "id": EVIL, "reason": "no file"}],
    }
    page = write_index(viz, document, ["mean_iou", "psnr"]).read_text()
    assert EVIL not in page and "<script>alert" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 7  # title, h1, id x3, ...
    assert page.count("<script>") == 1 and "addEventListener('click'" in page  # our sorter
    # The behaviour stays: sort keys, the dash with its reason, links, the inlined thumbnail.
    assert 'data-v="0.4375"' in page and ">0.4375<" in page
    assert 'class="na" data-v="" title="identical &lt;script&gt;' in page
    assert 'href="image_only/_script_alert_1___script_/boxes.png"' in page
    assert page.count("data:image/jpeg;base64,") == 1 and "no picture" in page
    assert "pixel_fidelity: bad &lt;script&gt;" in page
    # The headline tables, then the same rows again with every metric (under the toggle).
    assert page.count("<tr>") == page.count("</tr>") == 2 * (1 + 3 + 1 + 2)
    assert page.startswith("<!doctype html>") and page.endswith("</html>\n")  # whole


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)")
def test_headline_scores_fit_1440_and_the_rest_sit_behind_a_toggle(tmp_path):
    """Every metric the pipeline knows, for two variants: the headline metrics beside each
    thumbnail without sideways scrolling at 1440 px; the counts and parts (num_*, precision,
    ...) only in the table under "All metrics"."""
    from playwright.sync_api import sync_playwright

    from visioneval.canvas.pipeline import METRIC_KEYS, numeric_keys
    from visioneval.canvas.report import DISTRIBUTED

    viz = tmp_path / "viz"
    samples = []
    for variant in ("image_only", "text_and_image"):
        for i in range(6):
            sample_id = f"gid{i}-{i * 7}"
            _thumb(viz, variant, sample_id, size=(360, 140))
            samples.append({"id": sample_id, "variant": variant,
                            **{k: 0.123456 + i / 10 for k in METRIC_KEYS}})
    keys = numeric_keys(samples)
    summary = {v: {k: {"mean": 0.5, "median": 0.5, "count": 6} for k in keys}
               for v in ("image_only", "text_and_image")}
    document = {"model": "gpt-4o", "variants": list(summary), "samples": samples,
                "summary": summary, "skipped": []}
    index = write_index(viz, document, keys)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox",
                                                                    "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(index.as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        # Each headline table fits its card: nothing to scroll inside it either.
        fits = page.evaluate("[...document.querySelectorAll('section > .wrap')]"
                             ".map(w => w.scrollWidth <= w.clientWidth)")
        first = page.locator("section:has(h2:text-is('Samples')) th").all_inner_texts()
        hidden = page.locator("#all-metrics table.sortable").is_visible()
        page.click("#all-metrics summary")
        every = page.locator("#all-metrics table.sortable th").all_inner_texts()
        browser.close()
    assert width <= 1440 and fits == [True, True]
    shown = [head.replace("\n", "") for head in first]
    assert shown == ["picture", "id", "variant", *DISTRIBUTED]
    assert not hidden and [head.replace("\n", "") for head in every] == ["id", "variant", *keys]
    assert set(keys) - set(DISTRIBUTED)  # the toggle holds more than the first table
