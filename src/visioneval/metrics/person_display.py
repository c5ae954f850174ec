"""The conditions a person's run was measured under, from its records (`--backend human`):
who answered, how fast, under which procedure, and what the page measured of the display.
Read by streaming the journal (one record at a time), for `visioneval show` and the report.

What no browser can measure is said beside it, every time: the screen's luminance and gamma,
its physical pixel size, and the viewing distance. A threshold in pixels is the image's; a
threshold in degrees of visual angle, or in cd/m², would need them."""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from visioneval.core.person import PersonAnswer, Procedure
from visioneval.core.store import RunStore

ONE_TO_ONE = 0.01  # |device px per image px − 1| within this: shown at its stored pixels
UNMEASURED = ("Not measured, as no browser can: the screen's luminance and gamma (colours "
              "were sent as sRGB, uncalibrated), its physical pixel size and the viewing "
              "distance; thresholds of contrast depend on the display, and a size in "
              "degrees of visual angle needs the distance.")
_BROWSER = re.compile(r"(Firefox|Edg|OPR|Chrome|HeadlessChrome|Version)/(\d+)")


@dataclass
class PersonDisplay:
    """What a run's person records say, gathered in one pass."""

    answers: int = 0
    timed_out: int = 0
    observers: Counter[str] = field(default_factory=Counter)
    response_ms: list[float] = field(default_factory=list)
    ratios: Counter[float] = field(default_factory=Counter)
    one_to_one: int = 0
    smallest: float | None = None
    largest: float | None = None
    screens: Counter[tuple[int, int]] = field(default_factory=Counter)
    gamuts: Counter[str] = field(default_factory=Counter)
    browsers: Counter[str] = field(default_factory=Counter)
    procedures: Counter[Procedure] = field(default_factory=Counter)

    def add(self, person: PersonAnswer) -> None:
        shown = person.display
        self.answers += 1
        self.timed_out += person.timed_out
        self.observers[person.observer] += 1
        if not person.timed_out:
            self.response_ms.append(person.response_ms)
        self.ratios[round(shown.device_pixel_ratio, 3)] += 1
        scale = shown.image_device_px
        self.one_to_one += abs(scale - 1) <= ONE_TO_ONE
        self.smallest = scale if self.smallest is None else min(self.smallest, scale)
        self.largest = scale if self.largest is None else max(self.largest, scale)
        self.screens[shown.screen_css] += 1
        self.gamuts[shown.color_gamut or "not said"] += 1
        self.browsers[browser_name(shown.browser)] += 1
        self.procedures[person.procedure] += 1

    def lines(self) -> list[str]:
        """The sentences `show` and the report give, each within 100 columns when printed
        with its wrapping."""
        if not self.answers:
            return []
        out = [f"{self.answers} answers by {_counted(self.observers)}; "
               f"{self.timed_out} ran out of time (recorded with no answer)."]
        if self.response_ms:
            q1, median, q3 = statistics.quantiles(self.response_ms, n=4) \
                if len(self.response_ms) > 1 else [self.response_ms[0]] * 3
            out.append(f"Response time from the image's onset: median {median:.0f} ms "
                       f"(quartiles {q1:.0f} to {q3:.0f} ms), as the browser's clock times it.")
        scale = (f"{self.smallest:.3g}" if self.smallest == self.largest else
                 f"{self.smallest:.3g} to {self.largest:.3g}")
        out.append(f"Shown at its stored pixels (one image pixel on one device pixel) in "
                   f"{self.one_to_one} of {self.answers} trials; device pixels per image "
                   f"pixel {scale}; device pixel ratio "
                   f"{_counted(self.ratios, '{:g}')}.")
        out.append(f"Screens (CSS px): {_counted(self.screens, '{0[0]} x {0[1]}')}; colour "
                   f"gamut: {_counted(self.gamuts)}; browsers: {_counted(self.browsers)}.")
        out.append("Procedure: " + "; ".join(
            _procedure(p) + (f" ({n} trials)" if len(self.procedures) > 1 else "")
            for p, n in self.procedures.most_common()) + ".")
        out.append(UNMEASURED)
        return out


def read(directory: Path) -> PersonDisplay | None:
    """The run's person conditions, or None when no record is a person's answer."""
    found = PersonDisplay()
    for record in RunStore.open(directory).iter_latest():
        if record.response.person is not None:
            found.add(record.response.person)
    return found if found.answers else None


def browser_name(agent: str) -> str:
    """"Chrome 131", "Firefox 133", "Safari 17" from a user-agent string."""
    found = dict(_BROWSER.findall(agent))
    for key, name in (("Firefox", "Firefox"), ("Edg", "Edge"), ("OPR", "Opera"),
                      ("HeadlessChrome", "headless Chrome"), ("Chrome", "Chrome")):
        if key in found:
            return f"{name} {found[key]}"
    if "Safari" in agent and "Version" in found:
        return f"Safari {found['Version']}"
    return "unknown" if not agent else agent.split("/")[0][:20]


def _procedure(p: Procedure) -> str:
    limit = f"{p.time_limit_s:g} s limit" if p.time_limit_s else "no time limit"
    pause = f"a break every {p.break_every}" if p.break_every else "no breaks"
    return f"fixation {p.fixation_ms} ms, blank {p.blank_ms} ms, {limit}, {pause}"


def _counted(counter: Counter, form: str = "{}") -> str:
    items = counter.most_common()
    if len(items) == 1:
        return form.format(items[0][0])
    return ", ".join(f"{form.format(k)} ({n})" for k, n in items[:4]) + \
        (f" and {len(items) - 4} more" if len(items) > 4 else "")
