"""The run directory journal survives torn writes and keeps the last record per sample."""

from __future__ import annotations

import pytest

from visioneval.core.records import Record, Response
from visioneval.core.runfiles import BackendInfo, RunInfo
from visioneval.core.store import RunDirError, RunStore

INFO = RunInfo(benchmark="salbench", backend=BackendInfo(kind="builtin", model="random"))


def record(i, ok=True):
    response = Response(text="color") if ok else Response(error="gave up")
    return Record(id=f"P3/{i}", group="P3", target="color", response=response)


def test_torn_last_line_is_cut_and_appends_continue(tmp_path):
    store = RunStore.create(tmp_path / "run", INFO)
    for i in range(3):
        store.append(record(i))
    store.close()
    path = tmp_path / "run" / "samples.jsonl"
    path.write_bytes(path.read_bytes() + b'{"id": "P3/3", "gro')  # killed mid-write
    store = RunStore.open(tmp_path / "run")
    assert [r.id for r in store.records()] == ["P3/0", "P3/1", "P3/2"]
    store.append(record(3))
    store.close()
    assert [r.id for r in store.records()] == ["P3/0", "P3/1", "P3/2", "P3/3"]


def test_latest_record_wins_and_corrupt_lines_are_reported(tmp_path, caplog):
    store = RunStore.create(tmp_path / "run", INFO)
    store.append(record(0, ok=False))
    store.close()
    with open(tmp_path / "run" / "samples.jsonl", "ab") as fh:
        fh.write(b"not json\n")
    store.append(record(0, ok=True))
    store.close()
    latest = store.latest_records()
    assert len(latest) == 1 and latest[0].ok
    assert "line 2: not a valid record" in caplog.text


def test_create_refuses_an_existing_run_and_open_needs_run_json(tmp_path):
    store = RunStore.create(tmp_path / "run", INFO)
    store.append(record(0))
    store.close()
    with pytest.raises(RunDirError, match="--resume"):
        RunStore.create(tmp_path / "run", INFO)
    with pytest.raises(RunDirError, match="not a run directory"):
        RunStore.open(tmp_path)
