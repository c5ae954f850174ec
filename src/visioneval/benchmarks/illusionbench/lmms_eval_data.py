"""Which IllusionBench row each lmms-eval `doc_id` is.

lmms-eval's IllusionBench log keeps neither the image name nor a label: `doc` is dropped
(v0.4 on), `doc_to_target` returns "" and `process_results` logs only a 0/1 recall. The
labels live in the image names of the data lmms-eval read, so the log is joined with it:
the task yamls (`illusionbench_arshia_<subset>_<task>_test.yaml`) read one parquet file per
subset, `illusion_<subset>_test100.parquet` (hf://datasets/kkv233/unig2u_dataset/
illusionbench/ on main; a local copy at commit 5917cab6), and `process_docs` keeps the rows
whose `image_name` its `parse_image_name` reads, in order; `doc_id` counts those rows.

Only the `image_name` column is read: the index holds a row number and a name per row."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from visioneval.benchmarks.illusionbench import names
from visioneval.io import parquet
from visioneval.io.parquet import DataError

HF_REPO = "kkv233/unig2u_dataset"
_HF_URL = re.compile(r"hf://datasets/(?P<repo>[^/]+/[^/]+)/(?P<path>.+)")
_DIFFICULTY_TOKENS = frozenset({"easy", "medium", "hard"})
_IMAGE_SUFFIX = re.compile(r"\.(png|jpg|jpeg|webp)$", re.IGNORECASE)


def hf_file(subset: str) -> str:
    """The file lmms-eval main's yaml reads for a subset, inside HF_REPO."""
    return f"illusionbench/illusion_{subset.lower()}_test100.parquet"


def lmms_keeps(image_name: Any) -> bool:
    """Whether lmms-eval's `process_docs` keeps a row: its `parse_image_name` finds a
    difficulty token (easy, medium or hard, any case) after at least one field, and a
    non-empty scene before it and shape (a trailing all-digit field dropped) before that."""
    if not isinstance(image_name, str) or not image_name:
        return False
    base = _IMAGE_SUFFIX.sub("", image_name.rsplit("/", 1)[-1])
    parts = [p for p in base.split("-") if p]
    at = next((i for i, p in enumerate(parts) if p.lower() in _DIFFICULTY_TOKENS), None)
    if at is None or at < 1:
        return False
    shape = parts[:at - 1]
    if len(shape) >= 2 and re.fullmatch(r"\d+", shape[-1]):
        shape = shape[:-1]
    return bool("-".join(shape)) and bool(parts[at - 1])


@dataclass(frozen=True)
class Doc:
    """The data row behind a doc_id, and the id suffix a run gives a repeated name."""

    row: int
    image_name: str
    suffix: str  # "#<row>" when an earlier row of the subset has the same name


@dataclass(frozen=True)
class SubsetData:
    """The data files lmms-eval read for one subset and its docs in doc_id order."""

    files: list[Path]
    docs: list[Doc]


def index(files: list[Path]) -> list[Doc]:
    """lmms-eval's docs of these files: the rows it keeps, numbered as it numbers them. A
    name repeated in the data gets `#<row>` after its first row whose name visioneval
    reads, as a visioneval run names it."""
    for path in files:
        if parquet.missing_columns(path, ("image_name",)):
            raise DataError(f"{path} has no image_name column (lmms-eval's IllusionBench "
                            "data has image_name and image)")
    docs: list[Doc] = []
    seen: set[str] = set()
    for row in parquet.iter_rows(files, ("image_name",)):
        name = row.values.get("image_name")
        if not lmms_keeps(name):
            continue
        name = str(name).strip()
        suffix = "#" + str(row.index) if name in seen else ""
        if _reads(name):
            seen.add(name)
        docs.append(Doc(row.index, name, suffix))
    return docs


def _reads(name: str) -> bool:
    """Whether visioneval's own name parser reads `name` in some subset (its rows become
    samples, so they count for repeated names)."""
    for subset in names.PATTERNS:
        try:
            names.parse(subset, name)
            return True
        except names.BadImageName:
            continue
    return False


def locate(subset: str, data_dir: Path | None, data_files: Any) -> tuple[list[Path], str]:
    """(the subset's parquet files, where they came from): under `data_dir` (files named
    illusion_<subset>_... or Illusion_<SUBSET>-..., any folder), else where the run's
    results file says lmms-eval read them, else lmms-eval main's Hub file."""
    if data_dir is not None:
        if not data_dir.is_dir():
            raise DataError(f"--data-dir {data_dir}: no such folder")
        files = subset_files(data_dir, subset)
        shards = [f for f in files if f.name.startswith(f"Illusion_{subset}-")]
        if shards and len(shards) < len(files):
            raise DataError(f"--data-dir {data_dir} holds both the full {subset} split "
                            f"({shards[0].name} ...) and other {subset} files "
                            f"({next(f for f in files if f not in shards).name}); point it at "
                            "the files lmms-eval read")
        if not files:
            raise DataError(f"--data-dir {data_dir} has no parquet file of {subset} (named "
                            f"illusion_{subset.lower()}_*.parquet, as lmms-eval's yaml reads "
                            f"{hf_file(subset)} from {HF_REPO}, or Illusion_{subset}-*.parquet)")
        return files, str(data_dir)
    recorded = _recorded_file(data_files)
    if recorded is not None and "://" not in recorded and Path(recorded).is_file():
        return [Path(recorded)], recorded
    match = _HF_URL.fullmatch(recorded or "")
    repo, path = (match["repo"], match["path"]) if match else (HF_REPO, hf_file(subset))
    root = parquet.hub_snapshot(repo, [path])
    if not (root / path).is_file():
        raise DataError(f"hf://datasets/{repo}/{path} was not found; pass --data-dir with the "
                        "parquet file lmms-eval read")
    return [root / path], f"hf://datasets/{repo}/{path}"


def subset_files(folder: Path, subset: str) -> list[Path]:
    """Parquet files of one subset under `folder`: `illusion_<subset>` (any case) followed by
    "_" or "-", so that IN never takes ICON's files."""
    prefix = re.compile(rf"illusion_{subset}[_-]", re.IGNORECASE)
    return sorted(p for p in folder.rglob("*.parquet") if p.is_file() and prefix.match(p.name))


def _recorded_file(data_files: Any) -> str | None:
    """The one file a task's `dataset_kwargs.data_files` names (a split -> file mapping)."""
    if isinstance(data_files, dict) and len(data_files) == 1:
        data_files = next(iter(data_files.values()))
    if isinstance(data_files, list) and len(data_files) == 1:
        data_files = data_files[0]
    return data_files if isinstance(data_files, str) and data_files else None


def fingerprint(files: list[Path]) -> str:
    """The content fingerprint of the files (relative to their common folder)."""
    root = Path(os.path.commonpath([f.parent for f in files]))
    return parquet.fingerprint(files, root)
