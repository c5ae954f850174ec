"""`index.html` for a run's pictures: one self-contained page (no CDN, no external
script or style; thumbnails inlined as data URLs, full pictures linked relatively), a
table of every sample's metrics, sortable by any column with a click."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

from visioneval.engine.store import write_atomic
from visioneval.layout.draw import sample_dir

SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    if (th.dataset.nosort !== undefined) return;
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var asc = th.dataset.dir !== 'asc';
      Array.prototype.forEach.call(heads, function (h) { delete h.dataset.dir; });
      th.dataset.dir = asc ? 'asc' : 'desc';
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
        var xe = x === undefined || x === '', ye = y === undefined || y === '';
        if (xe || ye) return xe - ye;  // missing values last, either way
        var nx = parseFloat(x), ny = parseFloat(y), r;
        if (!isNaN(nx) && !isNaN(ny)) r = nx - ny; else r = x.localeCompare(y);
        return asc ? r : -r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

STYLE = """
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; } h2 { font-size: 15px; margin-top: 24px; }
.wrap { overflow-x: auto; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: right;
         white-space: nowrap; }
th { position: sticky; top: 0; background: #f4f4f4; user-select: none; }
table.sortable th { cursor: pointer; }
th[data-dir=asc]::after { content: " \\25B2"; } th[data-dir=desc]::after { content: " \\25BC"; }
td.l, th.l { text-align: left; }
td.err { color: #b00; text-align: left; white-space: normal; max-width: 420px; }
td.na { color: #aaa; }
img.thumb { width: 180px; display: block; }
.note { color: #666; }
"""


def _data_url(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return "data:image/jpeg;base64," + base64.b64encode(data).decode()


def _cell(value: Any, reason: str | None = None) -> str:
    if isinstance(value, bool) or value is None:
        title = f' title="{html.escape(reason)}"' if reason else ""
        return f'<td class="na" data-v=""{title}>–</td>'
    if isinstance(value, float):
        return f'<td data-v="{value!r}">{value:.4g}</td>'
    if isinstance(value, int):
        return f'<td data-v="{value}">{value}</td>'
    text = html.escape(str(value))
    return f'<td class="l" data-v="{text}">{text}</td>'


def write_index(viz_dir: Path, document: dict[str, Any], metric_keys: list[str]) -> Path:
    samples = document["samples"]
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>layout evaluation: {esc(str(document.get('model')))}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Layout evaluation: {esc(str(document.get('model')))}, "
        f"{esc(', '.join(document.get('variants', [])))}</h1>",
        f"<p class='note'>{len(samples)} samples, {len(document.get('skipped', []))} skipped. "
        "Click a column to sort (again to reverse); a dash is a metric that is absent "
        "(hover for why) or failed. Thumbnails open the boxes picture.</p>",
    ]
    # Summary: one row per variant and statistic, the metrics as columns.
    parts.append("<h2>Summary</h2><div class='wrap'><table><thead><tr>"
                 "<th class='l' data-nosort>variant</th><th class='l' data-nosort></th>")
    parts += [f"<th data-nosort>{esc(k)}</th>" for k in metric_keys]
    parts.append("</tr></thead><tbody>")
    for variant, table in document.get("summary", {}).items():
        for stat in ("mean", "median", "count"):
            parts.append(f"<tr>{_cell(variant)}{_cell(stat)}")
            parts += [_cell(table[k][stat] if k in table else None) for k in metric_keys]
            parts.append("</tr>")
    parts.append("</tbody></table></div>")
    # Samples.
    parts.append("<h2>Samples</h2><div class='wrap'><table class='sortable'><thead><tr>"
                 "<th data-nosort class='l'>picture</th><th class='l'>id</th>"
                 "<th class='l'>variant</th>")
    parts += [f"<th>{esc(k)}</th>" for k in metric_keys]
    parts.append("<th class='l'>errors</th></tr></thead><tbody>")
    for sample in samples:
        folder = sample_dir(viz_dir, sample["variant"], sample["id"])
        rel = folder.relative_to(viz_dir).as_posix()
        thumb = _data_url(folder / "thumb.jpg")
        picture = (f"<a href='{esc(rel)}/boxes.png'><img class='thumb' src='{thumb}' "
                   f"alt='boxes of {esc(sample['id'])}'></a>"
                   f"<a href='{esc(rel)}/alignment.png'>alignment</a> · "
                   f"<a href='{esc(rel)}/report.json'>report</a>" if thumb else "no picture")
        absent = sample.get("absent", {})
        grouped: dict[str, list[str]] = {}
        for key, value in sample.items():
            if key.endswith("_error"):
                grouped.setdefault(str(value), []).append(key.removesuffix("_error"))
        errors = "; ".join(f"{', '.join(f)}: {m}" for m, f in grouped.items())
        parts.append(f"<tr><td class='l'>{picture}</td>{_cell(sample['id'])}"
                     f"{_cell(sample['variant'])}")
        parts += [_cell(sample.get(k), absent.get(k)) for k in metric_keys]
        parts.append(f"<td class='err'>{esc(errors)}</td></tr>")
    parts.append("</tbody></table></div>")
    if document.get("skipped"):
        parts.append("<h2>Skipped pairs</h2><ul>")
        parts += [f"<li>{esc(s['variant'])} / {esc(s['id'])}: {esc(s['reason'])}</li>"
                  for s in document["skipped"]]
        parts.append("</ul>")
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    path = viz_dir / "index.html"
    write_atomic(path, "\n".join(parts).encode("utf-8"))
    return path
