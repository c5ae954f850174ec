"""A suite file: several benchmarks x several models (x settings that vary), one command.

TOML, read with the standard library. It names where keys come from (`api_key_env`), never
a key: a field that would hold one, or a URL with credentials, is refused in one line. Paths
in benchmark options mean what they would on the command line (relative to the folder the
command runs in).

    name = "perception"                   # results/suites/<name> unless `out` says otherwise

    [[models]]
    name = "qwen-7b"                      # the name in tables (default: `model`)
    backend = "openai"
    model = "Qwen/Qwen2.5-VL-7B-Instruct"
    base_url = ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]
    concurrency = 32                      # per URL
    # batch = true                        # through the provider's batch API (half price)

    [[benchmarks]]
    name = "salbench"
    options = { data_dir = "data/synth", splits = ["synthetic"] }
    vary = { shots = [0, 3] }             # one run per value
    # target_ci = 3                       # stop once the 95% interval is 3 points wide
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from visioneval.backends.keys import url_secrets
from visioneval.core import defaults
from visioneval.core.backend_spec import split_urls
from visioneval.core.bounds import MAX_DEPTH, first_unrecordable

SECRET_WORDS = frozenset({"apikey", "token", "secret", "password", "passwd", "passphrase",
                          "credential", "credentials"})
"""A field whose last word is one of these holds a secret: `token`, `hf_token`,
`client_secret`, `password` (`max_tokens` or `token_limit` do not end in one)."""
SECRET_KEYS = frozenset({"api", "secret", "private", "access", "auth", "signing",
                         "encryption", "session", "license", "subscription"})
"""A field ending in `key` holds a secret when the word before says which kind (`api_key`,
`secret_key`, `private_key`, `apiKey`), or when it is `key` alone; `sort_key`, `answer_key`,
`key_col`, `keypoints` or `monkey` name no secret."""
_WORDS = re.compile(r"[_\-\s.]+|(?<=[a-z0-9])(?=[A-Z])")


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelEntry(_Entry):
    """A model to evaluate: where it runs, where its key comes from, its limits and price."""

    name: str | None = None
    backend: Literal["openai", "openrouter", "ollama", "anthropic", "builtin"]
    model: str
    base_url: str | list[str] | None = None
    api_key_env: str | None = None
    concurrency: int | None = Field(None, gt=0, le=defaults.MAX_CONCURRENCY)
    rpm: int | None = Field(None, gt=0)
    tpm: int | None = Field(None, gt=0)
    price_in: float | None = Field(None, ge=0)
    price_out: float | None = Field(None, ge=0)
    # The model's name in the benchmarks' published tables (GPT-4o, LLaVA-1.6-7B ...), when
    # its own name does not match one: its runs are then shown beside those numbers.
    published_as: str | None = None
    # Its runs go through the provider's batch API (`--batch`: OpenAI, Anthropic).
    batch: bool = False

    @model_validator(mode="after")
    def _checked(self) -> ModelEntry:
        if (self.price_in is None) != (self.price_out is None):
            raise ValueError("give both price_in and price_out (US dollars per million "
                             "tokens; 0 and 0 for your own server)")
        for url in self.urls():
            if url_secrets(url):
                raise ValueError(f"base_url {url.split('@')[-1]} holds credentials: a suite "
                                 "file never holds a key; put it in an environment variable "
                                 "and name it with api_key_env")
        return self

    @property
    def label(self) -> str:
        return self.name or self.model

    def urls(self) -> tuple[str, ...]:
        return split_urls(self.base_url)


class BenchmarkEntry(_Entry):
    """A benchmark with its options; `vary` lists values of options to run one by one."""

    name: str
    options: dict[str, Any] = Field(default_factory=dict)
    vary: dict[str, list[Any]] = Field(default_factory=dict)
    # Request variants sent beside every sample, as `--variant` names them (docs/controls.md).
    variants: list[str] = Field(default_factory=list)
    # Answers asked per sample (`--epochs`): the item means and the variance split beside
    # the benchmark's tables (docs/epochs.md).
    epochs: int = Field(1, ge=1)
    # "expected": each answer's expected outcome from its log-probabilities too.
    score: Literal["sampled", "expected"] = "sampled"
    temperature: float | None = None
    max_tokens: int | None = Field(None, gt=0)
    # Stop each run once its headline's 95% interval is at most this many points wide
    # (`--target-ci`), after at least `min_samples`.
    target_ci: float | None = Field(None, gt=0, le=100)
    min_samples: int | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _checked(self) -> BenchmarkEntry:
        both = set(self.options) & set(self.vary)
        if both:
            raise ValueError(f"{', '.join(sorted(both))}: in both options and vary")
        if self.min_samples is not None and self.target_ci is None:
            raise ValueError("min_samples goes with target_ci (the samples before the "
                             "stopping rule may stop a run)")
        if self.target_ci is not None and self.epochs > 1:
            raise ValueError("target_ci stops on the first answers; epochs asks every sample "
                             "again: use one or the other")
        if self.target_ci is not None and self.variants:
            raise ValueError("target_ci watches the main number of the samples as asked; put "
                             "the variants in a benchmark entry of their own")
        empty = [k for k, values in self.vary.items() if not values]
        if empty:
            raise ValueError(f"vary {', '.join(empty)}: give at least one value")
        return self


class EngineEntry(_Entry):
    """Engine settings for every run of the suite (the command's flags of the same names);
    a model's own `concurrency`, `rpm`, `tpm` and prices are set per model."""

    concurrency: int = Field(defaults.CONCURRENCY, gt=0, le=defaults.MAX_CONCURRENCY)
    max_attempts: int | None = Field(None, gt=0)
    timeout: float | None = Field(None, gt=0)
    backoff_base: float | None = Field(None, ge=0)
    backoff_cap: float | None = Field(None, ge=0)
    cache_dir: str | None = None
    no_cache: bool = False
    max_reply_mb: float | None = Field(None, gt=0)


class SuiteFile(_Entry):
    name: str | None = None
    out: str | None = None
    models: list[ModelEntry] = Field(min_length=1)
    benchmarks: list[BenchmarkEntry] = Field(min_length=1)
    engine: EngineEntry = Field(default_factory=EngineEntry)

    @model_validator(mode="after")
    def _unique_labels(self) -> SuiteFile:
        labels = [m.label for m in self.models]
        twice = sorted({x for x in labels if labels.count(x) > 1})
        if twice:
            raise ValueError(f"models named twice: {', '.join(twice)} (give each a `name`)")
        batched = [m.label for m in self.models if m.batch]
        stopped = [b.name for b in self.benchmarks if b.target_ci is not None]
        if batched and stopped:
            raise ValueError(f"{batched[0]} runs in batches (batch = true) and {stopped[0]} "
                             "stops once the answer is known (target_ci): a batch is sent "
                             "at once, so the two cannot go together; use one or the other")
        return self


def load(path: Path) -> SuiteFile:
    """The suite file, or a ValueError whose one line names the file and the field."""
    try:
        text = path.read_text()
        raw = tomllib.loads(text)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such suite file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # the TOML reader recurses once per level
        raise ValueError(f"{path}: line {_deep_line(text)}: nested deeper than {MAX_DEPTH} "
                         "levels") from None
    return parse(raw, str(path))


def parse(raw: dict[str, Any], source: str) -> SuiteFile:
    if problem := _out_of_bounds(raw):
        raise ValueError(f"{source}: {problem}")
    if where := _secret_field(raw):
        raise ValueError(f"{source}: {where}: a suite file never holds a key; put it in an "
                         "environment variable and name it with api_key_env")
    try:
        return SuiteFile.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = _where(error["loc"])
        message = str(error["ctx"]["error"]) if error["type"] == "value_error" \
            else error["msg"]
        raise ValueError(f"{source}: {where + ': ' if where else ''}{message}") from None


def _where(loc: tuple[int | str, ...]) -> str:
    """A field's place as the file writes it: models[2].backend (counting from 1)."""
    out = ""
    for part in loc:
        out += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _out_of_bounds(raw: dict[str, Any]) -> str | None:
    """`where: why` of the first value a run could not record (`core.bounds`), read before
    anything else reads the file."""
    found = first_unrecordable(raw)
    return f"{_where(found[0])}: {found[1]}" if found else None


def _deep_line(text: str) -> int:
    """The line where brackets first nest deeper than MAX_DEPTH (strings and comments
    passed over)."""
    depth, quote, line = 0, "", 1
    for char in text:
        if char == "\n":
            line += 1
            quote = "" if quote == "#" else quote
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'#":
            quote = char
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif char in "]}":
            depth -= 1
    return line


def names_a_secret(name: str) -> bool:
    """Whether a field of this name would hold a secret (SECRET_WORDS, SECRET_KEYS); one
    naming where a secret comes from (`api_key_env`: the variable's name) does not."""
    words = [w.lower() for w in _WORDS.split(name) if w]
    if not words:
        return False
    last = words[-1]
    if last in SECRET_WORDS:
        return True
    return last == "key" and (len(words) == 1 or words[-2] in SECRET_KEYS)


def _secret_field(value: Any, where: str = "") -> str | None:
    """The first field whose name says it holds a secret (api_key, token, password ...)."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}" if where else str(key)
            if names_a_secret(str(key)):
                return here
            if found := _secret_field(item, here):
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value, 1):
            if found := _secret_field(item, f"{where}[{i}]"):
                return found
    return None
