"""How much room a folder has, for the lines that say a disk is full."""

from __future__ import annotations

import shutil
from pathlib import Path


def free_space(path: Path) -> str:
    """' (N MB free on <folder>)' for an error line about a full disk ('' if unknown)."""
    folder = path if path.is_dir() else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return ""
    return f" ({free / 1e6:.1f} MB free on {folder})"
