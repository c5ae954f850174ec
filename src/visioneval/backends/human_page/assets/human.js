"use strict";
// A person's trials: start screen (what is recorded, the display, the procedure), then for
// each trial the waiting stimulus fetched and decoded, a fixation cross, the stimulus with
// its question and answer buttons until an answer (or the time limit), a blank screen, and
// a break every N trials. Times are the browser's high-resolution clock: the onset is the
// timestamp of the animation frame the stimulus is first drawn in, the answer the key or
// click event's own timestamp (as jsPsych and PsychoJS time responses).
(() => {
  const $ = (id) => document.getElementById(id);
  const SCREENS = ["start", "fixation", "trial", "fit", "pause", "end", "lost"];
  const show = (name) => { for (const s of SCREENS) $(s).hidden = s !== name; };
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  let procedure = null;
  let answeredHere = 0;

  function gamut() {
    for (const g of ["rec2020", "p3", "srgb"]) {
      if (matchMedia(`(color-gamut: ${g})`).matches) return g;
    }
    return "";
  }

  function checkDisplay() {
    const dpr = devicePixelRatio;
    const whole = Math.abs(dpr - Math.round(dpr)) < 1e-6;
    $("check").textContent = `This display: device pixel ratio ${dpr}, window ${innerWidth} x ` +
      `${innerHeight} CSS px, screen ${screen.width} x ${screen.height} CSS px` + (whole ? "." :
      ": not a whole number, so an image pixel cannot fall on exactly one screen pixel " +
      "(set the zoom to 100%; the ratio is recorded with every answer).");
    $("check").className = whole ? "" : "warn";
  }

  function readProcedure(form) {
    const number = (name) => {
      const value = form.elements[name].value.trim();
      return value === "" ? null : Number(value);
    };
    return {fixation_ms: Math.round(number("fixation_ms") ?? 0),
            blank_ms: Math.round(number("blank_ms") ?? 0),
            time_limit_s: number("time_limit_s"),
            break_every: number("break_every") === null ? null : Math.round(number("break_every"))};
  }

  async function poll() {
    for (;;) {
      try {
        const reply = await fetch("next", {cache: "no-store"});
        if (reply.ok) {
          const body = await reply.json();
          if (!body.waiting) return body;
          continue;
        }
      } catch (error) { /* the run is not answering: say so, and try again */ }
      show("lost");
      await sleep(2000);
    }
  }

  async function send(answer) {
    for (;;) {
      try {
        const reply = await fetch("answer", {method: "POST", body: JSON.stringify(answer),
                                             headers: {"Content-Type": "application/json"}});
        if (reply.ok || reply.status === 409) return;  // 409: answered already
        const body = await reply.json();
        throw new Error(body.error || `HTTP ${reply.status}`);
      } catch (error) {
        show("lost");
        await sleep(2000);
      }
    }
  }

  function progress(trial) {
    if (trial.total) {
      $("done").style.width = `${(100 * (trial.number - 1)) / trial.total}%`;
      $("count").textContent = `${trial.number} of ${trial.total}`;
    } else {
      $("count").textContent = `trial ${trial.number}`;
    }
  }

  async function load(trial) {
    const images = [];
    for (const shown of trial.images) {
      const img = new Image();
      img.src = shown.url;
      img.alt = "stimulus";
      img.draggable = false;
      await img.decode();
      images.push(img);
    }
    return images;
  }

  // Each image's CSS size so that one stored pixel is one device pixel, and where the
  // question and buttons go: below the images, or beside them when only that leaves room
  // (a tall stimulus on a laptop screen); what is missing when neither fits.
  function place(images) {
    const dpr = devicePixelRatio;
    let width = 16 * Math.max(images.length - 1, 0);
    let height = 0;
    for (const img of images) {
      img.style.width = `${img.naturalWidth / dpr}px`;
      img.style.height = `${img.naturalHeight / dpr}px`;
      width += img.naturalWidth / dpr;
      height = Math.max(height, img.naturalHeight / dpr);
    }
    const below = [innerWidth - 48, innerHeight - 190];
    const beside = [innerWidth - 48 - 340, innerHeight - 48];
    const fits = (room) => width <= room[0] && height <= room[1];
    $("trial").classList.toggle("beside", !fits(below) && fits(beside));
    if (fits(below) || fits(beside)) return null;
    return {width, height, room: below};
  }

  async function fitted(images) {
    for (;;) {
      const missing = place(images);
      if (!missing) return;
      $("fit-why").textContent = `This image needs ${Math.ceil(missing.width)} x ` +
        `${Math.ceil(missing.height)} CSS px (its stored pixels at device pixel ratio ` +
        `${devicePixelRatio}); the window has room for ${Math.floor(missing.room[0])} x ` +
        `${Math.floor(missing.room[1])}.`;
      show("fit");
      await new Promise((done) => addEventListener("resize", done, {once: true}));
    }
  }

  // Digits 1-9 for the options in order; an option's first letter too where no other
  // option starts with it ("left"/"right": l and r).
  function keysOf(options) {
    const firsts = options.map((o) => o.trim().charAt(0).toLowerCase());
    return options.map((o, i) => {
      const keys = i < 9 ? [String(i + 1)] : [];
      const first = firsts[i];
      if (/[a-z]/.test(first) && firsts.indexOf(first) === firsts.lastIndexOf(first)) keys.push(first);
      return keys;
    });
  }

  function answers(trial, settle) {
    const box = $("options");
    box.replaceChildren();
    const typed = $("typed");
    typed.hidden = trial.options.length > 0;
    const keys = keysOf(trial.options);
    trial.options.forEach((option, i) => {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.option = option;
      button.textContent = option;
      if (keys[i].length) {
        const hint = document.createElement("kbd");
        hint.textContent = keys[i].join(" / ");
        button.append(hint);
      }
      button.addEventListener("click", (event) => settle(option, event.timeStamp, false));
      box.append(button);
    });
    typed.onsubmit = (event) => {
      event.preventDefault();
      settle($("typed-answer").value, event.timeStamp, false);
    };
    return (event) => {
      if (event.repeat || trial.options.length === 0) return;
      const i = keys.findIndex((k) => k.includes(event.key.toLowerCase()));
      if (i >= 0) settle(trial.options[i], event.timeStamp, false);
    };
  }

  function display(images) {
    const last = images[images.length - 1];
    const box = last ? last.getBoundingClientRect() : {width: 0, height: 0};
    const stored = last ? [last.naturalWidth, last.naturalHeight] : [0, 0];
    return {device_pixel_ratio: devicePixelRatio, screen_css: [screen.width, screen.height],
            window_css: [innerWidth, innerHeight], image_stored: stored,
            image_css: [box.width, box.height],
            image_device_px: stored[0] ? (box.width * devicePixelRatio) / stored[0] : 1,
            color_gamut: gamut(), browser: navigator.userAgent.slice(0, 300)};
  }

  async function trialOf(trial) {
    progress(trial);
    const images = await load(trial);  // fetched and decoded before the cross
    $("trial").dataset.key = trial.key;
    $("trial").dataset.stimulus = JSON.stringify(trial.stimulus);
    $("question").textContent = trial.question;
    $("images").replaceChildren(...images);
    await fitted(images);
    show("fixation");
    await sleep(procedure.fixation_ms);
    await fitted(images);
    let settle;
    const answered = new Promise((done) => { settle = (text, at, late) => done({text, at, late}); });
    const onKey = answers(trial, settle);
    addEventListener("keydown", onKey);
    show("trial");
    const onset = await frame();
    const limit = procedure.time_limit_s ?
      setTimeout(() => settle("", performance.now(), true), procedure.time_limit_s * 1000) : null;
    const got = await answered;
    clearTimeout(limit);
    removeEventListener("keydown", onKey);
    const shown = display(images);
    for (const s of SCREENS) $(s).hidden = true;  // the blank screen
    await send({key: trial.key, answer: got.text, response_ms: Math.max(0, got.at - onset),
                timed_out: got.late, procedure, display: shown});
    answeredHere += 1;
    if (trial.total) $("done").style.width = `${(100 * trial.number) / trial.total}%`;
    await sleep(procedure.blank_ms);
    const last = trial.total && trial.number >= trial.total;
    if (procedure.break_every && answeredHere % procedure.break_every === 0 && !last) {
      await pause(trial);
    }
  }

  async function pause(trial) {
    $("pause-count").textContent = trial.total ?
      `${trial.number} of ${trial.total} trials done.` : `${trial.number} trials done.`;
    show("pause");
    await new Promise((done) => {
      const onKey = (event) => {
        if (event.key === " ") { removeEventListener("keydown", onKey); done(); }
      };
      addEventListener("keydown", onKey);
      $("resume").onclick = () => { removeEventListener("keydown", onKey); done(); };
    });
  }

  async function session() {
    $("bar").hidden = false;
    for (;;) {
      const body = await poll();
      if (body.done) break;
      await trialOf(body.trial);
    }
    $("done").style.width = "100%";
    $("end-count").textContent = `${answeredHere} answer${answeredHere === 1 ? "" : "s"} ` +
      "given on this page.";
    show("end");
  }

  checkDisplay();
  addEventListener("resize", checkDisplay);
  $("procedure").addEventListener("submit", (event) => {
    event.preventDefault();
    procedure = readProcedure(event.target);
    session();
  });
})();
