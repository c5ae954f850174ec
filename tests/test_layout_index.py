"""The pictures' index page (`visioneval layout --viz`) comes from a jinja2 template with
autoescaping: a hostile sample id, variant, model name or error message is text, never markup."""

from __future__ import annotations

import io

from PIL import Image

from visioneval.layout.draw import sample_dir
from visioneval.layout.report import write_index

EVIL = "<script>alert(1)</script>"


def _thumb(viz, variant, sample_id):
    folder = sample_dir(viz, variant, sample_id)
    folder.mkdir(parents=True)
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buf, "JPEG")
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
    assert page.count("<tr>") == page.count("</tr>") == 1 + 3 + 1 + 2
    assert page.startswith("<!doctype html>") and page.endswith("</html>\n")  # whole
