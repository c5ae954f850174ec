"""`visioneval data synth-layout`, `data inspect` and `data repage`: CANVAS-shaped random
designs written, parquet files' row groups and pages shown, and rewritten with small pages.
Each benchmark's own `synth-NAME` is generated from its definition (cli/generated.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from visioneval.canvas.synth import write_random
from visioneval.commands.common import consoles, guarded
from visioneval.io import chunks, parquet, repage
from visioneval.io.synthout import write_into
from visioneval.terminal import error_line, line

if TYPE_CHECKING:
    from visioneval.io.chunks import FileChunks

WIDTH = 100  # the inspect table fits a 100-column terminal
_COLUMNS = (("group", 5), ("column", 22), ("rows", 7), ("pages", 5), ("largest page", 12),
            ("decompressed", 12))


def synth_layout(out: Path, *, n: int, boxes: int, seed: int, model: str, variant: str,
                 overwrite: bool) -> int:
    """Write the designs into `out` (`synthout.write_into`: a folder that holds something
    else is refused in one line, exit 2, unless `overwrite`)."""
    def write(into: Path) -> list[str]:
        ids = write_random(into, n, boxes=boxes, seed=seed, model=model, variant=variant)
        return [f"{out}: {len(ids)} pairs ({ids[0]} ... {ids[-1]}), model {model}, "
                f"variant {variant}"]

    return write_synth(out, overwrite, write)


def write_synth(out: Path, overwrite: bool, write: Callable[[Path], list[str]]) -> int:
    """A `data synth-*` command's writing (`synthout.write_into`): its lines, or the one
    line of a refusal (exit code 2)."""
    console, err = consoles()

    def action() -> int:
        for text in write_into(out, write, overwrite):
            line(console, text)
        return 0

    return guarded(err, action)


def inspect_data(path: Path) -> int:
    """Each parquet file's table of column chunks, then how many visioneval streams; exit 2
    when a file could not be read (said in one line, the others are shown)."""
    console, err = consoles()

    def action() -> int:
        failed = streamed = total = 0
        for source, _ in repage.parquet_targets(path, path):
            shown = source.relative_to(path) if source != path else source
            try:
                found = chunks.file_chunks(source)
            except parquet.DataError as exc:
                error_line(err, str(exc))
                failed += 1
                continue
            for text in inspect_lines(found, str(shown)):
                line(console, text)
            streamed += sum(c.reader == "streamed" for c in found.chunks)
            total += len(found.chunks)
        rule = parquet.STREAMING
        line(console, f"Streamed: {streamed} of {total} column chunks (a page over "
                      f"{_size(rule.pages_over, binary=True)}, values of "
                      f"{_size(rule.values_from, binary=True)} or more,")
        line(console, f"or many pages under {_size(rule.tiny_pages, binary=True)}); pyarrow "
                      "reads the rest.")
        if streamed:
            line(console, "Stock readers hold a whole page: `visioneval data repage IN OUT` "
                          "writes small pages.")
        return 2 if failed else 0

    return guarded(err, action)


def inspect_lines(found: FileChunks, shown: str) -> list[str]:
    """One file's header line and table of column chunks, each line at most WIDTH long."""
    groups = "row group" if found.groups == 1 else "row groups"
    lines = [f"{shown}: {found.rows} rows, {found.groups} {groups}, {_size(found.size)}"]
    reader = WIDTH - 2 - sum(w + 2 for _, w in _COLUMNS)
    head = [name.rjust(w) if i != 1 else name.ljust(w) for i, (name, w) in enumerate(_COLUMNS)]
    lines.append(("  " + "  ".join(head) + "  reader").rstrip())
    for chunk in found.chunks:
        cells = [str(chunk.group), _fit(chunk.column, 22), str(chunk.rows), str(chunk.pages),
                 _size(chunk.compressed), _size(chunk.uncompressed)]
        row = [c.rjust(w) if i != 1 else c.ljust(w) for i, (c, (_, w)) in
               enumerate(zip(cells, _COLUMNS, strict=True))]
        lines.append("  " + "  ".join(row) + "  " + _fit(chunk.reader, reader))
    lines += [f"  row group {c.group}, column {c.column}: {c.problem}"
              for c in found.chunks if c.problem]
    return lines


def _fit(text: str, width: int) -> str:
    """`text` cut to `width` with an ellipsis in the middle (both ends of a path tell)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def _size(n: int, binary: bool = False) -> str:
    """A byte count as people read it: 812 B, 8.2 KB, 378.3 MB (4 MiB with `binary`)."""
    base, units = (1024, ("B", "KiB", "MiB", "GiB")) if binary else \
        (1000, ("B", "KB", "MB", "GB"))
    value, unit = float(n), units[0]
    for unit in units:
        if value < base or unit == units[-1]:
            break
        value /= base
    if unit == "B":
        return f"{n} B"
    return f"{value:.0f} {unit}" if binary and value == int(value) else f"{value:.1f} {unit}"


def repage_data(source: Path, target: Path, page_rows: int) -> int:
    """Rewrite each file with small pages into `target`, which must not exist yet (an empty
    folder may); one line per file with its largest page before and after."""
    console, err = consoles()

    def action() -> int:
        out = target / source.name if source.is_file() and target.is_dir() else target
        if out.exists() and not (out.is_dir() and not any(out.iterdir())):
            raise parquet.DataError(f"{out} already exists; repage writes a new file or "
                                    "folder (choose another OUT)")
        for source_file, target_file in repage.parquet_targets(source, out):
            before = chunks.file_chunks(source_file)
            done = repage.repage_file(source_file, target_file, page_rows)
            after = chunks.file_chunks(target_file)
            line(console, f"{target_file}: {done.rows} rows, {done.groups} row groups; "
                          f"largest page {_size(_largest(before))} -> {_size(_largest(after))}")
        return 0

    return guarded(err, action)


def _largest(found: FileChunks) -> int:
    return max((c.uncompressed for c in found.chunks), default=0)
