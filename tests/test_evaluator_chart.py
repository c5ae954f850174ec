"""The pass-rate chart of `visioneval evaluate`: every evaluator's label legible, none
overlapping another, however many evaluators and however long their names."""

from __future__ import annotations

from visioneval.report import charts

LABELS = ["judge:image-description", "judge:structured-output", "validator:count",
          "validator:chart", "validator:ocr", "validator:json",
          "script:python3 mentions_shelf.py", "validator:count@0.5",
          "script:uv run --with numpy /home/someone/evaluators/check_the_chart_figures.py"]


def _label_boxes(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    ticks = ax.get_yticklabels() + ax.get_xticklabels()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in ticks if t.get_text()]


def _overlaps(boxes) -> list[tuple[str, str]]:
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
            if box_a.overlaps(box_b)]


def test_evaluator_labels_do_not_overlap():
    fig = charts.evaluator_figure(LABELS, [50.0, None, 100.0, 0.0, 75.0, 12.5, 33.3, 100.0,
                                           80.0], "pass rate (errors excluded)")
    boxes = _label_boxes(fig)
    assert {t.replace("\n", " ") for t, _ in boxes} >= {LABELS[0], LABELS[6]}
    assert not _overlaps(boxes)
    width = fig.get_size_inches()[0] * fig.dpi
    assert all(box.x0 >= -width for _, box in boxes)  # inside what bbox_inches keeps
    svg = charts.evaluator_bars(LABELS, [50.0] * len(LABELS), "t")
    assert svg.startswith("<svg") and "judge:image-description" in svg and "n/a" not in svg
