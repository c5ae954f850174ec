"""`visioneval rescore --from lmms-eval` on IllusionBench logs in lmms-eval's own format:
labels joined from the data lmms-eval read (its log keeps none), both prompt families
(main's original prompts, commit 5917cab6's "Answer:" prompts), every protocol worked out
by hand, sample ids as a real run's, and the log's own scores checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import invoke, journal, load
from helpers import png_bytes
from lmms_logs import line, write

from visioneval.benchmarks.illusionbench.lmms_eval_data import lmms_keeps
from visioneval.benchmarks.illusionbench.prompts import lmms_prompt, original_prompt
from visioneval.benchmarks.illusionbench.protocols import lmms_recall, lmms_strict
from visioneval.io.parquet import write_hf_parquet

ICON_ROWS = ["animal-1-Ocean-Easy-1.25-1.png",
             "not-a-name.png",  # lmms-eval's process_docs drops it: doc_ids skip it
             "vehicle-2-City-Hard-0.85-7.png",
             "sport-3-Cloud-Medium-1.0-3.png",  # lmms-eval keeps it; visioneval reads no Medium
             "animal-1-Ocean-Easy-1.25-1.png",  # the same name again: a run calls it #4
             "stationary-4-Medieval_Village-Easy-1.4-2.png"]
LOGO_ROWS = ["bmw-Forest-Easy-1.25-5.png", "nike-Sand_dune-Hard-0.85-6.png",
             "benz-Museum-Easy-1.4-9.png"]
FAILED = "[LMMS_EVAL_REQUEST_FAILED after 3 retries] timeout"
# lmms-eval main's ICON shape prompt, as its arshia_utils._build_shape_prompt writes it.
LMMS_MAIN_ICON_SHAPE = (
    "This image contains a icon integrated into a background, where elements of the "
    "background contribute to forming the icon. Identify the icon that is represented in the "
    "image by choosing exclusively among the following options:Animal, Face_Emoji, Music, "
    "Sport, Stationery, Vehicle,Ocean, Origami, Forest, Cloud, Sand_dune, Medieval_Village, "
    "City, Underwater_ruins, Museum, Bazaar_market, Time_square Provide your response by "
    "stating only the single, most accurate class name that represents the icon. You have "
    "to respond with a single word.")


def data(folder: Path, file_names: dict[str, str]) -> Path:
    for subset, rows in (("ICON", ICON_ROWS), ("LOGO", LOGO_ROWS)):
        write_hf_parquet(folder / file_names[subset].format(subset=subset, low=subset.lower()),
                         [{"image_name": n, "image": {"bytes": png_bytes(), "path": n}}
                          for n in rows], ["image"])
    return folder


def lmms_data(folder: Path) -> Path:
    """The files lmms-eval's yamls read (illusion_<subset>_test100.parquet)."""
    name = "illusionbench/illusion_{low}_test100.parquet"
    return data(folder, {"ICON": name, "LOGO": name})


def log_lines(version: str, subset: str, task: str, family: str,
              answers: dict[int, str], labels: dict[int, str]) -> list[dict]:
    prompt = original_prompt(subset, task) if family == "original" else \
        lmms_prompt(subset, task)
    rule = lmms_recall if family == "original" else lmms_strict
    return [line(version, doc, "", text, prompt,
                 {f"{task}_recall": int(rule(text, labels.get(doc, "?"))[1])})
            for doc, text in answers.items()]


def logs(folder: Path) -> Path:
    """ICON shape and scene as lmms-eval main logs them (original prompts, recall), LOGO
    shape as commit 5917cab6 did ("Answer:" prompts, strict match)."""
    icon_shapes = {0: "animal", 1: "vehicle", 2: "sport", 3: "animal", 4: "stationary"}
    icon_scenes = {0: "Ocean", 1: "City", 2: "Cloud", 3: "Ocean", 4: "Medieval_Village"}
    write(folder / "20260301_000000_samples_unig2u_illusionbench_arshia_icon_shape_test.jsonl",
          log_lines("0.7", "ICON", "shape", "original",
                    {0: "Animal", 1: "City", 2: "Sport", 3: "animal", 4: "Stationery",
                     5: "Animal"}, icon_shapes))
    write(folder / "20260301_000000_samples_unig2u_illusionbench_arshia_icon_scene_test.jsonl",
          log_lines("0.7", "ICON", "scene", "original",
                    {0: "Ocean", 1: "Vehicle", 3: FAILED, 4: "Medieval Village"}, icon_scenes))
    write(folder / "20260118_000000_samples_illusionbench_arshia_logo_shape_test.jsonl",
          log_lines("0.4", "LOGO", "shape", "lmms",
                    {0: "Answer: BMW", 1: "nike", 2: "Answer: Mercedes Benz"},
                    {0: "bmw", 1: "nike", 2: "benz"}))
    return folder


def test_lmms_eval_main_prompt_is_ours_verbatim():
    assert original_prompt("ICON", "shape") == LMMS_MAIN_ICON_SHAPE


def test_process_docs_rule():
    assert [lmms_keeps(n) for n in ICON_ROWS] == [True, False, True, True, True, True]
    assert lmms_keeps("dir/bmw-1-Cloud-EASY-1.25-1.jpg")
    assert not lmms_keeps("Easy-Cloud-1.png") and not lmms_keeps("-Cloud-Easy-1.png")
    assert not lmms_keeps("") and not lmms_keeps(None)


def test_every_protocol_by_hand_labels_from_the_data(tmp_path):
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", logs(tmp_path / "logs" / "m"),
                    "--data-dir", lmms_data(tmp_path / "data"), "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    err = result.stderr.replace("\n", " ")
    assert "image_name sport-3-Cloud-Medium-1.0-3.png" in err  # skipped, with its line
    assert "doc_id 5" in err and "past the 5 rows lmms-eval keeps" in err
    metrics = load(out)
    icon = metrics["original"]["ICON"]
    assert icon["shape"]["n"] == 4 and icon["shape_recall"] == pytest.approx(2 / 4)
    assert (icon["scene"]["n"], icon["scene"]["n_errors"]) == (3, 1)
    assert icon["scene_recall"] == pytest.approx(1 / 3)  # "Medieval Village" is rest
    # The quirks fixed: "Stationery" names `stationary`, "medieval village" the scene.
    assert icon["quirks"]["shape_recall"] == pytest.approx(3 / 4)
    assert icon["quirks"]["scene_recall"] == pytest.approx(2 / 3)
    recall = metrics["lmms-recall"]["ICON"]
    assert recall["shape_recall"] == pytest.approx(2 / 4)
    assert recall["scene_recall"] == pytest.approx(2 / 3)
    assert metrics["lmms-strict"]["LOGO"]["shape_recall"] == pytest.approx(1 / 3)
    # No answer to a family's prompt: that protocol's recall is absent with a reason.
    assert "shape_recall" not in metrics["lmms-strict"]["ICON"]
    assert "unavailable" in metrics["lmms-strict"]["ICON"]["shape"]
    assert "shape_recall" not in metrics["original"]["LOGO"]

    records = {r["id"]: r for r in journal(out)}
    dup = records["ICON/animal-1-Ocean-Easy-1.25-1.png/shape/original#4"]
    assert dup["metadata"]["row"] == 4 and dup["metadata"]["lmms_eval"]["doc_id"] == 3
    assert dup["target"] == {"shape": "animal", "scene": "Ocean"}
    logo = records["LOGO/benz-Museum-Easy-1.4-9.png/shape/lmms"]
    assert logo["parsed"] == {"lmms-strict": "Mercedes Benz"}
    assert logo["metadata"]["family"] == "lmms" and logo["metadata"]["difficulty"] == "Easy"
    info = load(out, "run.json")
    assert info["options"]["subsets"] == ["ICON", "LOGO"] and info["options"]["protocol"] == "all"
    assert info["generation"] == {"temperature": 0.0, "max_tokens": 64, "seed": None}
    checks = info["rescored_from"]["checks"]
    assert checks["lmms_eval_score"] == {"compared": 11, "differ": 0}
    assert checks["prompt_families"] == {"original": 8, "lmms": 3}
    assert checks["prompts_not_verbatim"] == 0
    assert info["dataset"]["data_rows"] == {"ICON": 5, "LOGO": 3}


def test_ids_are_a_real_runs_and_both_open_in_compare(tmp_path):
    real_data = data(tmp_path / "real-data", {"ICON": "data/Illusion_{subset}-00000-of-00001"
                                              ".parquet", "LOGO": "data/Illusion_{subset}-"
                                              "00000-of-00001.parquet"})
    real = tmp_path / "real"
    result = invoke("illusionbench", "--backend", "builtin", "--model", "random",
                    "--data-dir", real_data, "--subsets", "ICON,LOGO", "--out", real,
                    "--no-progress", "--no-report")
    assert result.exit_code == 0, result.output
    rescored = tmp_path / "rescored"
    assert invoke("rescore", "--from", "lmms-eval", logs(tmp_path / "logs" / "m"),
                  "--data-dir", lmms_data(tmp_path / "data"), "--out",
                  rescored).exit_code == 0
    real_ids = {r["id"] for r in journal(real)}
    rescored_records = journal(rescored)
    assert len(rescored_records) == 11
    assert {r["id"] for r in rescored_records} <= real_ids
    compared = invoke("compare", real, rescored)
    assert compared.exit_code == 0, compared.output
    rows = [ln.split()[:2] for ln in compared.stdout.splitlines()]
    assert ["m", "original"] in rows and ["random", "original"] in rows
    assert invoke("report", rescored).exit_code == 0
    page = (rescored / "report.html").read_text()
    assert "rescored_from" in page and "kkv233/unig2u_dataset" not in page  # given --data-dir
    assert "unig2u_illusionbench_arshia_icon_shape_test" in page


def test_data_that_is_not_what_lmms_eval_read_is_noticed(tmp_path):
    wrong = tmp_path / "wrong"
    rows = list(reversed(LOGO_ROWS))
    write_hf_parquet(wrong / "illusion_logo_test100.parquet",
                     [{"image_name": n, "image": {"bytes": png_bytes(), "path": n}}
                      for n in rows], ["image"])
    folder = logs(tmp_path / "logs" / "m")
    for other in folder.glob("*icon*"):
        other.unlink()
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", folder, "--data-dir", wrong, "--out",
                    out, "--no-report")
    assert result.exit_code == 0
    assert load(out, "run.json")["rescored_from"]["checks"]["lmms_eval_score"] == \
        {"compared": 3, "differ": 1}  # BMW now meets the benz row
    assert "the data may not be the file lmms-eval read" in result.stderr.replace("\n", " ")


def test_without_data_offline_says_how_to_give_it(tmp_path):
    result = invoke("rescore", "--from", "lmms-eval", logs(tmp_path / "logs" / "m"),
                    "--out", tmp_path / "run")
    assert result.exit_code == 2
    assert "--data-dir" in result.stderr and "kkv233/unig2u_dataset" in result.stderr
    assert not (tmp_path / "run").exists()


def test_other_benchmarks_of_the_name_and_mixed_logs(tmp_path):
    folder = tmp_path / "m"
    write(folder / "20260301_000000_samples_illusionbench_all.jsonl", [{"doc_id": 0}])
    result = invoke("rescore", "--from", "lmms-eval", folder)
    assert result.exit_code == 2 and "arXiv 2501.00848" in result.stderr.replace("\n", " ")
    (folder / "20260301_000000_samples_illusionbench_all.jsonl").unlink()
    write(folder / "20260301_000000_samples_unig2u_illusionbench_arshia_icon_shape_visual_cot"
          ".jsonl", [{"doc_id": 0}])
    result = invoke("rescore", "--from", "lmms-eval", folder)
    assert result.exit_code == 2 and "visual chain-of-thought" in result.stderr
    for stale in folder.iterdir():
        stale.unlink()
    logs(folder)
    write(folder / "20250801_101010_samples_p3.jsonl", [line("0.7", 0, "color", "color", "q",
                                                             {})])
    result = invoke("rescore", "--from", "lmms-eval", folder, "--data-dir",
                    lmms_data(tmp_path / "data"))
    assert result.exit_code == 2
    assert "--benchmark salbench or --benchmark illusionbench" in result.stderr.replace("\n", " ")
    out = tmp_path / "run"
    result = invoke("rescore", "--from", "lmms-eval", folder, "--benchmark", "salbench",
                    "--out", out, "--no-report")
    assert result.exit_code == 0, result.output
    assert "left out" in result.stderr and load(out, "run.json")["benchmark"] == "salbench"


def test_a_data_folder_that_mixes_files_or_lacks_names_is_refused(tmp_path):
    folder = logs(tmp_path / "logs" / "m")
    mixed = lmms_data(tmp_path / "mixed")
    data(mixed, {"ICON": "data/Illusion_{subset}-00000-of-00001.parquet",
                 "LOGO": "other/illusion_{low}_extra.parquet"})
    result = invoke("rescore", "--from", "lmms-eval", folder, "--data-dir", mixed)
    assert result.exit_code == 2
    assert "holds both the full ICON split" in result.stderr.replace("\n", " ")
    nameless = tmp_path / "nameless"
    for subset in ("icon", "logo"):
        write_hf_parquet(nameless / f"illusion_{subset}_test100.parquet",
                         [{"name": "x", "image": {"bytes": png_bytes(), "path": "x"}}],
                         ["image"])
    result = invoke("rescore", "--from", "lmms-eval", folder, "--data-dir", nameless)
    assert result.exit_code == 2 and "no image_name column" in result.stderr
