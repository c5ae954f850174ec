"""Ollama's /api/tags as the preflight reads it: an entry without a name is skipped, so the
"not pulled" message can list what is there instead of failing on a None."""

from visioneval.backends.ollama import served_names


def test_entries_without_a_name_are_skipped():
    tags = {"models": [{"name": "llava:latest"}, {"model": "qwen2.5vl"}, {"digest": "abc"},
                       {"name": None}, "junk"]}
    names = served_names(tags)
    assert names == ["llava:latest", "qwen2.5vl"]
    assert ", ".join(names) == "llava:latest, qwen2.5vl"
    assert served_names({"error": "x"}) == [] and served_names([1]) == []
