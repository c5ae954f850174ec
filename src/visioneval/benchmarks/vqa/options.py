"""The options of the generic image-question benchmark: its command's flags (generated from
the fields) and what run.json records to rebuild a run."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, model_validator

Scorer = Literal["exact", "choice", "set", "number", "judge"]
JUDGE = "Judge"  # the --help panel of the judge's options


class VqaOptions(BaseModel, frozen=True):
    data: str = Field(description="A .parquet, .jsonl or .csv file, a folder of them, or a "
                      "Hugging Face Hub dataset id (owner/name or hf://owner/name).")
    scorer: Scorer = Field("exact", description="How answers are scored: exact (normalised "
                           "text), choice (multiple choice), set (comma-separated labels), "
                           "number (relative tolerance), judge (a rubric judge model grades "
                           "the answer against the reference: --judge-backend, "
                           "--judge-model).")
    image_col: str = Field("image", description="Column holding the image: a path relative "
                           "to the data file, or bytes (an HF Image struct or raw bytes).")
    allow_outside_images: bool = Field(
        False, description="Read image paths that lead outside the data file's folder (an "
        "absolute path, ../, a symlink leading out); without it such a row is skipped with "
        "a line naming it, so a downloaded dataset cannot send any file of the machine to "
        "the model.")
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
    judge_backend: Literal["openai", "openrouter", "ollama", "anthropic"] | None = Field(
        None, description="judge: where the judge model runs.",
        json_schema_extra={"panel": JUDGE})
    judge_model: str | None = Field(None, description="judge: a vision-capable model that "
                                    "grades each answer, seeing the image.",
                                    json_schema_extra={"panel": JUDGE})
    judge_base_url: str | None = Field(None, description="judge: its server URL (a comma "
                                       "list for replicas); no credentials in it.",
                                       json_schema_extra={"panel": JUDGE})
    judge_api_key_env: str | None = Field(None, description="judge: the environment "
                                          "variable holding its key (default: as for the "
                                          "model).", json_schema_extra={"panel": JUDGE})
    judge_rubric: str | None = Field(None, description="judge: a built-in rubric name or a "
                                     "rubric file. Default: vqa's answer rubric (correctness "
                                     "against the reference, grounding in the image).",
                                     json_schema_extra={"panel": JUDGE})
    judge_threshold: float | None = Field(None, ge=0, le=1, description="judge: the rubric "
                                          "score (0-1) from which an answer counts as "
                                          "correct. Default: the rubric's pass threshold.",
                                          json_schema_extra={"panel": JUDGE})

    @model_validator(mode="after")
    def _judge_given_with_its_scorer(self) -> VqaOptions:
        given = [name for name in JUDGE_FIELDS if getattr(self, name) is not None]
        if self.scorer != "judge":
            if given:
                raise ValueError(f"--{given[0].replace('_', '-')} is for --scorer judge")
            return self
        if self.judge_backend is None or self.judge_model is None:
            raise ValueError("--scorer judge needs --judge-backend and --judge-model")
        for url in (self.judge_base_url or "").split(","):
            parts = urlsplit(url.strip())
            if parts.username or parts.password:
                # Options are recorded in run.json: a password there would be written down.
                raise ValueError("--judge-base-url holds credentials; give the key with "
                                 "--judge-api-key-env instead")
        return self


JUDGE_FIELDS = ("judge_backend", "judge_model", "judge_base_url", "judge_api_key_env",
                "judge_rubric", "judge_threshold")
