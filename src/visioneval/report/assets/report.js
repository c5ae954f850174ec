// The sample browser: filters, paging, one card per sample. In report.html the rows come
// from the JSON block embedded in the page and nothing is fetched; under `visioneval view`
// (data.server set) each page of rows is asked of the local server that served the page.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("run-data").textContent);
  const PAGE = 50;
  const state = { group: "", label: "", view: data.views[0] || "", outcome: "", text: "",
                  page: 0 };
  const $ = (id) => document.getElementById(id);

  function option(select, value, text) {
    const o = document.createElement("option");
    o.value = value; o.textContent = text; select.appendChild(o);
  }
  function fill(select, values, allText) {
    if (allText !== null) option(select, "", allText);
    values.forEach((v) => option(select, v, v));
  }
  fill($("f-group"), data.groups, "all groups");
  fill($("f-label"), data.labels, "all classes");
  fill($("f-view"), data.views, null);
  $("f-view").disabled = data.views.length < 2;

  function outcome(row) {
    if (row.e) return "error";
    const v = row.v[state.view];
    if (!v || v.ok === null || v.ok === undefined) return "unscored";
    return v.ok ? "correct" : "wrong";
  }
  function matches(row) {
    if (state.group && row.g !== state.group) return false;
    if (state.label && row.labels.indexOf(state.label) < 0) return false;
    if (state.outcome && outcome(row) !== state.outcome) return false;
    if (state.text) {
      const hay = (row.id + " " + row.t + " " + (row.r || "") + " " + (row.e || "")).toLowerCase();
      if (hay.indexOf(state.text) < 0) return false;
    }
    return true;
  }
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function card(row) {
    const box = el("div", "sample");
    box.dataset.id = row.id;
    const pic = row.img && data.thumbs[row.img];
    if (pic) {
      const img = el("img"); img.src = pic; img.alt = "image of " + row.id; box.appendChild(img);
    } else {
      box.appendChild(el("div", "noimg", row.img ? "no thumbnail" : "no image"));
    }
    const body = el("div");
    body.appendChild(el("div", "id", row.id + "  ·  " + row.g + (row.meta ? "  ·  " + row.meta : "")));
    const result = el("div");
    const kind = outcome(row);
    const tag = el("span", "tag " + ({correct: "ok", wrong: "bad", error: "err"}[kind] || "none"),
                   kind);
    result.appendChild(tag);
    const v = row.v[state.view];
    const answer = row.e ? row.e : (v ? v.a : "");
    result.appendChild(document.createTextNode("answer: " + (answer === "" ? "(nothing)" : answer)
                                               + "   ·   target: " + row.t));
    body.appendChild(result);
    const more = el("details");
    more.appendChild(el("summary", null, row.th === undefined ? "prompt and raw response"
                                         : "prompt, raw response and reasoning"));
    more.appendChild(el("pre", null, data.texts[row.p] || ""));
    more.appendChild(el("pre", null, row.e ? "error: " + row.e : (row.r || "")));
    if (row.th !== undefined) {  // text, never markup: el() sets textContent
      more.appendChild(el("pre", "reasoning", "reasoning, set aside before parsing:\n" + row.th));
    }
    const others = Object.keys(row.v).filter((k) => k !== state.view);
    if (others.length) {
      more.appendChild(el("pre", null, others.map((k) => k + ": " + row.v[k].a +
        (row.v[k].ok === true ? "  (right)" : row.v[k].ok === false ? "  (wrong)" : "")).join("\n")));
    }
    body.appendChild(more);
    box.appendChild(body);
    return box;
  }
  function show(rows, matched, all, pages) {
    state.page = Math.min(state.page, pages - 1);
    const list = $("samples");
    list.replaceChildren();
    rows.forEach((r) => list.appendChild(card(r)));
    const embedded = data.total > data.rows.length && !data.server;
    $("count").textContent = matched + " of " + all + " samples" +
      (embedded ? " embedded (the run has " + data.total + ")" : "");
    $("page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
  }
  function renderEmbedded() {
    const rows = data.rows.filter(matches);
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    show(rows.slice(state.page * PAGE, (state.page + 1) * PAGE), rows.length,
         data.rows.length, pages);
  }
  let asked = 0;
  function renderServed() {
    const ask = ++asked;
    const query = new URLSearchParams({group: state.group, label: state.label,
      view: state.view, outcome: state.outcome, q: state.text, page: state.page, size: PAGE});
    fetch(data.server + "?" + query).then((r) => r.json()).then((got) => {
      if (ask !== asked) return;  // a newer filter was asked meanwhile
      data.texts = got.texts; data.thumbs = got.thumbs;
      state.page = got.page;
      show(got.rows, got.matched, got.total, Math.max(1, Math.ceil(got.matched / PAGE)));
    });
  }
  function render() {
    if (data.server) renderServed(); else renderEmbedded();
  }
  function bind(id, key, transform) {
    $(id).addEventListener("input", (e) => {
      state[key] = transform ? transform(e.target.value) : e.target.value;
      state.page = 0; render();
    });
  }
  bind("f-group", "group"); bind("f-label", "label"); bind("f-view", "view");
  bind("f-outcome", "outcome"); bind("f-text", "text", (v) => v.trim().toLowerCase());
  $("prev").addEventListener("click", () => { state.page -= 1; render(); });
  $("next").addEventListener("click", () => { state.page += 1; render(); });
  render();
})();
