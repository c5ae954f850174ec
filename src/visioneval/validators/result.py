"""The one result format every judge and validator returns.

`{"status": "processed"|"error"|"skipped", "score": 0.0-1.0 or null, "passed": bool,
"details": {...}}`. An error has no score (null), never 0: it says the evaluator could not
judge, not that the answer was wrong; its reason is in `details.error`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class EvalResult(BaseModel):
    status: Literal["processed", "error", "skipped"]
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    passed: bool = False
    details: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def processed(cls, score: float, threshold: float, **details: Any) -> EvalResult:
        score = min(1.0, max(0.0, float(score)))
        return cls(status="processed", score=score, passed=score >= threshold,
                   details={"threshold": threshold, **details})

    @classmethod
    def error(cls, reason: str, **details: Any) -> EvalResult:
        return cls(status="error", score=None, passed=False, details={"error": reason, **details})

    @classmethod
    def skipped(cls, reason: str, **details: Any) -> EvalResult:
        return cls(status="skipped", score=None, passed=False,
                   details={"reason": reason, **details})

    def exit_code(self) -> int:
        """The validator protocol's exit code: 0 passed, 1 failed, 2 error."""
        if self.status == "error":
            return 2
        return 0 if self.passed else 1
