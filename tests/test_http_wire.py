"""Broken and hostile model servers over real HTTP: malformed replies, redirects, endless
bodies and compression bombs cost a sample (retried, or an error record), never the run, and
no key follows a redirect. The server here is raw asyncio on 127.0.0.1, so it can send what
no well-behaved server library would."""

from __future__ import annotations

import asyncio
import functools
import gzip
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest
from cli_helpers import invoke, journal, load, salbench_args

from visioneval.backends.base import PermanentError, Unreachable
from visioneval.backends.http import HttpLimits
from visioneval.backends.openai import OpenAIBackend
from visioneval.core.records import GenerationSettings, Request, user

Stream = Callable[[asyncio.StreamWriter], Awaitable[None]]
Reply = bytes | Stream
ANSWER = "Color"


def head(status: int, *headers: str, reason: str = "X") -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", *headers, "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def reply(body: bytes, *headers: str, status: int = 200) -> bytes:
    return head(status, "Content-Type: application/json", f"Content-Length: {len(body)}",
                *headers) + body


def answer_body(path: str, text: str = ANSWER) -> bytes:
    """A good reply in the shape the path's protocol expects."""
    if path.endswith("/messages"):  # Anthropic's Messages API
        return orjson.dumps({"content": [{"type": "text", "text": text}],
                             "stop_reason": "end_turn"})
    return orjson.dumps({"choices": [{"message": {"role": "assistant", "content": text},
                                      "finish_reason": "stop"}]})


def good(path: str) -> bytes:
    return reply(answer_body(path))


MODELS = reply(orjson.dumps({"data": [{"id": "m"}]}))


async def endless(writer: asyncio.StreamWriter) -> None:
    """A chunked body that never ends (until the client hangs up)."""
    writer.write(head(200, "Content-Type: application/json", "Transfer-Encoding: chunked"))
    chunk = b"%x\r\n%s\r\n" % (1 << 16, b" " * (1 << 16))
    while True:
        writer.write(chunk)
        await writer.drain()


@functools.cache
def bomb() -> bytes:
    """2 MB of gzip that decodes to 2 GiB of zeros: 32 members of 64 MiB each (RFC 1952
    allows a series of members, and `gzip.decompress` reads them all)."""
    return gzip.compress(bytes(64 << 20), 9) * 32


def bomb_reply(path: str) -> bytes:
    return head(200, "Content-Type: application/json", "Content-Encoding: gzip",
                f"Content-Length: {len(bomb())}") + bomb()


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class RawServer:
    """Answers GET (the model list) and each POST from `script(n, path)`, n counting POSTs
    from 0; every exchange closes its connection. Records what each request carried."""

    script: Callable[[int, str], Reply] = lambda n, path: good(path)
    models: Callable[[str], Reply] = lambda path: MODELS
    seen: list[Seen] = field(default_factory=list)
    posts: int = 0
    base_url: str = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
            lines = raw.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, _, v in
                       (line.partition(":") for line in lines[1:] if line)}
            await reader.readexactly(int(headers.get("content-length", 0)))
            self.seen.append(Seen(method, path, headers))
            if method == "GET":
                out = self.models(path)
            else:
                out = self.script(self.posts, path)
                self.posts += 1
            if isinstance(out, bytes):
                writer.write(out)
                await writer.drain()
            else:
                await out(writer)
        except (OSError, asyncio.IncompleteReadError):
            pass  # the client hung up, as it should on a reply it will not read
        except asyncio.CancelledError:
            pass  # the test is over (ending quietly: Python 3.11 logs a cancelled handler)
        finally:
            writer.close()


@pytest.fixture
def raw_server():
    """Start RawServers in one event loop on a thread; all stopped at the end of the test."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers = []

    def start(**script) -> RawServer:
        server = RawServer(**script)

        async def listen():
            return await asyncio.start_server(server.handle, "127.0.0.1", 0)

        listening = asyncio.run_coroutine_threadsafe(listen(), loop).result(10)
        servers.append(listening)
        server.base_url = f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}"
        return server

    yield start

    async def stop():
        for listening in servers:
            listening.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


# Replies no HTTP/1.1 client may accept, each with the start of the one line it must give.
MALFORMED: dict[str, tuple[Callable[[str], bytes], str]] = {
    "header over 8 KB": (lambda p: reply(answer_body(p), "X-Long: " + "a" * 9000),
                         "malformed HTTP reply: header or status line over 8190 bytes"),
    "over 100 headers": (lambda p: reply(answer_body(p), *(f"X-H{i}: v" for i in range(200))),
                         "malformed HTTP reply"),
    "bad status line": (lambda p: b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\n{}",
                        "malformed HTTP reply"),
    "missing status line": (lambda p: b"Content-Type: application/json\r\n\r\n{}",
                            "malformed HTTP reply"),
    "HTTP/0.9 (a body alone)": (lambda p: answer_body(p), "malformed HTTP reply"),
    "NUL in a header": (lambda p: reply(answer_body(p), "X-A: a\0b"), "malformed HTTP reply"),
    "duplicate Content-Length": (
        lambda p: head(200, f"Content-Length: {len(answer_body(p))}", "Content-Length: 3")
        + answer_body(p), "malformed HTTP reply"),
    "bad chunking": (lambda p: head(200, "Transfer-Encoding: chunked") + b"zz\r\nab\r\n0\r\n\r\n",
                     "malformed HTTP reply"),
    "chunked and Content-Length": (
        lambda p: head(200, "Transfer-Encoding: chunked", "Content-Length: 5")
        + b"5\r\nhello\r\n0\r\n\r\n", "malformed HTTP reply"),
    "space in a header name": (lambda p: reply(answer_body(p), "X A: b"),
                               "malformed HTTP reply"),
    "body cut short": (lambda p: head(200, "Content-Length: 500") + answer_body(p),
                       "malformed HTTP reply body"),
    "status line only": (lambda p: b"HTTP/1.1 200 OK\r\n", "connection failed"),
    "no reply at all": (lambda p: b"", "connection failed"),
    "gzip body that is not gzip": (
        lambda p: reply(b"not gzip at all", "Content-Encoding: gzip"),
        "malformed HTTP reply: the gzip body does not decode"),
    "gzip body cut short": (
        lambda p: reply(gzip.compress(answer_body(p))[:-12], "Content-Encoding: gzip"),
        "malformed HTTP reply: the gzip body does not decode (the compressed body ends early)"),
}


def errors(out: Path) -> list[str]:
    latest = {r["id"]: r for r in journal(out)}
    return [r["response"]["error"] for r in latest.values() if r["response"]["error"]]


@pytest.mark.parametrize("kind", MALFORMED)
def test_malformed_reply_is_retried_or_an_error_record_never_a_crash(raw_server, synth_data,
                                                                     tmp_path, kind):
    bad, reason = MALFORMED[kind]
    # One request at a time: the first two samples get two bad replies (their whole budget),
    # every later sample a bad one and then a good one.
    server = raw_server(script=lambda n, path: bad(path) if n < 4 or n % 2 == 0 else good(path))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   "--concurrency", "1", "--max-attempts", "2"))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert server.posts == 4 + 6 * 2
    failed = errors(out)
    assert len(failed) == 2, failed
    for error in failed:
        assert error.startswith(f"gave up after 2 attempt(s): {reason}"), error
        assert "\n" not in error and len(error) < 250 and "b'" not in error, error
    answered = [r for r in journal(out) if not r["response"]["error"]]
    assert len(answered) == 6 and all(r["response"]["attempts"] == 2 for r in answered)
    assert all(r["response"]["text"] == ANSWER for r in answered)
    # A resume against a server that behaves sends the two failed samples again.
    server.script = lambda n, path: good(path)
    result = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                    server.base_url + "/v1")
    assert result.exit_code == 0, result.output
    assert server.posts == 18 and errors(out) == []


def test_one_bad_reply_in_five_costs_no_sample(raw_server, synth_data, tmp_path):
    kinds = list(MALFORMED.values())
    server = raw_server(script=lambda n, path: kinds[n // 5 % len(kinds)][0](path)
                        if n % 5 == 4 else good(path))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--splits", "synthetic",
                                   "--tasks", "D,R,VR", "--concurrency", "4"))
    assert result.exit_code == 0, result.output
    assert errors(out) == [] and len({r["id"] for r in journal(out)}) == 24
    assert server.posts >= 24 + 4  # at least one in five of 24 was bad, then sent again
    assert max(r["response"]["attempts"] for r in journal(out)) >= 2


@pytest.mark.parametrize(("backend", "status"), [("anthropic", 307), ("anthropic", 302),
                                                 ("openai", 307), ("openai", 302)])
def test_redirect_is_an_error_record_and_no_key_follows_it(raw_server, synth_data, tmp_path,
                                                           monkeypatch, backend, status):
    elsewhere = raw_server()  # records every request and header that reaches it
    secret = "sk-redirect-test-5e1a"
    env = "ANTHROPIC_API_KEY" if backend == "anthropic" else "MY_KEY"
    monkeypatch.setenv(env, secret)
    port = elsewhere.base_url.rsplit(":", 1)[1]
    target = f"http://user:hunter22@127.0.0.1:{port}/v1/steal?api_key=sk-in-location"
    server = raw_server(script=lambda n, path: head(status, f"Location: {target}",
                                                    "Content-Length: 0"))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   "--api-key-env", env, backend=backend))
    assert result.exit_code == 1, result.output
    assert elsewhere.seen == []  # not one request, so not one header
    key_header = "x-api-key" if backend == "anthropic" else "authorization"
    assert all(secret in s.headers[key_header] for s in server.seen)  # the key was sent
    assert server.posts == 8  # a redirect is final: not retried
    failed = errors(out)
    assert len(failed) == 8
    shown = f"http://***@127.0.0.1:{port}/v1/steal?api_key=***"
    assert all(e.startswith(f"failed after 1 attempt(s): HTTP {status} redirect to {shown}")
               for e in failed), failed
    assert "--base-url" in failed[0]
    for text in (result.output, (out / "samples.jsonl").read_text()):
        assert secret not in text and "hunter22" not in text and "sk-in-location" not in text


def test_redirect_to_a_malformed_target_names_it(raw_server, synth_data, tmp_path):
    server = raw_server(script=lambda n, path: head(302, "Location: http://[::1",
                                                    "Content-Length: 0"))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3"))
    assert result.exit_code == 1, result.output
    failed = errors(out)
    assert len(failed) == 8 and all("HTTP 302 redirect to http://[::1" in e for e in failed)


def test_unknown_content_encoding_is_an_error_record(raw_server, synth_data, tmp_path):
    server = raw_server(script=lambda n, path: reply(answer_body(path), "Content-Encoding: br"))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3"))
    assert result.exit_code == 1, result.output
    assert server.posts == 8  # not retried: the server would answer the same way
    assert all("Content-Encoding 'br'" in e for e in errors(out))


def test_endless_body_is_an_error_record(raw_server, synth_data, tmp_path):
    server = raw_server(script=lambda n, path: endless if n % 2 == 0 else good(path))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   "--concurrency", "2"))
    assert result.exit_code == 1, result.output
    assert server.posts == 8  # not retried: the next attempt would be as big
    failed = errors(out)
    assert len(failed) == 4 and all(
        e == "failed after 1 attempt(s): reply over 32 MB (--max-reply-mb); not read further"
        for e in failed), failed


PEAK_RSS = """
import atexit, sys

def report_peak(path):
    with open("/proc/self/status") as fh:
        peak = next(line for line in fh if line.startswith("VmHWM:")).split()[1]
    with open(path, "w") as out:
        out.write(peak)

atexit.register(report_peak, sys.argv[1])
sys.argv = ["visioneval", *sys.argv[2:]]
from visioneval.cli import app
app()
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
@pytest.mark.parametrize("kind", ["gzip bomb", "endless body"])
def test_hostile_body_leaves_memory_bounded(raw_server, synth_data, tmp_path, kind):
    hostile = bomb_reply if kind == "gzip bomb" else (lambda path: endless)
    server = raw_server(script=lambda n, path: hostile(path) if n % 2 == 0 else good(path))
    out, peak = tmp_path / "run", tmp_path / "peak"
    args = salbench_args(server, synth_data, out, "--configs", "P3", "--concurrency", "2",
                         "--max-attempts", "1", "--no-report")
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, str(peak), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert load(out, "run.json")["counts"]["records"] == 8
    failed = errors(out)
    assert len(failed) == 4 and all("reply over 32 MB" in e for e in failed), failed
    peak_mb = int(peak.read_text()) / 1024
    assert peak_mb < 512, f"peak RSS {peak_mb:.0f} MB against a 2 GiB reply"


def test_reply_cap_is_exact_and_compressed_replies_decode(raw_server):
    """Decoded size is what counts: a reply of exactly the cap is read, one byte more is not;
    gzip (one member or two), zlib-wrapped deflate and raw deflate all decode to the answer."""
    text = "x" * 300
    body = answer_body("/v1/chat/completions", text)

    def deflate(data: bytes, wbits: int) -> bytes:
        obj = zlib.compressobj(6, zlib.DEFLATED, wbits)
        return obj.compress(data) + obj.flush()

    half = len(body) // 2
    encoded = {"gzip": gzip.compress(body), "deflate": deflate(body, 15),
               "raw deflate": deflate(body, -15),
               "gzip, two members": gzip.compress(body[:half]) + gzip.compress(body[half:])}
    kinds = ["identity", *encoded]

    def script(n: int, path: str) -> bytes:
        kind = kinds[n % len(kinds)]
        if kind == "identity":
            return reply(body)
        encoding = "deflate" if "deflate" in kind else "gzip"
        return reply(encoded[kind], f"Content-Encoding: {encoding}")

    server = raw_server(script=script)
    request = Request((user("Which?"),), GenerationSettings())

    async def go(cap: int) -> list[str]:
        backend = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None,
                                limits=HttpLimits(max_reply_bytes=cap))
        async with backend:
            texts = []
            for _ in kinds:
                try:
                    texts.append((await backend.complete(request)).text or "")
                except PermanentError as exc:
                    texts.append(str(exc))
            return texts

    assert asyncio.run(go(len(body))) == [text] * len(kinds)
    over = f"reply over {(len(body) - 1) / 2**20:g} MB (--max-reply-mb); not read further"
    assert asyncio.run(go(len(body) - 1)) == [over] * len(kinds)
    assert all(s.headers["accept-encoding"] == "gzip, deflate" for s in server.seen)


PREFLIGHT = {
    "redirect": (lambda other: head(307, f"Location: {other}/v1/models", "Content-Length: 0"),
                 "redirects to {other}/v1/models (HTTP 307)"),
    "malformed": (lambda other: b"HTTP/1.1 abc OK\r\n\r\n", "malformed HTTP reply"),
    "endless": (lambda other: endless, "reply over 32 MB (--max-reply-mb)"),
}


@pytest.mark.parametrize("kind", PREFLIGHT)
def test_preflight_on_a_broken_model_list_is_one_line_and_exit_2(raw_server, synth_data,
                                                                 tmp_path, kind):
    elsewhere = raw_server()
    answer, line = PREFLIGHT[kind]
    server = raw_server(models=lambda path: answer(elsewhere.base_url))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3"))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert line.format(other=elsewhere.base_url) in lines[0]
    if kind == "redirect":
        assert "--base-url" in lines[0]
    assert elsewhere.seen == [] and server.posts == 0 and not out.exists()


@pytest.mark.slow
def test_preflight_timeout_is_the_given_one(raw_server):
    async def silent(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    server = raw_server(models=lambda path: silent)
    backend = OpenAIBackend("m", server.base_url + "/v1", api_key=None, api_key_env=None,
                            limits=HttpLimits(preflight_timeout_s=0.3))

    async def go() -> None:
        async with backend:
            await backend.preflight()

    with pytest.raises(Unreachable, match=r"no answer within 0\.3 s"):
        asyncio.run(go())


def test_limits_must_be_positive():
    with pytest.raises(ValueError):
        HttpLimits(max_reply_bytes=0)
    with pytest.raises(ValueError):
        HttpLimits(preflight_timeout_s=0)


# The engine's own flags reach the wire: --timeout for the checks before the run,
# --max-reply-mb for every reply; a wrong URL is said at once, or stops the run.

def _stall(path: str) -> Stream:
    async def hang(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(60)
    return hang


@pytest.mark.slow
def test_the_preflight_honours_timeout(raw_server, synth_data, tmp_path):
    server = raw_server(models=_stall)
    started = time.monotonic()
    result = invoke(*salbench_args(server, synth_data, tmp_path / "run", "--configs", "P3",
                                   "--timeout", "0.3"))
    assert result.exit_code == 2 and time.monotonic() - started < 20
    assert "no answer within 0.3 s" in result.stderr


def test_max_reply_mb_caps_a_reply_and_is_recorded(raw_server, synth_data, tmp_path):
    big = "x" * (700 << 10)  # 700 KB of answer
    server = raw_server(script=lambda n, path: reply(answer_body(path, big)))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--configs", "P3",
                                   "--max-reply-mb", "0.5", "--no-cache"))
    assert result.exit_code == 1, result.output
    errors = {r["response"]["error"] for r in journal(out)}
    assert errors == {"failed after 1 attempt(s): reply over 0.5 MB (--max-reply-mb); not "
                      "read further"}
    assert load(out, "run.json")["engine"]["max_reply_mb"] == 0.5
    # The same run with room for the answer: a resume that raises the cap says so.
    resumed = invoke("salbench", "--resume", out, "--no-progress", "--base-url",
                     server.base_url + "/v1", "--max-reply-mb", "2")
    assert resumed.exit_code == 0, resumed.output
    assert "--max-reply-mb: 2.0 replaces the run's recorded 0.5" in resumed.stderr


def test_a_url_that_answers_404_to_everything_stops_the_run(raw_server, synth_data,
                                                            tmp_path):
    server = raw_server(script=lambda n, path: reply(b'{"detail": "Not Found"}', status=404))
    out = tmp_path / "run"
    result = invoke(*salbench_args(server, synth_data, out, "--splits", "synthetic",
                                   "--concurrency", "1", "--no-cache"))
    assert result.exit_code == 2, result.output
    assert server.posts == 5  # not all 24
    line = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(line) == 1 and f"{server.base_url}/v1/chat/completions answered HTTP 404 to 5 " \
        "requests in a row" in line[0] and "ends in /v1" in line[0]


def test_a_base_url_without_its_v1_is_said_before_anything_is_sent(raw_server, synth_data,
                                                                   tmp_path):
    not_found = reply(b"404: Not Found", status=404)
    server = raw_server(models=lambda path: MODELS if path == "/v1/models" else not_found)
    result = invoke("salbench", "--backend", "openai", "--base-url", server.base_url,
                    "--model", "m", "--data-dir", synth_data, "--out", tmp_path / "run",
                    "--configs", "P3", "--no-progress")
    assert result.exit_code == 2
    assert f"use --base-url {server.base_url}/v1" in result.stderr
    assert server.posts == 0 and not (tmp_path / "run").exists()
