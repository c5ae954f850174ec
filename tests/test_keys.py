"""Keys go only to their own host; credentials in a URL are used but never recorded;
`--backend openrouter` is the OpenAI-compatible backend with OpenRouter's URL and key."""

from __future__ import annotations

import asyncio

import pytest
from cli_helpers import invoke, journal, load, salbench_args

from visioneval.backends.base import PreflightError
from visioneval.backends.keys import redact_url
from visioneval.backends.registry import BackendSpec, key_env, make_backend, resolved_base_url
from visioneval.core.records import GenerationSettings, Request, user


def ask(backend):
    async def go():
        async with backend:
            await backend.preflight()
            return await backend.complete(Request((user("Color, Size?"),), GenerationSettings()))

    return asyncio.run(go())


@pytest.mark.parametrize(("kind", "env", "path"), [("openai", "OPENAI_API_KEY", "/v1"),
                                                   ("anthropic", "ANTHROPIC_API_KEY", ""),
                                                   ("openrouter", "OPENROUTER_API_KEY", "/v1")])
def test_a_hosted_key_is_not_sent_to_another_host(serve, monkeypatch, kind, env, path):
    monkeypatch.setenv(env, "sk-hosted-only")
    server = serve(models=("m",))
    spec = BackendSpec(kind=kind, model="m", base_url=server.base_url + path)
    assert key_env(spec) is None
    assert ask(make_backend(spec)).ok
    assert server.stats.seen_auth == set()
    # Named for that URL, it is sent.
    spec = BackendSpec(kind=kind, model="m", base_url=server.base_url + path, api_key_env=env)
    assert key_env(spec) == env
    assert ask(make_backend(spec)).ok
    assert server.stats.seen_auth == {"sk-hosted-only"}


def test_hosted_apis_get_their_own_key():
    for kind, url, env in [("openai", None, "OPENAI_API_KEY"),
                           ("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
                           ("openrouter", None, "OPENROUTER_API_KEY"),
                           ("anthropic", None, "ANTHROPIC_API_KEY")]:
        spec = BackendSpec(kind=kind, model="m", base_url=url)
        assert key_env(spec) == env
        with pytest.raises(PreflightError, match=rf"missing API key: set \${env}"):
            make_backend(spec)


def test_openrouter_backend_is_openai_compatible_at_openrouter(monkeypatch):
    spec = BackendSpec(kind="openrouter", model="vendor/model")
    assert resolved_base_url(spec) == "https://openrouter.ai/api/v1"
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-key")
    backend = make_backend(spec)
    assert backend.base_url == "https://openrouter.ai/api/v1"
    assert backend.auth_headers() == {"Authorization": "Bearer or-key"}
    assert backend.chat_payload(Request((user("x"),), GenerationSettings()))["max_tokens"] == 128


def test_openrouter_on_the_command_line(serve, synth_data, tmp_path):
    result = invoke("salbench", "--backend", "openrouter", "--model", "x/y", "--data-dir",
                    synth_data, "--out", tmp_path / "a", "--configs", "P3")
    assert result.exit_code == 2 and "missing API key: set $OPENROUTER_API_KEY" in result.stderr
    server = serve(models=("m",))
    result = invoke(*salbench_args(server, synth_data, tmp_path / "b", "--configs", "P3",
                                   backend="openrouter"))
    assert result.exit_code == 0, result.output
    assert load(tmp_path / "b", "run.json")["backend"]["kind"] == "openrouter"


def test_redact_url():
    assert redact_url("http://u:p@h:8/v1?key=abc&api-version=2024&token=t") == \
        "http://***@h:8/v1?key=***&api-version=2024&token=***"
    assert redact_url("https://api.openai.com/v1") == "https://api.openai.com/v1"
    assert redact_url("http://h/v1?a=1&b=%2F") == "http://h/v1?a=1&b=%2F"  # untouched


def test_credentials_in_the_base_url_are_used_never_recorded(serve, synth_data, tmp_path):
    server = serve(models=("m",))
    host = server.base_url.removeprefix("http://")
    url = f"http://alice:pw-s3cret@{host}/v1?api_key=qk-s3cret&x=1"
    out = tmp_path / "run"
    args = salbench_args(server, synth_data, out, "--configs", "P3", "--num-samples", "2")
    args[args.index("--base-url") + 1] = url
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    import base64

    assert "Basic " + base64.b64encode(b"alice:pw-s3cret").decode() in server.stats.seen_auth
    assert "api_key=qk-s3cret" in server.stats.last_query
    info = load(out, "run.json")
    assert info["backend"]["base_url"] == f"http://***@{host}/v1?api_key=***&x=1"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"s3cret" not in data, path
    assert "s3cret" not in result.output
    assert len(journal(out)) == 2
    # The credentials are not recorded, so a resume asks for the URL again ...
    result = invoke("salbench", "--resume", out, "--no-progress")
    assert result.exit_code == 2 and "--base-url" in result.stderr
    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                    f"http://other@{host}/v1")
    assert result.exit_code == 2 and "does not match" in result.stderr
    assert "s3cret" not in result.output
    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url", url)
    assert result.exit_code == 0, result.output
