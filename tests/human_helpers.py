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


def answer_trials(page, observer: Observer, most: int | None = None) -> int:
    """Answer as `observer` until the end screen (or `most` answers); the count answered."""
    answered = 0
    while most is None or answered < most:
        page.wait_for_selector("#trial:not([hidden]), #end:not([hidden]), #pause:not([hidden])",
                               timeout=30_000)
        if page.is_visible("#end"):
            break
        if page.is_visible("#pause"):
            page.keyboard.press(" ")  # a break: the space bar goes on
            continue
        key = page.get_attribute("#trial", "data-key")
        stimulus = json.loads(page.get_attribute("#trial", "data-stimulus") or "null")
        page.click(f"#options button[data-option='{observer.answer(stimulus)}']")
        answered += 1
        page.wait_for_function(
            "key => document.querySelector('#trial').hidden || "
            "document.querySelector('#trial').dataset.key !== key", arg=key)
    return answered


def browser(playwright, width: int = 1000, height: int = 800):
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    return chromium, chromium.new_page(viewport={"width": width, "height": height})
