"""Psychophysics stimulus rows no observer can be measured on (a NaN or infinite level, an
unknown feature, no items, an answer that is not the stimulus's) are skipped when the data
is read, each with one line naming the file, the row and the field: nothing is sent for
them, so nothing is paid for answers that no fit could count."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import invoke

from visioneval.benchmarks.psychophysics.dataset import Design, write_dataset

LEVELS = {"orientation": (4.0, 16.0), "color": (4.0, 16.0), "size": (0.4,)}


@pytest.fixture
def stimuli(tmp_path) -> Path:
    """Detection arrays: 5 levels x 2 trials (10 rows)."""
    root = tmp_path / "data"
    write_dataset(root, Design(experiments=("detection",), levels=LEVELS, set_sizes=(4,),
                               trials=2, pool_levels={}), seed=1)
    return root


def damage(root: Path, changes: dict[int, dict[str, object]]) -> Path:
    """The detection file with these rows' fields changed."""
    path = root / "detection" / "shard_00000.parquet"
    rows = pq.read_table(path).to_pylist()
    for index, fields in changes.items():
        rows[index].update(fields)
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    return path


def run(server, data: Path, out: Path):
    return invoke("psychophysics", "--backend", "openai", "--base-url",
                  server.base_url + "/v1", "--model", "m", "--data", data, "--out", out,
                  "--no-progress", "--no-cache", "--no-report", "--bootstrap", "20")


@pytest.mark.slow
def test_impossible_rows_are_skipped_with_one_line_each_and_never_sent(serve, stimuli,
                                                                       tmp_path):
    path = damage(stimuli, {0: {"level": float("nan")}, 3: {"level": float("inf")},
                            4: {"feature": "texture"}, 6: {"set_size": 0},
                            8: {"answer": "yes"}})
    server = serve()
    result = run(server, stimuli, tmp_path / "run")
    skipped = [ln for ln in result.stderr.splitlines() if "skipped detection row" in ln]
    assert len(skipped) == 5, result.stderr
    for row, field in ((0, "level"), (3, "level"), (4, "feature"), (6, "set_size"),
                       (8, "answer")):
        line = next(ln for ln in skipped if f"row #{row}:" in ln)
        assert str(path) in line and f"field `{field}`" in line, line
    assert server.stats.requests == 5  # the five usable rows only
    lines = (tmp_path / "run" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 5


def test_data_whose_every_row_is_impossible_sends_nothing(serve, stimuli, tmp_path):
    damage(stimuli, {i: {"level": float("nan")} for i in range(10)})
    server = serve()
    result = run(server, stimuli, tmp_path / "run")
    assert result.exit_code != 0, result.output
    assert server.stats.requests == 0
    assert "every row was skipped" in result.stderr
