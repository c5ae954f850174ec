"""The loopback's scripted rubric judges, asked over real HTTP with the judge requests
`visioneval evaluate` sends: the judge that sees finds each edit of a candidate answer
(a count, an absent object, a left-out element, a colour) in its details and scores; with
the images removed it says it could not check anything; one with a position bias reverses
the changes it sees when the images swap places (labels kept with their images), the one
that sees does not; the guessing judge differs between identical requests; the judge blind
to counts misses a wrong count; a prompt that is no rubric judge's gets the one-line
refusal."""

from __future__ import annotations

import io
import json
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image as PILImage

from visioneval.backends import anthropic, body, ollama, openai
from visioneval.commands.loopback import build_script
from visioneval.core.records import GenerationSettings, Message, Request
from visioneval.evaluators.judge import Case, judge_request, parse_reply
from visioneval.evaluators.rubric import load_rubric
from visioneval.io.images import Image
from visioneval.loopback import judges
from visioneval.loopback.scenes import Scene, SceneObject, read_scene, write_scene
from visioneval.loopback.server import ANSWER_MODES, Prompt, answer_judge

EXAMPLES = Path(__file__).parent.parent / "examples" / "evaluators"
SCENES = EXAMPLES / "scenes"
SETTINGS = GenerationSettings(max_tokens=512)
DESCRIPTION = load_rubric("image-description")
COMPARISON = load_rubric("comparison")
ROUTES = {"openai": ("/v1/chat/completions", openai.chat_payload),
          "ollama": ("/api/chat", ollama.chat_payload),
          "anthropic": ("/v1/messages", anthropic.messages_payload)}


def image(path: Path) -> Image:
    return Image.from_bytes(path.read_bytes())


def post(server, request: Request, protocol: str = "openai") -> str:
    """The reply text to `request` sent as that protocol's client sends it."""
    path, payload = ROUTES[protocol]
    http = urllib.request.Request(server.base_url + path, data=body.dumps(payload("m", request)),
                                  headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(http, timeout=10) as reply:
        data = json.loads(reply.read())
    if protocol == "openai":
        return data["choices"][0]["message"]["content"]
    return data["message"]["content"] if protocol == "ollama" else data["content"][0]["text"]


def verdict(server, request: Request, rubric=DESCRIPTION, protocol: str = "openai") -> dict:
    return parse_reply(post(server, request, protocol), rubric)


def office(output: str) -> Request:
    case = Case("Describe this office photo.", output, images=(image(EXAMPLES / "office.png"),))
    return judge_request(DESCRIPTION, case, SETTINGS)


def team(output: str) -> Request:
    case = Case("Describe this photo.", output, images=(image(SCENES / "team.png"),))
    return judge_request(DESCRIPTION, case, SETTINGS)


def room(output: str) -> Request:
    """The comparison of the room before (Image 1) and after a plant was put in (Image 2)."""
    pair = (image(SCENES / "room-before.png"), image(SCENES / "room-after.png"))
    return judge_request(COMPARISON, Case("What changed between the images?", output,
                                          images=pair), SETTINGS)


def without_images(request: Request) -> Request:
    """The blind control: the same request, text unchanged, no image parts."""
    return replace(request, messages=tuple(
        Message(m.role, tuple(p for p in m.parts if isinstance(p, str)))
        for m in request.messages))


def swapped(request: Request) -> Request:
    """The order control: "Image 2:" <image 2> "Image 1:" <image 1>."""
    user = request.messages[1]
    text, label1, image1, label2, image2 = user.parts
    assert (label1, label2) == ("Image 1:", "Image 2:")
    return replace(request, messages=(request.messages[0], Message(
        "user", (text, label2, image2, label1, image1))))


RIGHT = "Three people in red sit at a desk with a grey laptop; a green plant stands on the left."


def test_judge_sees_names_a_wrong_count_and_what_is_left_out(serve):
    server = serve(answer=ANSWER_MODES["judge-sees"])
    found = verdict(server, office("Three people sit at a wooden desk in a bright office."))
    assert found["details"] == {"hallucinations": ["three people (the image shows 2)"],
                                "missing_elements": ["plant"]}
    assert found["scores"] == {"visual_accuracy": 7, "completeness": 7, "clarity": 8,
                               "relevance": 8}
    right = verdict(server, office("Two people sit at a desk; a plant stands on the right."))
    assert right["scores"]["visual_accuracy"] == right["scores"]["completeness"] == 10
    assert right["details"] == {"hallucinations": [], "missing_elements": []}


@pytest.mark.parametrize(("edited", "hallucinations", "missing", "accuracy", "complete"), [
    (RIGHT.replace("Three", "Five"), ["five people (the image shows 3)"], [], 7, 10),
    (RIGHT + " A giraffe stands in the background.", ["a giraffe (not in the image)"], [], 7,
     10),
    (RIGHT.replace(" with a grey laptop", ""), [], ["laptop"], 10, 8),
    (RIGHT.replace("grey laptop", "blue laptop"), ["a blue laptop (the laptop is grey)"], [],
     7, 10),
], ids=["count", "absent-object", "removed-element", "colour"])
def test_judge_sees_every_edit_of_a_right_answer(serve, edited, hallucinations, missing,
                                                 accuracy, complete):
    server = serve(answer=ANSWER_MODES["judge-sees"])
    right = verdict(server, team(RIGHT))
    assert right["details"] == {"hallucinations": [], "missing_elements": []}
    assert right["scores"] == {"visual_accuracy": 10, "completeness": 10, "clarity": 8,
                               "relevance": 8}
    found = verdict(server, team(edited))
    assert found["details"] == {"hallucinations": hallucinations, "missing_elements": missing}
    assert (found["scores"]["visual_accuracy"], found["scores"]["completeness"]) == \
        (accuracy, complete)


def test_without_the_image_it_checks_nothing(serve):
    server = serve(answer=ANSWER_MODES["judge-sees"])
    request = office("Three people sit at a wooden desk in a bright office.")
    blind = without_images(request)
    assert blind.messages[1].text() == request.messages[1].text()  # the text unchanged
    found = verdict(server, blind)
    assert set(found["scores"].values()) == {judges.BLIND_SCORE}
    assert found["details"] == {"hallucinations": [], "missing_elements": []}
    assert "No image was attached" in found["reasoning"]


@pytest.mark.parametrize("protocol", ROUTES)
def test_a_position_bias_shows_when_the_images_swap_places(serve, protocol):
    sees = serve(answer=ANSWER_MODES["judge-sees"])
    first = serve(answer=ANSWER_MODES["judge-first"])
    request = room("A green plant was added on the floor to the right of the desk; the desk, "
                   "the chair and the cup are unchanged.")
    in_order = verdict(sees, request, COMPARISON, protocol)
    assert in_order["scores"] == {"change_detection": 10, "spatial_precision": 8,
                                  "completeness": 10, "clarity": 8}
    assert verdict(sees, swapped(request), COMPARISON, protocol) == in_order
    assert verdict(first, request, COMPARISON, protocol) == in_order
    biased = verdict(first, swapped(request), COMPARISON, protocol)
    assert biased["scores"]["change_detection"] == 7
    assert biased["scores"]["completeness"] == 0
    assert biased["details"]["hallucinations"] == [
        "a green plant was added (Image 1 shows 1 green plant, Image 2 shows no plant)"]


def test_judge_sees_a_recolouring_and_an_invented_change(serve):
    server = serve(answer=ANSWER_MODES["judge-sees"])
    pair = (image(SCENES / "vase-before.png"), image(SCENES / "vase-after.png"))

    def ask(output: str) -> dict:
        return verdict(server, judge_request(COMPARISON, Case("What changed?", output,
                                                              images=pair), SETTINGS),
                       COMPARISON)

    right = ask("The vase on the right changed from red to blue; the bowl and the table are "
                "the same.")
    assert (right["scores"]["change_detection"], right["scores"]["completeness"]) == (10, 10)
    wrong = ask("The red vase is now green, and a cup appeared next to the bowl.")
    assert wrong["details"]["hallucinations"] == [
        "the red vase is now green (Image 1 shows 1 red vase, Image 2 shows 1 blue vase)",
        "a cup appeared (in neither image)"]
    assert wrong["scores"]["change_detection"] == 4
    silent = ask("Both images show a table with a bowl and a vase.")
    assert silent["details"]["missing_elements"] == [
        "vase recoloured (Image 1 shows 1 red vase, Image 2 shows 1 blue vase)"]
    assert silent["scores"]["completeness"] == 0


def test_the_guessing_judge_differs_between_identical_requests(serve):
    request = office("Two people sit at a desk; a plant stands on the right.")
    server = serve(answer=judges.judge_noise(seed=4))
    replies = [verdict(server, request) for _ in range(3)]
    assert len({json.dumps(r["scores"], sort_keys=True) for r in replies}) == 3
    assert all(r["details"] == {"hallucinations": [], "missing_elements": []} for r in replies)
    again = serve(answer=judges.judge_noise(seed=4))  # another server, the same seed
    assert [verdict(again, request) for _ in range(3)] == replies


def test_the_judge_blind_to_counts_misses_a_wrong_count(serve):
    request = office("Three people sit at a desk; a plant stands on the right.")
    sees = verdict(serve(answer=ANSWER_MODES["judge-sees"]), request)
    no_counts = verdict(serve(answer=ANSWER_MODES["judge-no-counts"]), request)
    assert sees["details"]["hallucinations"] == ["three people (the image shows 2)"]
    assert sees["scores"]["visual_accuracy"] == 7
    assert no_counts["details"]["hallucinations"] == []
    assert no_counts["scores"]["visual_accuracy"] == 10
    absent = verdict(serve(answer=ANSWER_MODES["judge-no-counts"]),
                     office("Two people and a giraffe sit at a desk next to a plant."))
    assert absent["details"]["hallucinations"] == ["a giraffe (not in the image)"]


@pytest.mark.parametrize("mode", ["judge-sees", "judge-first", "judge-no-counts",
                                  "judge-noise"])
def test_a_prompt_that_is_no_rubric_judges_gets_the_refusal(serve, mode):
    server = serve(answer=build_script(("m",), mode, 0.0, 0.0, "", 0).answer)
    question = Request((Message("user", ("How many bottles are on the shelf?",
                                         image(EXAMPLES / "shelf.png"))),), SETTINGS)
    refusal = answer_judge(Prompt("How many bottles are on the shelf?", []))
    assert post(server, question) == refusal == judges.REFUSAL


def test_an_image_without_a_scene_is_one_it_cannot_see(serve):
    server = serve(answer=ANSWER_MODES["judge-sees"])
    chart = Case("Describe the chart.", "A bar chart of revenue.",
                 images=(image(EXAMPLES / "chart.png"),))
    found = verdict(server, judge_request(DESCRIPTION, chart, SETTINGS))
    assert set(found["scores"].values()) == {judges.BLIND_SCORE}
    assert "Image 1 carries no scene" in found["reasoning"]


def test_the_loopback_command_serves_the_judges_by_name():
    for mode in ("judge-sees", "judge-first", "judge-no-counts", "judge-varies",
                 "judge-noise"):
        script = build_script(("m",), mode, 0.0, 0.0, "", 7)
        assert "judge" in script.served_checkpoint()
    with pytest.raises(ValueError, match="judge-sees, judge-first, judge-no-counts, "
                                         "judge-varies, judge-noise, observer"):
        build_script(("m",), "judge-blind", 0.0, 0.0, "", 0)


@pytest.mark.parametrize(("text", "read"), [
    ("I count 5 bottles and 3 cans.", [("bottle", 5, None), ("can", 3, None)]),
    ("I can see a can.", [("can", 1, None)]),
    ("Six books with green and orange spines.", [("book", 6, None)]),
    ("Two people sit at a wooden desk.", [("person", 2, None), ("desk", 1, None)]),
    ("A red cup, an orange cup and an orange.",
     [("cup", 1, "red"), ("cup", 1, "orange"), ("orange", 1, None)]),
    ("No cats; several grey dining tables.", [("cat", 0, None), ("dining table", None, "grey")]),
    ("Image 2 shows cups and two people holding bottles.",
     [("cup", None, None), ("person", 2, None), ("bottle", None, None)]),
])
def test_claims_read_counts_colours_and_nouns(text, read):
    found = judges.claims(text, judges.COCO_PHRASES | judges.phrases(["desk", "can"]))
    assert [(c.name, c.count, c.colour) for c in found] == read


def test_a_scene_goes_into_the_png_and_back_without_the_pixels_changing():
    scene = Scene(objects=(SceneObject(name="cup", count=2, colour="white"),))
    picture = PILImage.new("RGB", (8, 6), (10, 200, 30))
    png = write_scene(picture, scene)
    assert read_scene(png) == scene
    with PILImage.open(io.BytesIO(png)) as back:
        assert back.tobytes() == picture.tobytes()
    assert read_scene((EXAMPLES / "chart.png").read_bytes()) is None  # no chunk
    assert read_scene(b"not a png") is None


def test_every_example_scene_is_small_and_carries_its_scene():
    paths = sorted(SCENES.glob("*.png")) + [EXAMPLES / "office.png", EXAMPLES / "shelf.png"]
    assert len(paths) >= 12
    for path in paths:
        assert path.stat().st_size < 4000, path
        assert read_scene(path.read_bytes()) is not None, path


def test_judge_sees_the_wrong_colour_of_a_changed_object(serve):
    """A recolouring from the wrong colour, and an added object in a colour it does not
    have, are hallucinations: the colour edits a judge is checked with."""
    server = serve(answer=ANSWER_MODES["judge-sees"])
    vases = (image(SCENES / "vase-before.png"), image(SCENES / "vase-after.png"))
    wrong_from = verdict(server, judge_request(COMPARISON, Case(
        "What changed?", "The vase changed from green to blue.", images=vases), SETTINGS),
        COMPARISON)
    assert wrong_from["details"]["hallucinations"], wrong_from
    right = verdict(server, room("A green potted plant was added to the right of the desk."),
                    COMPARISON)
    wrong = verdict(server, room("A red potted plant was added to the right of the desk."),
                    COMPARISON)
    assert not right["details"]["hallucinations"]
    assert wrong["details"]["hallucinations"]
    assert wrong["scores"]["change_detection"] < right["scores"]["change_detection"]
