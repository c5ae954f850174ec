"""A label-corrections manifest: applied only to the value it was written for, and a bad file
is one line naming it."""

from __future__ import annotations

import orjson
import pytest

from visioneval.harness.corrections import Corrections, label_sets
from visioneval.io.parquet import DataError

ENTRY = {"item": "280", "field": "answer", "original": "(b)", "corrected": "(a)",
         "source": "a thread", "evidence": "the person stands"}


def _write(tmp_path, document) -> Corrections:
    path = tmp_path / "corrections.json"
    path.write_bytes(orjson.dumps(document))
    return Corrections.load(path)


def test_a_correction_applies_only_to_its_original_value(tmp_path):
    made = _write(tmp_path, {"benchmark": "b", "version": "2026-11-28", "corrections": [ENTRY]})
    assert made.corrected("280", "answer", "(b)") == "(a)"
    assert made.corrected("280", "answer", "(c)") == "(c)"  # another copy: left alone
    assert made.mismatched("280", "answer", "(c)") == made.corrections[0]
    assert made.mismatched("280", "answer", "(a)") is None
    assert made.corrected("279", "answer", "(b)") == "(b)"
    assert label_sets("both") == ["original", "corrected"] and label_sets("original") == [
        "original"]


@pytest.mark.parametrize(("document", "said"), [
    ({"benchmark": "b", "version": "1", "corrections": [ENTRY | {"item": 3}]},
     "corrections.0.item"),
    ({"benchmark": "b", "version": "1", "corrections": [ENTRY, ENTRY]}, "corrected twice"),
    ({"benchmark": "b"}, "version"),
])
def test_a_bad_manifest_is_one_line_naming_it(tmp_path, document, said):
    with pytest.raises(DataError) as caught:
        _write(tmp_path, document)
    message = str(caught.value)
    assert "corrections.json" in message and said in message and "\n" not in message


def test_a_missing_or_broken_file(tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        Corrections.load(tmp_path / "nowhere.json")
    (tmp_path / "c.json").write_text("{not json")
    with pytest.raises(DataError, match="c.json"):
        Corrections.load(tmp_path / "c.json")


def test_the_commit_a_hub_snapshot_holds(tmp_path):
    from visioneval.io.parquet import hub_revision

    sha = "0123456789abcdef0123456789abcdef01234567"
    snapshot = tmp_path / "datasets--x--y" / "snapshots" / sha
    snapshot.mkdir(parents=True)
    assert hub_revision(snapshot) == sha
    assert hub_revision(tmp_path) is None
