"""The options of the generic image-question benchmark, one model: its command's flags
(generated from the fields), what run.json records to rebuild a run and the Python API's
`options`."""

# Imports inside functions: `visioneval --help` reads every benchmark's definition; the benchmark's
# implementation behind it loads on first use.

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from visioneval.core.benchmark import JUDGE_OPTIONS, OWN_OPTIONS
from visioneval.core.option_checks import (
    JudgeBackend,
    judge_api_key_env_field,
    judge_backend_field,
    judge_base_url_field,
    refuse_credentials,
)

Scorer = Literal["exact", "choice", "set", "number", "judge"]
JUDGE = JUDGE_OPTIONS  # the --help panel of the judge's options


class VqaOptions(BaseModel, frozen=True):
    """One line of help each: docs/vqa.md explains the columns, scorers and the judge."""
    data: str = Field(description="A .parquet, .jsonl or .csv file, a folder or a Hub id.",
                      json_schema_extra={"metavar": "SOURCE"})
    scorer: Scorer = Field("exact", description="How answers are scored; judge: by a judge "
                           "model.", json_schema_extra={"panel": OWN_OPTIONS})
    image_col: str = Field("image", description="Image column: a path beside the data, or "
                           "bytes.", json_schema_extra={"metavar": "COLUMN"})
    allow_outside_images: bool = Field(
        False, description="Read image paths leading outside the data's folder.")
    question_col: str = Field("question", description="Question column.",
                              json_schema_extra={"metavar": "COLUMN"})
    answer_col: str = Field("answer", description="Answer column (text, number, list or "
                            "option).", json_schema_extra={"metavar": "COLUMN"})
    choices_col: list[str] | None = Field(
        None, description="Options column(s): a list, or one per option.",
        json_schema_extra={"metavar": "COLUMNS", "shown_default": "choices"})
    id_col: str | None = Field(None, description="Row id column.",
                               json_schema_extra={"metavar": "COLUMN",
                                                  "shown_default": "id, else the row number"})
    group_col: str | None = Field(None, description="Column to report accuracy by.",
                                  json_schema_extra={"metavar": "COLUMN"})
    split: str | None = Field(None, description="Only the files of this split (e.g. test).",
                              json_schema_extra={"metavar": "NAME",
                                                 "shown_default": "every file"})
    num_samples: int | None = Field(None, gt=0, description="Only the first N rows.",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    prompt_suffix: str | None = Field(
        None, description="Text after the question.",
        json_schema_extra={"panel": OWN_OPTIONS, "shown_default": "for choice, a letter request"})
    tolerance: float = Field(0.01, ge=0, description="number: the relative tolerance.",
                             json_schema_extra={"panel": OWN_OPTIONS})
    judge_backend: JudgeBackend | None = judge_backend_field()
    judge_model: str | None = Field(None, description="A vision-capable model: it sees the "
                                    "image.", json_schema_extra={"panel": JUDGE,
                                                                 "metavar": "NAME"})
    judge_base_url: str | None = judge_base_url_field()
    judge_api_key_env: str | None = judge_api_key_env_field()
    judge_rubric: str | None = Field(None, description="A built-in rubric name or a rubric "
                                     "file.", json_schema_extra={
                                         "panel": JUDGE, "metavar": "RUBRIC",
                                         "shown_default": "vqa's rubric"})
    judge_threshold: float | None = Field(None, ge=0, le=1, description="Score (0-1) that "
                                          "makes an answer correct.", json_schema_extra={
                                              "panel": JUDGE, "shown_default": "the rubric's"})

    @field_validator("data")
    @classmethod
    def _local_made_absolute(cls, value: str) -> str:
        """A local file or folder is recorded as an absolute path, so a resume from another
        folder finds it; a Hub id is kept as given."""
        from visioneval.benchmarks.vqa.data import hub_id  # reads the data: only when built

        if hub_id(value) is None and Path(value).exists():
            return str(Path(value).resolve())
        return value

    @model_validator(mode="after")
    def _judge_given_with_its_scorer(self) -> VqaOptions:
        given = [name for name in JUDGE_FIELDS if getattr(self, name) is not None]
        if self.scorer != "judge":
            if given:
                raise ValueError(f"--{given[0].replace('_', '-')} is for --scorer judge")
            return self
        if self.judge_backend is None or self.judge_model is None:
            raise ValueError("--scorer judge needs --judge-backend and --judge-model")
        refuse_credentials(self.judge_base_url)
        return self


JUDGE_FIELDS = ("judge_backend", "judge_model", "judge_base_url", "judge_api_key_env",
                "judge_rubric", "judge_threshold")
