"""A person's run driven in a real headless Chromium: the run in a subprocess with
`--backend human`, and a scripted observer that answers on the page from a known
psychometric function, reading the stimulus's parameters from the page's own data (the
`visioneval` chunk it is given), never from the pixels."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass

from cli_helpers import spawn

from visioneval.loopback.observer import Observer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
URL = re.compile(r"open (http://127\.0\.0\.1:\d+/) in a browser")


@dataclass
class PersonRun:
    """`visioneval BENCHMARK ... --backend human` in a subprocess, its page's URL read from
    the line it says once the page is served."""

    proc: subprocess.Popen
    url: str

    @classmethod
    def start(cls, *args: object) -> PersonRun:
        proc = spawn(*map(str, args), "--base-url", "http://127.0.0.1:0", "--no-progress")
        assert proc.stderr is not None
        said = []
        for text in proc.stderr:
            said.append(text)
            if found := URL.search(text):
                return cls(proc, found.group(1))
        proc.wait(5)
        raise AssertionError("the run said no page: " + "".join(said))

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def interrupt(self) -> tuple[int, str, str]:
        self.proc.send_signal(signal.SIGINT)
        return self.finish()


def begin(page, url: str, **procedure: object) -> None:
    """Open the page, set the procedure's fields, press Start."""
    page.goto(url)
    for name, value in {"fixation_ms": 0, "blank_ms": 0, **procedure}.items():
        page.fill(f"input[name={name}]", "" if value is None else str(value))
    page.click("#begin")


STATE = """last => {
  const shown = (id) => !document.getElementById(id).hidden;
  if (shown("end")) return {end: true};
  if (shown("pause")) return {pause: true};
  const trial = document.getElementById("trial");
  if (shown("trial") && trial.dataset.key !== last)
    return {key: trial.dataset.key, stimulus: trial.dataset.stimulus};
  return null;
}"""
"""The page's state as the scripted observer needs it, once something new is on screen."""


def answer_trials(page, observer: Observer, most: int | None = None) -> int:
    """Answer as `observer` until the end screen (or `most` answers); the count answered.
    A break is ended with the space bar, as a person would."""
    answered, last = 0, None
    while most is None or answered < most:
        state = page.wait_for_function(STATE, arg=last, timeout=30_000).json_value()
        if state.get("end"):
            break
        if state.get("pause"):
            page.keyboard.press(" ")
            continue
        last = state["key"]
        answer = observer.answer(json.loads(state["stimulus"] or "null"))
        page.click(f"#options button[data-option='{answer}']")
        answered += 1
    return answered


def browser(playwright, width: int = 1000, height: int = 800):
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    return chromium, chromium.new_page(viewport={"width": width, "height": height})
