"""The generic image-question benchmark reads real parquet (HF image structs), JSONL and CSV
files; bad rows become one-line skips, missing columns one DataError before anything runs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import png_bytes

from visioneval.benchmarks.vqa import data
from visioneval.benchmarks.vqa.benchmark import build
from visioneval.core import registry
from visioneval.core.records import Sample, SkippedRow
from visioneval.io.parquet import DataError, write_hf_parquet

EXAMPLE = Path(__file__).parent.parent / "examples" / "vqa" / "questions.jsonl"


def write_jsonl(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def image_file(folder: Path, name: str, color=(200, 30, 30)) -> str:
    (folder / "img").mkdir(parents=True, exist_ok=True)
    (folder / "img" / name).write_bytes(png_bytes(color))
    return f"img/{name}"


def run_items(benchmark) -> tuple[list[Sample], list[SkippedRow]]:
    items = list(benchmark.samples())
    return ([i for i in items if isinstance(i, Sample)],
            [i for i in items if isinstance(i, SkippedRow)])


def test_the_example_dataset_reads_as_twelve_choice_samples():
    benchmark = build({"data": str(EXAMPLE), "scorer": "choice", "group_col": "category"})
    samples, skipped = run_items(benchmark)
    assert len(samples) == 12 and not skipped and benchmark.total() == 12
    first = samples[0]
    assert first.id == "circle_red" and first.group == "colour" and first.target == "B"
    image, text = first.messages[0].parts
    assert image.mime == "image/png" and image.data == (EXAMPLE.parent / "images" /
                                                        "circle_red.png").read_bytes()
    assert text.splitlines()[1:3] == ["A. blue", "B. red"]
    assert first.metadata == {"file": "questions.jsonl", "row": 1,
                              "choices": ["blue", "red", "green", "yellow"]}


def test_parquet_with_hf_image_structs(tmp_path):
    rows = [{"image": {"bytes": png_bytes((i * 40, 0, 0)), "path": None},
             "question": f"q{i}", "answer": "blue" if i % 2 else "red",
             "options": json.dumps(["red", "blue"])} for i in range(5)]
    write_hf_parquet(tmp_path / "data" / "test-00000-of-00001.parquet", rows, ["image"])
    write_hf_parquet(tmp_path / "data" / "train-00000-of-00001.parquet", rows[:2], ["image"])
    benchmark = build({"data": str(tmp_path), "scorer": "choice", "choices_col": ["options"],
                       "split": "test"})
    samples, skipped = run_items(benchmark)
    assert not skipped and [s.target for s in samples] == ["A", "B", "A", "B", "A"]
    assert [s.id for s in samples] == [f"#{i}" for i in range(5)]
    assert samples[3].messages[0].parts[0].data == rows[3]["image"]["bytes"]
    plan = benchmark.plan()
    assert plan.dataset.files == {"data": ["data/test-00000-of-00001.parquet"]}
    assert plan.dataset.rows == {"data/test-00000-of-00001.parquet": 5}
    assert len(build({"data": str(tmp_path), "scorer": "exact"}).source.files) == 2
    with pytest.raises(DataError, match="no file of split 'validation'"):
        build({"data": str(tmp_path), "split": "validation"})


def test_parquet_raw_bytes_and_path_columns(tmp_path):
    path_cell = image_file(tmp_path, "a.png")
    table = pa.table({"img": [png_bytes(), None], "path": [None, path_cell],
                      "q": ["how many?", "how many?"], "n": [3, 4]})
    pq.write_table(table, tmp_path / "raw.parquet")
    samples, skipped = run_items(build({"data": str(tmp_path / "raw.parquet"), "scorer":
                                        "number", "image_col": "img", "question_col": "q",
                                        "answer_col": "n"}))
    assert [s.target for s in samples] == [3.0]
    assert [s.line() for s in skipped] == ["skipped raw.parquet row 2: column 'img' is empty"]


def test_csv_with_choice_columns_and_a_python_list(tmp_path):
    cell = image_file(tmp_path, "x.png")
    with open(tmp_path / "q.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["image", "question", "answer", "A", "B", "C", "choices", "id"])
        writer.writerow([cell, "Colour?", "C", "red", "blue", "green", "['x', 'y']", "r1"])
        writer.writerow([cell, "Shape?", "0", "circle", "square", "", "['x', 'y']", "r2"])
    samples, skipped = run_items(build({"data": str(tmp_path / "q.csv"), "scorer": "choice",
                                        "choices_col": ["A", "B", "C"]}))
    assert [(s.id, s.target, s.metadata["choices"]) for s in samples] == [
        ("r1", "C", ["red", "blue", "green"])]
    # CSV has no integers: "0" is text, neither an option nor a letter.
    assert [s.line() for s in skipped] == [
        "skipped q.csv row 2: column 'answer': '0' is not one of the options ('circle', "
        "'square'), their letter or index"]
    samples, _ = run_items(build({"data": str(tmp_path / "q.csv"), "scorer": "exact"}))
    assert [s.metadata["choices"] for s in samples] == [["x", "y"], ["x", "y"]]
    assert samples[0].messages[0].text() == "Colour?\nA. x\nB. y"  # no suffix for exact


def test_bad_rows_are_skipped_with_one_line_each(tmp_path):
    good = image_file(tmp_path, "good.png")
    (tmp_path / "img" / "cut.png").write_bytes(png_bytes()[:-20])
    (tmp_path / "img" / "text.png").write_text("not an image")
    rows = [
        {"image": good, "question": "q", "answer": "A", "choices": ["x", "y"]},
        {"image": "img/missing.png", "question": "q", "answer": "A", "choices": ["x", "y"]},
        {"image": "img/cut.png", "question": "q", "answer": "A", "choices": ["x", "y"]},
        {"image": "img/text.png", "question": "q", "answer": "A", "choices": ["x", "y"]},
        {"image": good, "question": "", "answer": "A", "choices": ["x", "y"]},
        {"image": good, "question": "q", "answer": "E", "choices": ["x", "y"]},
        {"image": good, "question": "q", "answer": "A", "choices": "x, y"},
        {"image": good, "question": "q", "answer": "A", "choices": ["x"]},
        "{not json",
        {"image": good, "question": "q", "choices": ["x", "y"]},
        {"image": good, "question": "q", "answer": "y", "choices": ["x", "y"]},
    ]
    write_jsonl(tmp_path / "q.jsonl", rows)
    samples, skipped = run_items(build({"data": str(tmp_path / "q.jsonl"), "scorer": "choice"}))
    assert [s.target for s in samples] == ["A", "B"]
    lines = [s.line() for s in skipped]
    assert lines[0] == "skipped q.jsonl row 2: column 'image': img/missing.png: no such file"
    assert lines[1].startswith("skipped q.jsonl row 3: column 'image': truncated image/png")
    assert lines[2].startswith("skipped q.jsonl row 4: column 'image': not a PNG, JPEG")
    assert lines[3] == "skipped q.jsonl row 5: column 'question' is empty or not text"
    assert lines[4] == ("skipped q.jsonl row 6: column 'answer': 'E' is not one of the "
                        "options ('x', 'y'), their letter or index")
    assert lines[5] == "skipped q.jsonl row 7: column 'choices' 'x, y' is not a JSON list"
    assert lines[6] == ("skipped q.jsonl row 8: column 'choices' has 1 option(s); a question "
                        "needs at least 2")
    assert lines[7].startswith("skipped q.jsonl row 9: not JSON (")
    assert lines[8] == "skipped q.jsonl row 10: column 'answer' is empty"
    assert len(lines) == 9


def test_a_missing_column_is_one_error_before_anything_runs(tmp_path):
    cell = image_file(tmp_path, "a.png")
    path = write_jsonl(tmp_path / "q.jsonl", [{"picture": cell, "question": "q", "answer": "a"}])
    with pytest.raises(DataError) as caught:
        build({"data": str(path)})
    message = str(caught.value)
    assert message.startswith(f"{path}: no column 'image' (name yours with --image-col")
    assert "\n" not in message
    assert len(run_items(build({"data": str(path), "image_col": "picture"}))[0]) == 1
    with pytest.raises(DataError, match="no column 'label'"):
        build({"data": str(path), "image_col": "picture", "group_col": "label"})
    with pytest.raises(DataError, match="the choice scorer needs options"):
        build({"data": str(path), "image_col": "picture", "scorer": "choice"})


def test_unknown_paths_and_a_judge_without_a_model_are_one_line_errors(tmp_path):
    with pytest.raises(DataError, match="no such file or folder"):
        build({"data": str(tmp_path / "nothing.jsonl")})
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DataError, match="not a .parquet, .jsonl or .csv file"):
        build({"data": str(tmp_path / "notes.txt")})
    with pytest.raises(DataError, match="no .parquet, .jsonl or .csv file in it"):
        build({"data": str(tmp_path)})
    with pytest.raises(ValueError, match="--scorer judge needs --judge-backend and"):
        build({"data": str(EXAMPLE), "scorer": "judge"})


def test_hub_ids_are_told_from_local_paths(tmp_path):
    assert data.hub_id("hf://lmms-lab/MMStar") == "lmms-lab/MMStar"
    assert data.hub_id("lmms-lab/MMStar") == "lmms-lab/MMStar"
    assert data.hub_id("examples/questions.jsonl") is None  # a data file that does not exist
    assert data.hub_id(str(EXAMPLE.parent)) is None
    assert data.hub_id("a/b/c") is None


def test_num_samples_ids_and_duplicates(tmp_path):
    cell = image_file(tmp_path, "a.png")
    rows = [{"image": cell, "question": "q", "answer": "a", "id": "same"} for _ in range(4)]
    write_jsonl(tmp_path / "q.jsonl", rows)
    benchmark = build({"data": str(tmp_path / "q.jsonl"), "num_samples": 3})
    samples, _ = run_items(benchmark)
    assert benchmark.total() == 3 and [s.id for s in samples] == ["same", "same#1", "same#2"]


def test_fingerprint_follows_data_files_and_image_files(tmp_path):
    cell = image_file(tmp_path, "a.png")
    write_jsonl(tmp_path / "q.jsonl", [{"image": cell, "question": "q", "answer": "a"}])
    options = {"data": str(tmp_path / "q.jsonl")}
    first = build(options).plan().dataset.fingerprint
    assert build(options).plan().dataset.fingerprint == first
    image_file(tmp_path, "a.png", color=(0, 0, 255))
    second = build(options).plan().dataset.fingerprint
    assert second != first
    write_jsonl(tmp_path / "q.jsonl", [{"image": cell, "question": "q?", "answer": "a"}])
    assert build(options).plan().dataset.fingerprint not in (first, second)


def test_registry_builds_it_from_recorded_options():
    definition = registry.definition("vqa")
    assert definition.command_options is not None
    options = definition.command_options(data=str(EXAMPLE), scorer="choice")
    benchmark = definition.from_command(options)
    assert benchmark.name == "vqa" and benchmark.builtin_models == ("random",)  # choice
    again = registry.build("vqa", benchmark.plan().options)
    assert [s.id for s in again.samples()] == [s.id for s in benchmark.samples()]


def test_parquet_structs_holding_only_a_path_are_read_and_fingerprinted(tmp_path):
    cell = image_file(tmp_path, "p.png")
    write_hf_parquet(tmp_path / "s.parquet", [{"image": {"bytes": None, "path": cell},
                                               "question": "q", "answer": "a"}], ["image"])
    options = {"data": str(tmp_path / "s.parquet")}
    samples, skipped = run_items(build(options))
    assert not skipped and samples[0].messages[0].parts[0].data == (tmp_path / cell).read_bytes()
    first = build(options).plan().dataset.fingerprint
    image_file(tmp_path, "p.png", color=(1, 2, 3))
    assert build(options).plan().dataset.fingerprint != first


def test_a_hub_id_that_cannot_be_fetched_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # HF_HUB_OFFLINE=1 (conftest): nothing is downloaded
    with pytest.raises(DataError) as caught:
        build({"data": "nobody-here/no-such-vqa-set"})
    message = str(caught.value)
    assert message.startswith("cannot download nobody-here/no-such-vqa-set from the Hugging "
                              "Face Hub")
    assert message.endswith("pass --data with a local file or folder") and "\n" not in message


def test_the_example_files_are_what_the_script_writes(tmp_path):
    import importlib.util

    from PIL import Image as PILImage

    spec = importlib.util.spec_from_file_location("make_example",
                                                  EXAMPLE.parent / "make_example.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    assert (tmp_path / "questions.jsonl").read_text() == EXAMPLE.read_text()
    shipped = sorted(p.name for p in (EXAMPLE.parent / "images").iterdir())
    assert shipped == sorted(p.name for p in (tmp_path / "images").iterdir())
    assert len(shipped) == 12
    for name in shipped:
        with PILImage.open(tmp_path / "images" / name) as made, \
                PILImage.open(EXAMPLE.parent / "images" / name) as kept:
            assert made.tobytes() == kept.tobytes()
