"""BlindTest's options: `visioneval blindtest`'s flags, run.json's `options` and the Python
API's (docs/blindtest.md explains them)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from visioneval.benchmarks.blindtest.spec import HF_REPO, PROTOCOLS
from visioneval.core.benchmark import OWN_OPTIONS, LocalPath
from visioneval.harness.corrections import LabelSet, label_sets

Protocol = Literal["paper", "lmms-eval", "vlmevalkit", "all"]


class BlindTestOptions(BaseModel, frozen=True):
    """One line of help each."""
    data_dir: LocalPath | None = Field(None, description="Dataset folder (the Hub's layout).",
                                       json_schema_extra={"shown_default": f"download {HF_REPO}"})
    num_samples: int | None = Field(None, ge=1, description="First N rows of each task.",
                                    json_schema_extra={"flags": ["--samples"],
                                                       "shown_default": "all"})
    protocol: Protocol = Field("all", description="Scoring protocol; all: the three side by "
                               "side.", json_schema_extra={"panel": OWN_OPTIONS})
    labels: LabelSet = Field("both", description="original or corrected labels, or both.",
                             json_schema_extra={"panel": OWN_OPTIONS})

    @property
    def protocols(self) -> list[str]:
        return list(PROTOCOLS) if self.protocol == "all" else [self.protocol]

    @property
    def families(self) -> list[str]:
        """Prompts to send: each protocol sends its own text, one request each."""
        return self.protocols

    @property
    def label_sets(self) -> list[str]:
        return label_sets(self.labels)


class BlindTestSynthOptions(BaseModel, frozen=True):
    """`visioneval data synth-blindtest`'s own flag (docs/blindtest.md, "Thresholds")."""

    gaps: str | None = Field(None, description="The circles' distances in diameters, comma-"
                             "separated (negative: overlapping), cycled through the circles' "
                             "rows; denser levels for a gap threshold.",
                             json_schema_extra={"metavar": "LIST", "panel": OWN_OPTIONS,
                                                "shown_default": "the paper's -0.15 to 0.3"})

    @field_validator("gaps")
    @classmethod
    def _gaps(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            found = [float(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"{value!r}: write numbers separated by commas") from None
        if not found or not all(math.isfinite(v) and -1.0 < v < 2.0 for v in found):
            raise ValueError(f"{value!r}: give numbers between -1 and 2 diameters")
        return value

    @property
    def gap_values(self) -> tuple[float, ...] | None:
        return None if self.gaps is None else \
            tuple(float(v) for v in self.gaps.split(",") if v.strip())
