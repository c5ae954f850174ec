"""pydantic's ValidationError in one line: where (a field's path or a flag) and what."""

import pytest
from pydantic import BaseModel, Field, ValidationError, field_validator

from visioneval.validation import error_message, first_error


class Inner(BaseModel):
    max_tokens: int = Field(ge=1)


class Outer(BaseModel):
    judge: Inner
    name: str

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value:
            raise ValueError("a name is never empty")
        return value


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Outer.model_validate(data)
    return caught.value


def test_the_first_field_by_its_path_and_how_many_more():
    exc = _error({"judge": {"max_tokens": 0}})
    assert first_error(exc) == ("judge.max_tokens: Input should be greater than or equal "
                                "to 1 (1 more)")
    assert first_error(exc, count_more=False).endswith("equal to 1")


def test_a_flag_names_the_top_field_as_typed():
    with pytest.raises(ValidationError) as caught:
        Inner(max_tokens=0)
    assert first_error(caught.value, place="flag") == (
        "--max-tokens: Input should be greater than or equal to 1")


def test_an_error_of_the_whole_value():
    exc = _error([1])
    assert first_error(exc).startswith("value: Input should be a valid dictionary")
    assert first_error(exc, whole="case").startswith("case: ")
    assert first_error(exc, whole=None).startswith("Input should be")


def test_a_validators_own_words():
    exc = _error({"judge": {"max_tokens": 2}, "name": ""})
    assert error_message(exc) == "Value error, a name is never empty"
    assert first_error(exc, own_words=True) == "name: a name is never empty"
