"""What is recorded with a person's answer (`--backend human`): how the trial was shown,
how long the answer took, and what the browser said about the display, so a human result is
read with the conditions it was measured under.

The browser can measure sizes in CSS and device pixels and its device pixel ratio; it cannot
measure the screen's luminance, gamma or physical size, or the viewing distance, so none of
those is recorded and a report says so."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_AGENT = 300  # characters of the browser's user-agent string kept


class Procedure(BaseModel):
    """The trial procedure the person ran under, as the page's start screen set it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fixation_ms: int = Field(500, ge=0, le=10_000, description="Fixation cross before each "
                             "stimulus.")
    blank_ms: int = Field(250, ge=0, le=10_000, description="Blank screen after an answer.")
    time_limit_s: float | None = Field(None, gt=0, le=600, description="Longest a stimulus "
                                       "waits for an answer; None: no limit.")
    break_every: int | None = Field(50, ge=1, le=10_000, description="Trials between "
                                    "breaks; None: no breaks.")


class Display(BaseModel):
    """What the page measured when the stimulus was on screen. `image_device_px` is the
    stimulus's width in device pixels over its stored width: 1 means one image pixel was
    one device pixel."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device_pixel_ratio: float = Field(gt=0, le=16)
    screen_css: tuple[int, int] = Field(description="The screen's width and height in CSS px.")
    window_css: tuple[int, int] = Field(description="The page's viewport in CSS px.")
    image_stored: tuple[int, int] = Field(description="The stimulus's stored width and height.")
    image_css: tuple[float, float] = Field(description="Its displayed size in CSS px.")
    image_device_px: float = Field(gt=0, le=64, description="Device px per stored px.")
    color_gamut: str = Field("", max_length=16, description="'srgb', 'p3' or 'rec2020': "
                             "the widest the screen reports (CSS color-gamut).")
    browser: str = Field("", max_length=MAX_AGENT)


class PersonAnswer(BaseModel):
    """One answer of a person: who (an id, never a name), how long from the stimulus's
    onset to the answer, whether the trial's time limit ran out first, and the display."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    observer: str = Field(min_length=1, max_length=64)
    response_ms: float = Field(ge=0, le=86_400_000)
    timed_out: bool = False
    trial: int = Field(ge=1, description="The trial's place in the person's session.")
    procedure: Procedure
    display: Display
