"""Pictures that show why a sample scores what it does (matplotlib, Agg backend).

Per sample, under `{viz_dir}/{variant}/{id}/`:
- `boxes.png`: the GT render with the GT boxes and the generated render with the
  generated boxes. Boxes paired by CANVAS's Hungarian matching share a colour, taken
  from a red-orange-green scale of their IoU, and a number when there are few enough to
  read; unmatched boxes are dashed magenta with an x through them. Pairs below IoU 0.5
  count as matched for CANVAS's metric but not for the iou50 scores.
- `alignment.png`: the alignment groups on both renders, vertical ones (x_*) and
  horizontal ones (y_*) in separate rows, each drawn as a line along the shared coordinate
  through its members, coloured by type; solid when matched to a group of the same type
  (counted correct), dashed otherwise.
- `thumb.jpg`: a small copy of `boxes.png` for the index page.
- `report.json`: matched pairs (names, types, IoU), unmatched boxes, alignment groups.
"""

# Imports inside functions: matplotlib loads in the metric workers only, where the pictures are
# drawn; the main process imports this module for its paths alone.

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image as PILImage

from visioneval.canvas.metrics.alignment import TYPES, edges
from visioneval.canvas.metrics.pixels import load_rgb
from visioneval.io.images import open_to_decode

if TYPE_CHECKING:
    from visioneval.canvas.context import Context
    from visioneval.canvas.figma import Layout

TYPE_COLOURS = {"x_left": "#1f77b4", "x_center": "#17becf", "x_right": "#2ca02c",
                "y_top": "#ff7f0e", "y_center": "#d62728", "y_bottom": "#9467bd"}
UNMATCHED = "#e000e0"
MAX_LABELS = 40


def IOU_CMAP():  # noqa: N802 - a constant, built lazily (matplotlib loads in workers only)
    """Red (IoU 0) -> orange -> olive -> green (1): no pale middle, so every outline
    stays visible on the faded render."""
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list(
        "iou", [(0.0, "#d7191c"), (0.4, "#f28c28"), (0.6, "#9a9a00"), (1.0, "#138a36")])


def safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text) or "_"


def sample_dir(viz_dir: Path, variant: str, sample_id: str) -> Path:
    return viz_dir / safe_name(variant) / safe_name(sample_id)


def _figure(images: list[Any]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratio = sum(im.width / im.height for im in images if im is not None) or 2.0
    fig, axes = plt.subplots(1, 2, figsize=(min(18, 1.6 + 5.0 * ratio), 6.0), dpi=100,
                             squeeze=True)
    # Fixed margins, not a layout engine: constrained layout draws the figure (and
    # resamples every image) one extra time.
    fig.subplots_adjust(left=0.01, right=0.93, top=0.88, bottom=0.06, wspace=0.04)
    return plt, fig, axes


def _panel(ax, image, title: str) -> tuple[float, float]:
    if image is not None:
        w, h = image.width, image.height
        ax.imshow(_faded(image), extent=(0, w, h, 0), interpolation="none")
    else:
        w, h = 1000.0, 1000.0
        ax.set_facecolor("#eeeeee")
        ax.text(0.5, 0.5, "no image", transform=ax.transAxes, ha="center")
    # A small margin, so outlines and alignment lines on the frame's edges stay visible.
    pad = 0.02 * max(w, h)
    ax.set_xlim(-pad, w + pad)
    ax.set_ylim(h + pad, -pad)
    for spine in ax.spines.values():
        spine.set_visible(False)
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((0, 0), w, h, fill=False, edgecolor="#999999", linewidth=0.6))
    ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    return w, h


def _faded(image):
    """The render shrunk to about the size it is shown at and blended towards white, so
    the outlines' colours are not confused with the design's own fills (doing both in
    Pillow first is ~10x cheaper than matplotlib's alpha resampling)."""
    small = image.copy()
    small.thumbnail((720, 720))
    return np.asarray(PILImage.blend(small, PILImage.new("RGB", small.size, "white"), 0.65))


def _rect(ax, box, size, colour, style="-", width=1.8, cross=False, alpha=1.0):
    from matplotlib.patches import Rectangle

    w, h = size
    x, y, bw, bh = box[0] * w, box[1] * h, box[2] * w, box[3] * h
    ax.add_patch(Rectangle((x, y), bw, bh, fill=False, edgecolor=colour, linestyle=style,
                           linewidth=width, alpha=alpha))
    if cross:
        ax.plot([x, x + bw], [y, y + bh], color=colour, linewidth=0.8, alpha=0.8)
        ax.plot([x, x + bw], [y + bh, y], color=colour, linewidth=0.8, alpha=0.8)


def _fmt(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "-"


def draw_sample(ctx: Context, viz_dir: Path) -> str | None:
    """Write the sample's pictures; returns their folder relative to viz_dir (None when a
    layout file could not be read: its error is already recorded)."""
    if ctx.gt is None or ctx.gen is None:
        return None
    out_dir = sample_dir(viz_dir, ctx.pair.variant, ctx.pair.id)
    out_dir.mkdir(parents=True, exist_ok=True)
    gt_image, gen_image = ctx.gt_image, ctx.gen_image
    if gt_image is None or gen_image is None:  # the pixel family failed; try each alone

        def attempt(path):
            try:
                return load_rgb(path)
            except ValueError:
                return None

        gt_image = gt_image or attempt(ctx.pair.gt_image)
        gen_image = gen_image or attempt(ctx.pair.gen_image)
    gt, gen = ctx.gt, ctx.gen
    _boxes_png(ctx, gt, gen, gt_image, gen_image, out_dir)
    _alignment_png(ctx, gt, gen, gt_image, gen_image, out_dir)
    _report(ctx, gt, gen, out_dir)
    return str(out_dir.relative_to(viz_dir))


def _boxes_png(ctx: Context, gt: Layout, gen: Layout, gt_image, gen_image,
               out_dir: Path) -> None:
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    match = ctx.extras.get("match")
    plt, fig, (ax_gt, ax_gen) = _figure([gt_image, gen_image])
    o = ctx.out
    fig.suptitle(
        f"{ctx.pair.id} ({ctx.pair.variant})   CANVAS: matched {o.get('num_matched', '-')} of "
        f"{o.get('num_gt', '-')} GT / {o.get('num_gen', '-')} gen, mean IoU "
        f"{_fmt(o.get('mean_iou'))}, P {_fmt(o.get('precision'))}, R {_fmt(o.get('recall'))}"
        f"   |   IoU>=0.5: P {_fmt(o.get('iou50_precision'))}, "
        f"R {_fmt(o.get('iou50_recall'))}, F1 {_fmt(o.get('iou50_f1'))}", fontsize=10)
    size_gt = _panel(ax_gt, gt_image, f"ground truth: {len(gt)} boxes")
    size_gen = _panel(ax_gen, gen_image, f"generated: {len(gen)} boxes")
    cmap = IOU_CMAP()
    gt_matched = np.zeros(len(gt), np.bool_)
    gen_matched = np.zeros(len(gen), np.bool_)
    if match is not None and len(match.gt):
        gt_matched[match.gt] = True
        gen_matched[match.gen] = True
        ious = match.pair_iou
        # Big boxes first so small ones are drawn on top.
        order = np.argsort(-(gt.xywh[match.gt, 2] * gt.xywh[match.gt, 3]))
        label = len(order) <= MAX_LABELS
        for rank, k in enumerate(order):
            colour = cmap(float(ious[k]))
            style = "-" if ious[k] >= 0.5 else (0, (4, 2))
            _rect(ax_gt, gt.xywh[match.gt[k]], size_gt, colour, style)
            _rect(ax_gen, gen.xywh[match.gen[k]], size_gen, colour, style)
            if label:  # the pair's number at the centre of both boxes
                for ax, box, size in ((ax_gt, gt.xywh[match.gt[k]], size_gt),
                                      (ax_gen, gen.xywh[match.gen[k]], size_gen)):
                    ax.text((box[0] + box[2] / 2) * size[0], (box[1] + box[3] / 2) * size[1],
                            str(rank + 1), fontsize=8, ha="center", va="center",
                            color="white", fontweight="bold",
                            bbox={"facecolor": colour, "edgecolor": "none", "pad": 1.5,
                                  "alpha": 0.9})
    for ax, layout, matched, size, what in ((ax_gt, gt, gt_matched, size_gt, "missing"),
                                            (ax_gen, gen, gen_matched, size_gen, "extra")):
        for i in np.flatnonzero(~matched):
            _rect(ax, layout.xywh[i], size, UNMATCHED, (0, (3, 2)), 1.6, cross=True)
        if (~matched).any():
            ax.text(0.01, -0.01, f"{int((~matched).sum())} {what} (dashed magenta, x)",
                    transform=ax.transAxes, va="top", fontsize=8, color=UNMATCHED)
    bar = fig.colorbar(ScalarMappable(Normalize(0, 1), cmap),
                       cax=fig.add_axes((0.945, 0.1, 0.012, 0.74)))
    bar.set_label("IoU of the matched pair (dashed: < 0.5)", fontsize=8)
    bar.ax.axhline(0.5, color="black", linewidth=0.8)
    path = out_dir / "boxes.png"
    fig.savefig(path)
    plt.close(fig)
    _thumb(path, out_dir / "thumb.jpg")


def _alignment_png(ctx: Context, gt: Layout, gen: Layout, gt_image, gen_image,
                   out_dir: Path) -> None:
    """Rows: vertical alignments (x_*), then horizontal ones (y_*); columns: GT, generated.
    A group is drawn as a line along its shared coordinate, spanning its members, with a
    dot on each member: solid when matched to a group of the same type, dashed otherwise.
    (The metric matches groups on their union boxes; lines show the alignment itself
    without a hundred overlapping rectangles.)"""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    groups = ctx.extras.get("groups")
    if groups is None:
        return
    gt_groups, gen_groups, match = groups
    images = [gt_image, gen_image]
    ratio = sum(im.width / im.height for im in images if im is not None) or 2.0
    fig, axes = plt.subplots(2, 2, figsize=(min(18, 1.6 + 5.0 * ratio), 11.0), dpi=100,
                             )
    fig.subplots_adjust(left=0.01, right=0.99, top=0.93, bottom=0.05, wspace=0.04,
                        hspace=0.1)
    o = ctx.out
    fig.suptitle(
        f"{ctx.pair.id} alignment groups (grid of 0.02, >= 2 members): "
        f"{o.get('num_correct_aligned', '-')} matched with the same type, of "
        f"{len(gt_groups)} GT and {len(gen_groups)} generated groups   "
        f"P {_fmt(o.get('alignment_precision'))}, R {_fmt(o.get('alignment_recall'))}, "
        f"F1 {_fmt(o.get('alignment_f1'))}", fontsize=10)
    ok_gt = np.zeros(len(gt_groups), np.bool_)
    ok_gen = np.zeros(len(gen_groups), np.bool_)
    ok_gt[match.gt[match.correct]] = True
    ok_gen[match.gen[match.correct]] = True
    sides = ((gt_image, gt, gt_groups, ok_gt, "ground truth"),
             (gen_image, gen, gen_groups, ok_gen, "generated"))
    for row, (axis_name, kinds) in enumerate((("vertical (x_left, x_center, x_right)",
                                               (0, 1, 2)),
                                              ("horizontal (y_top, y_center, y_bottom)",
                                               (3, 4, 5)))):
        for col, (image, layout, groups_, ok, label) in enumerate(sides):
            ax = axes[row][col]
            w, h = _panel(ax, image, f"{label}: {axis_name}")
            coords = edges(layout.xywh)
            segments, colours, styles, widths, dots, dot_colours = [], [], [], [], [], []
            for g in range(len(groups_)):
                kind = int(groups_.kind[g])
                if kind not in kinds:
                    continue
                members = groups_.members[g]
                colour = TYPE_COLOURS[TYPES[kind]]
                at = float(np.mean(coords[members, kind]))
                box = groups_.box[g]
                if kind < 3:  # a vertical line at x, from the top to the bottom member
                    segments.append([(at * w, box[1] * h), (at * w, (box[1] + box[3]) * h)])
                    mx, my = coords[members, kind] * w, coords[members, 4] * h
                else:
                    segments.append([(box[0] * w, at * h), ((box[0] + box[2]) * w, at * h)])
                    mx, my = coords[members, 1] * w, coords[members, kind] * h
                colours.append(colour)
                styles.append("-" if ok[g] else (0, (3, 2)))
                widths.append(2.0 if ok[g] else 1.2)
                dots += list(zip(mx, my, strict=True))
                dot_colours += [colour] * len(members)
            if segments:
                ax.add_collection(LineCollection(segments, colors=colours, linestyles=styles,
                                                 linewidths=widths, alpha=0.9))
                d = np.asarray(dots)
                ax.scatter(d[:, 0], d[:, 1], s=9, c=dot_colours, zorder=3)
    handles = [Line2D([], [], color=c, label=t) for t, c in TYPE_COLOURS.items()]
    handles += [Line2D([], [], color="grey", linewidth=2, label="matched, same type"),
                Line2D([], [], color="grey", linestyle=(0, (3, 2)),
                       label="unmatched or other type")]
    fig.legend(handles=handles, loc="lower center", ncol=8, fontsize=8,
               frameon=False)
    fig.savefig(out_dir / "alignment.png")
    plt.close(fig)


def _thumb(source: Path, target: Path, width: int = 360) -> None:
    with open_to_decode(source, str(source)) as im:  # its pixels counted before decoding
        rgb = im.convert("RGB")
        rgb.thumbnail((width, width))
        buf = io.BytesIO()
        rgb.save(buf, format="JPEG", quality=80)
    target.write_bytes(buf.getvalue())


def _box_info(layout, i: int) -> dict[str, Any]:
    b = layout.boxes[i]
    return {"id": b.id, "name": b.name, "type": b.type, "depth": b.depth,
            "x": round(b.x, 4), "y": round(b.y, 4), "w": round(b.w, 4), "h": round(b.h, 4)}


def _report(ctx: Context, gt: Layout, gen: Layout, out_dir: Path) -> None:
    report: dict[str, Any] = {"id": ctx.pair.id, "variant": ctx.pair.variant}
    match = ctx.extras.get("match")
    if match is not None:
        report["matched_pairs"] = [
            {"gt": _box_info(gt, int(i)), "gen": _box_info(gen, int(j)),
             "iou": round(float(v), 4)}
            for i, j, v in zip(match.gt, match.gen, match.pair_iou, strict=True)]
        report["unmatched_gt"] = [_box_info(gt, i) for i in
                                  sorted(set(range(len(gt))) - set(match.gt.tolist()))]
        report["unmatched_gen"] = [_box_info(gen, j) for j in
                                   sorted(set(range(len(gen))) - set(match.gen.tolist()))]
    groups = ctx.extras.get("groups")
    if groups is not None:
        gt_groups, gen_groups, gm = groups
        report["alignment_pairs"] = [
            {"gt": gt_groups.type_names()[i], "gen": gen_groups.type_names()[j],
             "iou": round(float(v), 4), "correct": bool(c)}
            for i, j, v, c in zip(gm.gt, gm.gen, gm.iou, gm.correct, strict=True)]
    (out_dir / "report.json").write_text(json.dumps(report, indent=1))
