"""Code validators: exact checks of free-form answers (counts, OCR text, JSON, chart figures).

Each module has `validate(output, expected_output, input_text="", **kwargs) -> dict` in the
shared result format and runs as a command (`python -m visioneval.validators.NAME` or
`visioneval validate NAME`): JSON `{"output", "expected_output", "input", ...options}` from the
first argument or stdin, the result JSON on stdout, exit 0 passed, 1 failed, 2 error."""

BUILTIN = ("count", "ocr", "json", "chart")
