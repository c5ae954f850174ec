"""A person's page server and trial desk over real HTTP on 127.0.0.1, without a browser:
the waiting trial as the page gets it (options from a paradigm's chunk or the prompt, the
stimulus's parameters, its stored bytes), every answer checked before it is recorded (a
malformed or oversized body, another session's trial, a foreign Host), and the run
specification of a person's run (one trial at a time, no cache, no retries)."""

from __future__ import annotations

import asyncio

import aiohttp
import orjson
import pytest
from cli_helpers import invoke

from visioneval.backends.base import PreflightError
from visioneval.backends.human import HumanBackend
from visioneval.backends.registry import make_backend
from visioneval.benchmarks.vernier.paradigm import Vernier
from visioneval.core.backend_spec import BackendSpec
from visioneval.core.records import GenerationSettings, Message, Request
from visioneval.io.images import Image
from visioneval.paradigms.dataset import write_dataset
from visioneval.paradigms.paradigm import Design
from visioneval.runs.spec import RunSpec, SpecError

DISPLAY = {"device_pixel_ratio": 1, "screen_css": [1280, 800], "window_css": [1280, 700],
           "image_stored": [256, 256], "image_css": [256, 256], "image_device_px": 1,
           "color_gamut": "srgb", "browser": "Mozilla/5.0 Chrome/131.0"}
PROCEDURE = {"fixation_ms": 500, "blank_ms": 250, "time_limit_s": None, "break_every": 50}


def _request(text: str, png: bytes | None = None) -> Request:
    parts: tuple = (text,) if png is None else (Image.from_bytes(png), text)
    return Request((Message("user", parts),), GenerationSettings())


def _vernier() -> tuple[bytes, str]:
    paradigm = Vernier()
    drawn = paradigm.draw(paradigm.conditions()[0], 1.0, 0, 7)
    return drawn.png, drawn.question


async def _session(check) -> None:
    backend = HumanBackend("P01", port=0, farewell_s=0)
    await backend.preflight()
    assert backend.page_url is not None
    try:
        async with aiohttp.ClientSession() as http:
            await check(backend, http, backend.page_url)
    finally:
        await backend.aclose()


def _answer(key: str, answer: str, **extra) -> bytes:
    return orjson.dumps({"key": key, "answer": answer, "response_ms": 640.5,
                         "procedure": PROCEDURE, "display": DISPLAY, **extra})


def test_a_paradigm_trial_is_shown_with_its_options_and_answered_as_recorded():
    png, question = _vernier()

    async def check(backend: HumanBackend, http: aiohttp.ClientSession, url: str) -> None:
        backend.expect(10, 3)
        asked = asyncio.create_task(backend.complete(_request(question, png)))
        async with http.get(url + "next") as reply:
            trial = (await reply.json())["trial"]
        assert trial["options"] == ["left", "right"] and trial["number"] == 4
        assert trial["total"] == 10 and trial["stimulus"]["paradigm"] == "vernier"
        async with http.get(url + trial["images"][0]["url"]) as reply:
            assert await reply.read() == png  # the stored bytes, not re-encoded
            assert reply.headers["Content-Type"] == "image/png"
            assert reply.headers["Cache-Control"] == "no-store"
        async with http.post(url + "answer", data=_answer(trial["key"], "right")) as reply:
            assert reply.status == 200
        response = await asked
        assert response.text == "right" and response.person is not None
        assert response.person.observer == "P01" and response.person.trial == 4
        assert response.person.response_ms == 640.5
        assert response.person.display.browser.endswith("Chrome/131.0")

    asyncio.run(_session(check))


def test_a_prompt_without_a_chunk_gives_its_own_options_in_its_asked_format():
    async def check(backend: HumanBackend, http: aiohttp.ClientSession, url: str) -> None:
        question = "Which is it?\nA. red\nB. blue\nReply as 'Answer: <your choice>'."
        asked = asyncio.create_task(backend.complete(_request(question)))
        async with http.get(url + "next") as reply:
            trial = (await reply.json())["trial"]
        assert trial["options"] == ["A", "B"] and trial["stimulus"] is None
        async with http.post(url + "answer", data=_answer(trial["key"], "B")) as reply:
            assert reply.status == 200
        assert (await asked).text == "Answer: B"

    asyncio.run(_session(check))


def test_bad_answers_are_refused_with_one_line_and_the_trial_keeps_waiting():
    async def check(backend: HumanBackend, http: aiohttp.ClientSession, url: str) -> None:
        asked = asyncio.create_task(backend.complete(_request("Yes or no?")))
        async with http.get(url + "next") as reply:
            key = (await reply.json())["trial"]["key"]
        refused = {
            b"not json": (400, "answer field body"),
            _answer(key, "yes", response_ms=-1): (400, "answer field response_ms"),
            _answer(key, "yes", extra=1): (400, "answer field extra"),
            _answer(key, "x" * 20_000): (413, "at most 16384 bytes"),
            _answer("another-session-1", "yes"): (409, "no such trial is waiting"),
        }
        for body, (status, said) in refused.items():
            async with http.post(url + "answer", data=body) as reply:
                assert reply.status == status, body[:40]
                assert said in (await reply.json())["error"]
        assert not asked.done()
        async with http.post(url + "answer", data=_answer(key, "no")) as reply:
            assert reply.status == 200
        async with http.post(url + "answer", data=_answer(key, "yes")) as reply:
            assert reply.status == 409  # answered once only
        assert (await asked).text == "no"

    asyncio.run(_session(check))


def test_a_request_naming_another_host_is_refused():
    async def check(backend: HumanBackend, http: aiohttp.ClientSession, url: str) -> None:
        async with http.get(url, headers={"Host": "evil.example:80"}) as reply:
            assert reply.status == 403
        async with http.get(url) as reply:
            page = await reply.text()
        assert "observer P01" in page and "Nothing leaves this" in page

    asyncio.run(_session(check))


def test_the_next_poll_says_when_the_run_has_ended():
    async def check(backend: HumanBackend, http: aiohttp.ClientSession, url: str) -> None:
        backend._desk.finish()
        async with http.get(url + "next") as reply:
            assert await reply.json() == {"done": True}

    asyncio.run(_session(check))


@pytest.mark.parametrize("observer", ["Jane Doe", "", "a/b", "x" * 65])
def test_an_observer_id_is_a_short_code_never_a_name(observer):
    with pytest.raises(PreflightError, match="an observer id is up to 64 letters"):
        asyncio.run(HumanBackend(observer, port=0).preflight())


def test_the_page_is_served_on_this_machine_only():
    with pytest.raises(ValueError, match="served on this machine only"):
        make_backend(BackendSpec(kind="human", model="P01",
                                 base_url="http://192.0.2.1:8780"))


def test_a_persons_run_sends_one_trial_at_a_time_never_from_the_cache():
    spec = RunSpec.make(benchmark="vernier", options={"data": "x"},
                        backend=BackendSpec(kind="human", model="P01"))
    assert spec.engine.concurrency == 1 and spec.engine.cache_path is None
    assert spec.engine.max_attempts == 1 and spec.engine.timeout_s >= 86_400
    for extra, said in (({"batch": True}, "without --executor ray or --batch"),
                        ({"variants": ("blind",)}, "run the variants on a model")):
        with pytest.raises(SpecError, match=said):
            RunSpec.make(benchmark="vernier", options={"data": "x"},
                         backend=BackendSpec(kind="human", model="P01"), **extra)


def test_a_dry_run_for_a_person_gives_the_trials_and_about_how_long(tmp_path):
    write_dataset(Vernier(), tmp_path / "data", Design(trials=5), seed=1)  # 40 trials
    result = invoke("vernier", "--data", tmp_path / "data", "--backend", "human", "--model",
                    "P01", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "dry run for vernier by observer P01: nothing shown" in result.output
    assert "trials          40" in result.output and "about 1 min" in result.output
    assert not (tmp_path / "results").exists()
