"""The loopback's simulated observer: it reads each stimulus's own parameters from its PNG
and answers from the psychometric function ψ (detection) or as an equal-variance
signal-detection observer (yes/no); its answers match ψ and Φ within binomial error, and the
served identity names the observer."""

from __future__ import annotations

import io
import math
import urllib.request

import orjson
import pybase64
import pytest
from PIL import Image
from scipy.stats import norm

from visioneval.benchmarks.psychophysics.params import StimulusParams, png_info
from visioneval.benchmarks.psychophysics.stimuli import Trial, make_stimulus
from visioneval.commands.loopback import ObserverFlags, build_script
from visioneval.loopback.observer import Curve, Observer, answer_observer, parse_curves
from visioneval.loopback.server import Prompt
from visioneval.stats.psychometric import psi

N = 400


def _png(**fields) -> bytes:
    """A small PNG carrying stimulus parameters (the observer reads only those)."""
    params = StimulusParams(**{"experiment": "detection", "feature": "orientation",
                               "level": 1.0, "unit": "deg", "sign": 1, "set_size": 16,
                               "target_present": True, "spread": 0.0, "seed": 0,
                               "image_size": 8, "target_box": None, **fields})
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 200, 200)).save(buf, format="PNG", pnginfo=png_info(params))
    return buf.getvalue()


def _ask(answer, png: bytes, text: str = "Which feature?") -> str:
    return answer(Prompt(text, [pybase64.b64encode(png).decode()]))


def _within_binomial(k: int, n: int, p: float) -> bool:
    return abs(k / n - p) <= 3 * math.sqrt(p * (1 - p) / n)


OBSERVER = Observer({"orientation": Curve(8.0, 3.0, 0.02), "color": Curve(6.0, 2.5, 0.02),
                     "size": Curve(0.15, 2.0, 0.02)}, "weibull", 1.5, 0.2, seed=3)


@pytest.mark.parametrize(("feature", "level"), [("orientation", 4.0), ("orientation", 8.0),
                                                 ("color", 9.0), ("size", 0.1)])
def test_detection_answers_follow_psi(feature, level):
    answer = answer_observer(OBSERVER)
    replies = [_ask(answer, _png(feature=feature, level=level, seed=s)) for s in range(N)]
    curve = OBSERVER.curves[feature]
    p = psi(level, curve.alpha, curve.beta, 1 / 3, curve.lapse, "weibull")
    assert _within_binomial(replies.count(feature), N, p)
    wrong = [r for r in replies if r != feature]
    assert set(wrong) == {"orientation", "color", "size"} - {feature}
    assert _within_binomial(wrong.count(sorted(set(wrong))[0]), len(wrong), 0.5)


def test_the_logistic_form_is_used_when_asked():
    observer = Observer({"color": Curve(6.0, 0.8, 0.0)}, "logistic", seed=1)
    answer = answer_observer(observer)
    replies = [_ask(answer, _png(feature="color", level=4.0, seed=s)) for s in range(N)]
    assert _within_binomial(replies.count("color"), N, psi(4.0, 6.0, 0.8, 1 / 3, 0.0,
                                                          "logistic"))


def test_yes_no_hits_and_false_alarms_follow_signal_detection():
    answer = answer_observer(OBSERVER)
    hits = [_ask(answer, _png(experiment="presence", target_present=True, seed=s))
            for s in range(N)].count("yes")
    false_alarms = [_ask(answer, _png(experiment="conjunction", feature="color+orientation",
                                      target_present=False, seed=s))
                    for s in range(N, 2 * N)].count("yes")
    assert _within_binomial(hits, N, float(norm.cdf(1.5 / 2 - 0.2)))
    assert _within_binomial(false_alarms, N, float(norm.cdf(-1.5 / 2 - 0.2)))


def test_an_always_yes_observer_is_expressible():
    answer = answer_observer(Observer(dprime=0.0, criterion=-math.inf))
    assert {_ask(answer, _png(experiment="presence", target_present=p, seed=s))
            for s in range(50) for p in (True, False)} == {"yes"}


def test_answers_repeat_for_the_same_stimulus_and_observer_seed():
    pngs = [_png(level=8.0, seed=s) for s in range(60)]
    first = [_ask(answer_observer(OBSERVER), p) for p in pngs]
    assert first == [_ask(answer_observer(OBSERVER), p) for p in pngs]
    other = Observer(OBSERVER.curves, seed=4)
    assert first != [_ask(answer_observer(other), p) for p in pngs]


def test_an_image_without_parameters_gets_a_plain_refusal():
    buf = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buf, format="PNG")
    assert "no psychophysics stimulus" in _ask(answer_observer(OBSERVER), buf.getvalue())


def _chat(base_url: str, png: bytes) -> str:
    body = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "Which feature?"},
        {"type": "image_url", "image_url": {
            "url": "data:image/png;base64," + pybase64.b64encode(png).decode()}}]}]}
    request = urllib.request.Request(f"{base_url}/v1/chat/completions",
                                     data=orjson.dumps(body),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return orjson.loads(reply.read())["choices"][0]["message"]["content"]


def _root(base_url: str) -> str:
    with urllib.request.urlopen(f"{base_url}/v1/models", timeout=10) as reply:
        return orjson.loads(reply.read())["data"][0]["root"]


def test_the_server_answers_rendered_stimuli_and_names_its_observer(serve):
    script = build_script(("m",), "observer", 0.0, 0.0, "500", 0,
                          observer=ObserverFlags("orientation=0.5:4:0", seed=2))
    server = serve(answer=script.answer)
    easy = make_stimulus(Trial("detection", "orientation", 45.0, 8, seed=1))
    absent = make_stimulus(Trial("presence", "color", 5.0, 8, target_present=False, seed=2))
    assert _chat(server.base_url, easy.png) == "orientation"  # ψ(45) = 1 with no lapses
    assert _chat(server.base_url, absent.png) in {"yes", "no"}
    root = _root(server.base_url)
    assert root.startswith("loopback/observer[") and "orientation=0.5:4:0" in root
    assert "seed=2" in root and "form=weibull" in root
    other = serve(answer=build_script(("m",), "observer", 0.0, 0.0, "500", 0,
                                      observer=ObserverFlags(dprime=2.0)).answer)
    assert _root(other.base_url) != root


def test_observer_flags_are_checked_with_one_line_each():
    with pytest.raises(ValueError, match="FEATURE=THRESHOLD:SLOPE:LAPSE"):
        parse_curves("2shape=1:2:0")
    with pytest.raises(ValueError, match="lapse in"):
        parse_curves("vernier=0:1:0.6")
    with pytest.raises(ValueError, match="are numbers"):
        parse_curves("size=a:2:0")
    with pytest.raises(ValueError, match="--observer-form 'probit'"):
        build_script(("m",), "observer", 0.0, 0.0, "500", 0,
                     observer=ObserverFlags(form="probit"))
    with pytest.raises(ValueError, match="need --answer observer"):
        build_script(("m",), "popout", 0.0, 0.0, "500", 0, observer=ObserverFlags())
    assert parse_curves("size=0.15:2:0.02") == {"size": Curve(0.15, 2.0, 0.02)}
    assert parse_curves("vernier=-0.5:1:0.02,crowding/flanked=2:3:0") == {
        "vernier": Curve(-0.5, 1.0, 0.02), "crowding/flanked": Curve(2.0, 3.0, 0.0)}
