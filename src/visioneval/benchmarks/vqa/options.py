"""The options of the generic image-question benchmark: its command's flags (generated from
the fields) and what run.json records to rebuild a run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Scorer = Literal["exact", "choice", "set", "number", "judge"]


class VqaOptions(BaseModel, frozen=True):
    data: str = Field(description="A .parquet, .jsonl or .csv file, a folder of them, or a "
                      "Hugging Face Hub dataset id (owner/name or hf://owner/name).")
    scorer: Scorer = Field("exact", description="How answers are scored: exact (normalised "
                           "text), choice (multiple choice), set (comma-separated labels), "
                           "number (relative tolerance); judge is not available yet.")
    image_col: str = Field("image", description="Column holding the image: a path relative "
                           "to the data file, or bytes (an HF Image struct or raw bytes).")
    question_col: str = Field("question", description="Column holding the question.")
    answer_col: str = Field("answer", description="Column holding the answer: text, a "
                            "number, a list of accepted answers (exact), an option's letter, "
                            "text or 0-based index (choice).")
    choices_col: list[str] | None = Field(
        None, description="Column holding the options (a list, or a JSON list as text), or "
        "several columns holding one option each (A,B,C,D). Default: `choices` if present.")
    id_col: str | None = Field(None, description="Column holding a row id. Default: `id` if "
                               "present, else the row's number.")
    group_col: str | None = Field(None, description="Column to report accuracy by "
                                  "(a category, a source, a split).")
    split: str | None = Field(None, description="Only the files of this split (a folder or "
                              "file name prefix such as test in data/test-0000.parquet).")
    num_samples: int | None = Field(None, gt=0, description="Only the first N rows.",
                                    json_schema_extra={"flags": ["--samples"]})
    prompt_suffix: str | None = Field(
        None, description="Text after the question (and options), on its own line. Default: "
        "for choice, \"Answer with the option's letter from the given choices directly.\"; "
        "else none. An empty string: none.")
    tolerance: float = Field(0.01, ge=0, description="number: the relative tolerance "
                             "(|answer - target| <= tolerance x |target|).")
