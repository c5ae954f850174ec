"""Where POPE's parquet files come from: a local copy (--data-dir) or the Hugging Face Hub.

The Hub copy lmms-eval reads (`spec.HF_REPO`) holds the questions twice: config `Full`,
one file per setting (`Full/<setting>-00000-of-00001.parquet`), and the default config
`test`, the 9,000 rows in three files (`data/test-0000N-of-00003.parquet`) whose `category`
names the setting. A `--data-dir` in either layout is read (found in any subfolder); with
both, `Full` wins. Without `--data-dir` only `Full` is downloaded and read the same way, so
the images stay the stored JPEG bytes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from visioneval.benchmarks.pope.spec import HF_REPO, SETTINGS
from visioneval.io import parquet
from visioneval.io.parquet import DataError, hub_revision, hub_snapshot


@dataclass(frozen=True)
class Located:
    """The data's root, the files each setting reads and, for the `test` layout, the rows of
    each setting in them (None: every row of the setting's own files)."""

    root: Path
    files: dict[str, list[Path]]
    rows: dict[str, list[int]] | None = None
    source: str = ""
    layout: str = "Full"
    notes: list[str] = field(default_factory=list)


def locate(data_dir: Path | None, settings: list[str]) -> Located:
    """The files of `settings`, from `data_dir` or the Hub; DataError naming what is missing."""
    if data_dir is None:
        root = hub_download(settings)
        revision = hub_revision(root)
        source = f"hf://{HF_REPO}" + (f"@{revision}" if revision else "")
    else:
        root, source = data_dir, str(data_dir)
    if not root.is_dir():
        raise DataError(f"--data-dir {root}: no such folder")
    full = {s: setting_files(root, s) for s in settings}
    if all(full.values()):
        return Located(root, full, source=source)
    test = sorted(p for p in root.rglob("test-*.parquet") if p.is_file())
    if test:
        rows = test_rows(test, settings)
        empty = [s for s, found in rows.items() if not found]
        if empty:
            raise DataError(f"{root}: the test-*.parquet files have no row whose category is "
                            f"{' or '.join(empty)} (the `test` config names each row's setting "
                            "in its `category` column)")
        return Located(root, {s: test for s in settings}, rows, source, "test")
    missing = [s for s, found in full.items() if not found]
    held = [s for s in SETTINGS if setting_files(root, s)]
    hint = f"; it holds {', '.join(held)}: add --settings {','.join(held)}" if held else ""
    raise DataError(f"{root} has no {', '.join(f'{m}-*.parquet' for m in missing)} file and "
                    f"no test-*.parquet file (expected the {HF_REPO} repository's layout: "
                    f"Full/<setting>-*.parquet or data/test-*.parquet){hint}")


def setting_files(root: Path, setting: str) -> list[Path]:
    # "random-*" never matches another split's file: the hyphen follows the split's name.
    return sorted(p for p in root.rglob(f"{setting}-*.parquet") if p.is_file())


def test_rows(files: list[Path], settings: list[str]) -> dict[str, list[int]]:
    """The `test` files' rows of each setting, by their `category` (read alone)."""
    rows: dict[str, list[int]] = {s: [] for s in settings}
    for row in parquet.iter_rows(files, ("category",)):
        category = row.values.get("category")
        if isinstance(category, str) and category.strip().lower() in rows:
            rows[category.strip().lower()].append(row.index)
    return rows


def hub_download(settings: list[str]) -> Path:
    # fnmatch's `*` also matches "/", so this finds the files in any folder.
    return hub_snapshot(HF_REPO, [f"*Full/{s}-*.parquet" for s in settings])
