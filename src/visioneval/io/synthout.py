"""Where `visioneval data synth-*` writes: a folder of its own, or one the user asked to
replace.

A run records its dataset's fingerprint, cannot resume once the data changed, and its report
shows thumbnails read from that data; so a synthetic set never silently replaces a dataset
that is there (`--overwrite` says so on purpose). The set is written beside its folder and
moved in when complete: an interrupted write leaves the old data as it was."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

SHOWN = 4  # entries named in the refusal


class OutHoldsData(ValueError):
    """The folder already holds files and --overwrite was not given."""


def held(out: Path) -> list[str]:
    """The folder's entries (folders with a trailing /), sorted; none if it does not exist."""
    if not out.is_dir():
        return []
    return sorted(e.name + ("/" if e.is_dir() else "") for e in out.iterdir())


def refusal(out: Path, entries: list[str]) -> str:
    """The one line refusing to write into a folder that holds `entries`."""
    named = ", ".join(entries[:SHOWN]) + (f" and {len(entries) - SHOWN} more"
                                          if len(entries) > SHOWN else "")
    return (f"{out} already holds data ({named}), which runs may have read (a run cannot "
            "resume on changed data, and its report shows thumbnails from it); choose another "
            "--out, or add --overwrite to replace it")


def write_into(out: Path, write: Callable[[Path], list[str]], overwrite: bool = False
               ) -> list[str]:
    """Run `write(folder)` into a fresh folder beside `out`, then move what it wrote into
    `out`; its lines (what it wrote) are returned naming `out`. Refused (OutHoldsData) when
    `out` holds anything and `overwrite` is off; with it, each entry the new set writes
    replaces the one of the same name whole (no file of the old set survives inside it),
    and other entries of `out` are left alone."""
    if out.exists() and not out.is_dir():
        raise OutHoldsData(f"{out} is a file; --out names the folder to write the dataset into")
    entries = held(out)
    if entries and not overwrite:
        raise OutHoldsData(refusal(out, entries))
    staging = out.parent / f".{out.name}.writing-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
        lines = write(staging)
        out.mkdir(parents=True, exist_ok=True)
        for entry in sorted(staging.iterdir()):
            target = out / entry.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            entry.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [line.replace(str(staging), str(out)) for line in lines]
