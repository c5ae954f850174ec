"""Several judges from one command line: `--judge-model` repeated, with `--judge-backend`,
`--judge-base-url` and `--judge-api-key-env` given once for every judge or once per judge in
the same order. Judge 1 is the run's own model (its flags may name replicas when it is
alone); judges 2, 3 ... are the panel (`EvaluateOptions.panel`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from visioneval.backends.keys import redact_url
from visioneval.core.commandline import ModelsGiven, ModelsTaken
from visioneval.core.store import RunDirError, RunStore
from visioneval.evaluators.options import PanelJudge


@dataclass(frozen=True)
class FirstJudge:
    """Judge 1, the run's model: the run's backend flags."""

    kind: str | None
    model: str | None
    base_urls: list[str] | None
    api_key_env: str | None


def _per_judge(flag: str, values: Sequence[str], judges: int) -> list[str | None]:
    """One value per judge: none given, one for all, or one each."""
    if not values:
        return [None] * judges
    if len(values) == 1:
        return [values[0]] * judges
    if len(values) == judges:
        return list(values)
    raise ValueError(f"{flag} was given {len(values)} times for {judges} judges: give it "
                     f"once for every judge, or once per judge in the order of --judge-model")


def split_judges(models: Sequence[str], backends: Sequence[str], base_urls: Sequence[str],
                 api_key_envs: Sequence[str]) -> tuple[FirstJudge, tuple[PanelJudge, ...]]:
    """Judge 1's flags and the panel; a ValueError of one line when the flags do not pair."""
    if len(models) <= 1:
        if len(backends) > 1 or len(api_key_envs) > 1:
            raise ValueError("--judge-backend and --judge-api-key-env are given once per "
                             "--judge-model")
        return FirstJudge(backends[0] if backends else None, models[0] if models else None,
                          list(base_urls) or None,
                          api_key_envs[0] if api_key_envs else None), ()
    if len(set(models)) != len(models) and len(base_urls) <= 1 and len(backends) <= 1:
        raise ValueError("--judge-model names the same model twice at the same place; "
                         "for one judge's agreement with itself use --judge-samples")
    n = len(models)
    kinds = _per_judge("--judge-backend", backends, n)
    urls = _per_judge("--judge-base-url", base_urls, n)
    keys = _per_judge("--judge-api-key-env", api_key_envs, n)
    if kinds[0] is None:
        raise ValueError("several judges need --judge-backend (once for all, or once each)")
    first = FirstJudge(kinds[0], models[0], [urls[0]] if urls[0] else None, keys[0])
    panel = tuple(PanelJudge.model_validate({"kind": kinds[i], "model": models[i],
                                             "base_url": urls[i], "api_key_env": keys[i]})
                  for i in range(1, n))
    for judge in panel:
        if judge.kind in ("builtin", "none"):
            raise ValueError(f"judge {judge.model}: a judge is a model on a server "
                             "(openai, openrouter, ollama or anthropic)")
    return first, panel


def recorded(panel: Sequence[PanelJudge]) -> list[dict[str, object]]:
    """The panel as run.json keeps it: URLs without credentials (`redact_url`)."""
    return [judge.model_dump() | {"base_url": redact_url(judge.base_url)
                                  if judge.base_url else None} for judge in panel]


def resumed_panel(kept: Sequence[PanelJudge], urls: Sequence[str | None],
                  keys: Sequence[str | None]) -> tuple[PanelJudge, ...]:
    """The panel a resume continues with. As for the run's model, a judge on a server of
    its own is named again on the command line (its URL, and its key variable if it had
    one): a run directory alone never points a request, or a key, anywhere. `urls`/`keys`:
    what the command line gave for judges 2, 3 ... (empty: nothing)."""
    out = []
    for i, judge in enumerate(kept):
        url = urls[i] if i < len(urls) else None
        key = keys[i] if i < len(keys) else None
        where = f"judge {i + 2} ({judge.model})"
        if judge.base_url is not None:
            if url is None:
                again = f"--judge-base-url {judge.base_url}" + \
                    (f" --judge-api-key-env {judge.api_key_env}" if judge.api_key_env else "")
                raise ValueError(f"{where} was asked at {judge.base_url}: name its server "
                                 f"again to resume ({again}, in the order of the judges)")
            if redact_url(url.rstrip("/")) != judge.base_url.rstrip("/"):
                raise ValueError(f"--judge-base-url {redact_url(url)} does not match "
                                 f"{where}'s {judge.base_url}; a resume continues with the "
                                 "same servers")
            if judge.api_key_env and key != judge.api_key_env:
                raise ValueError(f"{where} took its key from {judge.api_key_env}: name it "
                                 f"again (--judge-api-key-env {judge.api_key_env})")
            judge = judge.model_copy(update={"base_url": url})
        elif key is not None and key != judge.api_key_env:
            raise ValueError(f"--judge-api-key-env {key} is not {where}'s "
                             f"{judge.api_key_env or 'default'}; a resume keeps its key "
                             "variable")
        out.append(judge)
    return tuple(out)


def resumed_judges(directory: Path, base_urls: Sequence[str], api_key_envs: Sequence[str]
                   ) -> tuple[FirstJudge, dict[str, object]]:
    """A resume's judge flags: judge 1's for the run's model, and what was given for judges
    2, 3 ... (`panel_urls`, `panel_keys`, read by the definition's `resumed_options`). How
    many judges the run has is read from its run.json; an unreadable one is left to the
    resume to report."""
    try:
        judges = 1 + len(RunStore.open(directory).info.options.get("panel") or ())
    except (RunDirError, OSError, ValueError):
        judges = 1
    if judges == 1:
        return FirstJudge(None, None, list(base_urls) or None,
                          api_key_envs[0] if api_key_envs else None), {}
    urls = _per_judge("--judge-base-url", base_urls, judges)
    keys = _per_judge("--judge-api-key-env", api_key_envs, judges)
    first = FirstJudge(None, None, [urls[0]] if urls[0] else None, keys[0])
    return first, {"panel_urls": urls[1:], "panel_keys": keys[1:]}


def judges(given: ModelsGiven, resume: Path | None) -> ModelsTaken:
    """`visioneval evaluate`'s judge flags (`--judge-model` repeated for several judges):
    judge 1 as the run's model, and the panel as the `panel` option (a new run) or its
    servers named again (a resume: `panel_urls`, `panel_keys`)."""
    if resume is not None:
        first, again = resumed_judges(resume, given.base_url, given.api_key_env)
        return ModelsTaken(None, None, first.base_urls, first.api_key_env, again)
    first, panel = split_judges(given.model, given.backend, given.base_url, given.api_key_env)
    return ModelsTaken(first.kind, first.model, first.base_urls, first.api_key_env,
                       {"panel": panel} if panel else {})
