"""The pieces of a run's cost: image tokens by each provider's published rule (checked on the
worked examples of OpenAI's and Anthropic's guides), prices (the user's, the genai-prices
table, none for a self-hosted server), the provider's reported cost in a reply, and how a
run's sessions add up to `counts.cost` (an unknown price is absent with a reason, never 0)."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price

from visioneval.backends.openai import OpenAIBackend, parse_chat_response
from visioneval.backends.replies import MetadataReader
from visioneval.core.records import GenerationSettings, Request, Response, user
from visioneval.core.runfiles import SessionInfo
from visioneval.cost.images import image_rule, text_tokens
from visioneval.cost.money import usd
from visioneval.cost.prices import (
    GIVEN,
    MODEL_REMEDY,
    ModelRef,
    NoPrice,
    Price,
    given_price,
    price_for,
    self_hosted,
)
from visioneval.cost.total import NOTHING_SENT, run_cost
from visioneval.cost.usage import UNRECORDED, UsageBook

LOOPBACK = ModelRef("openai", "m", "http://127.0.0.1:8765/v1")


@pytest.mark.parametrize(("model", "size", "tokens"), [
    # OpenAI's guide: 1024 x 1024 costs 765 (4 tiles); 2048 x 4096 costs 1105 (6 tiles).
    ("gpt-4o", (1024, 1024), 765),
    ("gpt-4o-2024-08-06", (2048, 4096), 1105),
    ("openai/gpt-4o", (512, 512), 255),  # OpenRouter's provider prefix is ignored
    ("gpt-4o-mini", (512, 512), 2833 + 5667),
    # Patches: 1024 x 1024 is 1024 patches; 1800 x 2400 is scaled down to 1452 patches.
    ("gpt-4.1-mini", (1024, 1024), math.ceil(1024 * 1.62)),
    ("gpt-4.1-mini", (1800, 2400), math.ceil(1452 * 1.62)),
    ("gpt-4.1-nano", (1800, 2400), math.ceil(1452 * 2.46)),
    # Anthropic's guide: 200 x 200 ~ 54 tokens, 1092 x 1092 ~ 1590; long edges over 1568
    # are scaled down first, and no image costs more than about 1600.
    ("claude-3-5-sonnet-20241022", (200, 200), 54),
    ("anthropic/claude-3.5-sonnet", (1092, 1092), 1590),
    ("claude-3-haiku", (3000, 1000), math.ceil(1568 * (1000 * 1568 / 3000) / 750)),
    ("claude-3-opus", (1568, 1568), 1600),
])
def test_image_tokens_follow_the_providers_published_rules(model, size, tokens):
    rule = image_rule(model)
    assert rule is not None and rule.tokens(*size) == tokens


@pytest.mark.parametrize("model", ["m", "llava:7b", "qwen/qwen2.5-vl-72b-instruct",
                                   "o3-mini", "gemini-1.5-pro"])
def test_a_model_without_a_known_rule_has_no_image_estimate(model):
    assert image_rule(model) is None


def test_text_is_estimated_as_characters_over_four_rounded_up():
    assert [text_tokens(n) for n in (0, 1, 4, 5, 400)] == [0, 1, 1, 2, 100]


@pytest.mark.parametrize(("url", "own"), [
    ("http://127.0.0.1:8765/v1", True), ("http://localhost:11434", True),
    ("http://10.1.2.3:8000/v1", True), ("http://192.168.0.7/v1", True),
    ("http://[::1]:8000/v1", True), ("http://gpu-node-3:8000/v1", True),
    ("http://vllm.internal/v1", True), ("https://api.openai.com/v1", False),
    ("https://openrouter.ai/api/v1", False), ("https://api.anthropic.com", False),
])
def test_self_hosted_servers_are_told_apart_from_hosted_apis(url, own):
    assert self_hosted(url) is own


def test_the_users_prices_win_and_zero_is_a_real_price():
    given = given_price(0, 0)
    assert price_for(LOOPBACK, given) is given and given.free
    assert given.cost(10**9, 10**9) == 0
    assert price_for(ModelRef("openai", "gpt-4o", "https://api.openai.com/v1"),
                     given_price(1, 2)).source == GIVEN


def test_a_self_hosted_model_without_prices_has_none_and_says_how_to_give_them():
    price = price_for(LOOPBACK)
    assert isinstance(price, NoPrice)
    assert "127.0.0.1" in price.reason and "--price-in" not in price.reason
    assert price.remedy == MODEL_REMEDY and price.remedy.startswith("--price-in USD")
    assert price.line() == f"{price.reason}: {MODEL_REMEDY}"


def test_builtin_baselines_cost_nothing():
    price = price_for(ModelRef("builtin", "random"))
    assert isinstance(price, Price) and price.free


@pytest.mark.parametrize(("model", "url", "provider"), [
    ("gpt-4o", "https://api.openai.com/v1", "openai"),
    ("openai/gpt-4o", "https://openrouter.ai/api/v1", "openrouter"),
    ("claude-3-5-sonnet-20241022", "https://api.anthropic.com", "anthropic"),
])
def test_hosted_models_are_priced_by_the_genai_prices_table(model, url, provider):
    price = price_for(ModelRef("openai", model, url))
    assert isinstance(price, Price) and "genai-prices" in price.source
    assert provider in price.source
    # Per million tokens: the table's own price for a million of each, at the first tier.
    table = calc_price(Usage(input_tokens=1000, output_tokens=1000), model,
                       provider_api_url=url)
    assert price.usd_in == Decimal(table.input_price) * 1000
    assert price.usd_out == Decimal(table.output_price) * 1000


def test_a_model_the_table_does_not_know_has_no_price():
    price = price_for(ModelRef("openai", "no-such-model-xyz", "https://api.openai.com/v1"))
    assert isinstance(price, NoPrice) and "no-such-model-xyz" in price.reason


def reply(usage: dict) -> dict:
    return {"choices": [{"message": {"content": "yes"}, "finish_reason": "stop"}],
            "usage": usage}


def test_openrouters_reported_cost_is_read_and_byok_adds_the_upstream_bill():
    meta = MetadataReader("test")
    plain = parse_chat_response(reply({"prompt_tokens": 10, "completion_tokens": 2,
                                       "cost": 0.00042}), meta)
    assert plain.cost_usd == 0.00042 and plain.prompt_tokens == 10
    byok = parse_chat_response(reply({"cost": 0.01, "is_byok": True, "cost_details": {
        "upstream_inference_cost": 0.19}}), meta)
    assert byok.cost_usd == pytest.approx(0.2)
    # Without BYOK the upstream figure is what OpenRouter paid: already in `cost`.
    routed = parse_chat_response(reply({"cost": 0.01, "cost_details": {
        "upstream_inference_cost": 0.19}}), meta)
    assert routed.cost_usd == 0.01
    assert parse_chat_response(reply({"prompt_tokens": 3}), meta).cost_usd is None


@pytest.mark.parametrize("bad", ["0.1", True, -1, float("nan"), {"usd": 1}])
def test_a_malformed_cost_is_dropped_and_the_answer_kept(bad, caplog):
    response = parse_chat_response(reply({"cost": bad}), MetadataReader("test"))
    assert response.text == "yes" and response.cost_usd is None
    assert "usage.cost" in caplog.text


def test_only_openrouter_is_asked_for_the_cost_in_the_request():
    request = Request((user("hi"),), GenerationSettings())
    routed = OpenAIBackend("openai/gpt-4o", "https://openrouter.ai/api/v1", api_key="k",
                           api_key_env=None)
    direct = OpenAIBackend("gpt-4o", "https://api.openai.com/v1", api_key="k",
                           api_key_env=None)
    assert routed.chat_payload(request)["usage"] == {"include": True}
    assert "usage" not in direct.chat_payload(request)


def test_a_response_without_a_cost_keeps_its_json_as_before():
    assert "cost_usd" not in Response(text="a", prompt_tokens=1).model_dump_json()
    assert Response.model_validate_json(
        Response(text="a", cost_usd=0.5).model_dump_json()).cost_usd == 0.5


def session(book: UsageBook) -> SessionInfo:
    return SessionInfo.model_validate({"usage": book.as_dict()})


def test_sessions_add_up_and_priced_tokens_cost_exactly_what_they_imply():
    first, second = UsageBook(), UsageBook()
    first.add("model", "P3", Response(text="a", prompt_tokens=1000, completion_tokens=10))
    second.add("model", "P3", Response(text="b", prompt_tokens=500, completion_tokens=5))
    second.add("model", "O3", Response(text="c", prompt_tokens=70, completion_tokens=3))
    cost = run_cost([session(first), session(second)], LOOPBACK, None, given_price(1, 2))
    assert cost["usd"] == (1570 * 1 + 18 * 2) / 1e6
    assert cost["groups"] == {"P3": (1500 + 30) / 1e6, "O3": (70 + 6) / 1e6}
    assert cost["source"] == GIVEN and "unavailable" not in cost


def test_the_providers_cost_wins_over_prices_and_the_rest_is_priced():
    book = UsageBook()
    for _ in range(3):
        book.add("model", "g", Response(text="a", prompt_tokens=100, completion_tokens=1,
                                        cost_usd=0.1))
    book.add("model", "g", Response(text="b", prompt_tokens=1000, completion_tokens=0))
    cost = run_cost([session(book)], LOOPBACK, None, given_price(1, 2))
    assert cost["usd"] == pytest.approx(0.3 + 1000 / 1e6, rel=1e-12)
    assert cost["source"] == f"provider + {GIVEN}"


def test_an_unknown_price_is_absent_with_its_reason_never_zero():
    book = UsageBook()
    book.add("model", "g", Response(text="a", prompt_tokens=10, completion_tokens=1))
    cost = run_cost([session(book)], LOOPBACK, None, None)
    assert cost["usd"] is None and "no price for m at 127.0.0.1" in cost["unavailable"]
    assert cost["groups"] == {"g": None} and cost["source"] == "unknown"


def test_answers_without_token_counts_make_a_paid_cost_unknown_but_not_a_free_one():
    book = UsageBook()
    book.add("model", "g", Response(text="a"))
    paid = run_cost([session(book)], LOOPBACK, None, given_price(1, 2))
    assert paid["usd"] is None and "without token counts" in paid["unavailable"]
    assert run_cost([session(book)], LOOPBACK, None, given_price(0, 0))["usd"] == 0.0


def test_failed_requests_without_usage_are_taken_as_free():
    book = UsageBook()
    book.add("model", "g", Response(error="HTTP 500"))
    cost = run_cost([session(book)], LOOPBACK, None, None)
    assert cost["usd"] == 0.0


def test_a_run_that_sent_nothing_cost_nothing_and_says_why():
    cost = run_cost([SessionInfo.model_validate({"usage": {}}), SessionInfo(sent=0)], LOOPBACK,
                    None, None)
    assert cost == {"usd": 0.0, "source": NOTHING_SENT, "groups": {}}


def test_a_judge_is_priced_apart_and_gets_the_models_prices_only_when_it_is_that_model():
    book = UsageBook()
    book.add("model", "g", Response(text="a", prompt_tokens=100, completion_tokens=0))
    book.add("judge", "g", Response(text="{}", prompt_tokens=200, completion_tokens=0))
    other = ModelRef("openai", "judge", "http://127.0.0.1:9/v1")
    cost = run_cost([session(book)], LOOPBACK, other, given_price(1, 2))
    assert cost["usd"] is None and cost["unavailable"].startswith("judge:")
    same = run_cost([session(book)], LOOPBACK, LOOPBACK, given_price(1, 2))
    assert same["usd"] == 300 / 1e6


def test_an_older_session_without_usage_is_priced_from_its_totals():
    older = SessionInfo.model_validate({"sent": 4, "prompt_tokens": 400,
                                        "completion_tokens": 8})
    cost = run_cost([older], LOOPBACK, None, given_price(1, 2))
    assert cost["usd"] == 416 / 1e6 and list(cost["groups"]) == [UNRECORDED]


@pytest.mark.parametrize(("value", "text"), [
    (None, "unknown"), (0, "$0"), (1234.567, "$1,234.57"), (0.0123, "$0.0123"),
    (0.5, "$0.500"), (0.000004567, "$0.00000457")])
def test_dollars_are_written_for_people(value, text):
    assert usd(value) == text
