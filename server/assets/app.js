// semrank web page: one search request returns both the first-stage list
// and the reranked list of the same page (rerank.compare), so the two
// columns always come from the same candidates.
"use strict";

const $ = (id) => document.getElementById(id);
const PAGE = 10;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmt(x) {
  if (x === undefined || x === null) return "–";
  const a = Math.abs(x);
  return a !== 0 && (a < 0.001 || a >= 10000) ? x.toExponential(2) : x.toFixed(3);
}

function snippet(s, n) {
  s = (s || "").replace(/\s+/g, " ").trim();
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

// marked renders a highlighted fragment: Bleve HTML-escapes the text and
// adds only <mark> tags, so marks become elements and the rest plain text,
// and nothing from a document is ever parsed into the page as HTML.
function marked(fragment) {
  const span = el("span", "snippet");
  const doc = new DOMParser().parseFromString(fragment, "text/html");
  for (const node of doc.body.childNodes) {
    if (node.nodeName === "MARK") span.append(el("mark", "", node.textContent));
    else span.append(document.createTextNode(node.textContent));
  }
  return span;
}

// movement returns the marker of a hit that moved from rank `from` to `to`.
function movement(from, to) {
  const m = el("span", "move");
  if (from === to) { m.classList.add("same"); m.textContent = "="; m.title = "same position"; }
  else if (to < from) { m.classList.add("up"); m.textContent = "▲ " + (from - to); m.title = "moved up from " + from + " to " + to; }
  else { m.classList.add("down"); m.textContent = "▼ " + (to - from); m.title = "moved down from " + from + " to " + to; }
  return m;
}

// ranges returns, per stage and for the first stage, the min and max score
// over the shown hits, for scaling the bars.
function ranges(hits, stages) {
  const r = { first_stage: [Infinity, -Infinity] };
  for (const s of stages) r[s] = [Infinity, -Infinity];
  for (const h of hits) {
    const upd = (k, v) => { if (v === undefined) return; r[k][0] = Math.min(r[k][0], v); r[k][1] = Math.max(r[k][1], v); };
    upd("first_stage", h.first_stage_score);
    for (const s of stages) upd(s, h.stage_scores ? h.stage_scores[s] : undefined);
  }
  return r;
}

function bar(label, v, range, cls) {
  const frag = document.createDocumentFragment();
  frag.append(el("span", "lbl", label));
  const b = el("span", "bar" + (cls ? " " + cls : ""));
  const fill = el("span");
  let w = 0;
  if (v !== undefined && range[1] > range[0]) w = (v - range[0]) / (range[1] - range[0]);
  else if (v !== undefined) w = 1;
  fill.style.width = Math.max(2, Math.round(w * 100)) + "%";
  b.append(fill);
  frag.append(b, el("span", "val", fmt(v)));
  return frag;
}

let last = null; // the last response, for the explanation panel

function renderHit(h, side, stages, rg) {
  const li = el("li", "hit");
  li.dataset.id = h.id;
  li.append(el("span", "rank", String(h.rank)));
  if (side === "reranked") li.append(movement(h.first_stage_rank, h.rank));
  else if (h.reranked_rank) {
    const m = movement(h.rank, h.reranked_rank);
    m.textContent = (h.reranked_rank < h.rank ? "▲ " : h.reranked_rank > h.rank ? "▼ " : "= ") + "→" + h.reranked_rank;
    li.append(m);
  } else li.append(el("span", "move same"));
  const f = h.fields || {};
  li.append(el("span", "title", snippet(f.title || h.id, 110)));
  const frag = h.fragments && h.fragments.text && h.fragments.text[0];
  li.append(frag ? marked(frag) : el("span", "snippet", snippet(f.text, 260)));
  if (side === "reranked" && h.stage_scores) {
    const bars = el("div", "bars");
    bars.append(bar("first stage", h.first_stage_score, rg.first_stage, "first"));
    for (const s of stages) bars.append(bar(s, h.stage_scores[s], rg[s]));
    li.append(bars);
    li.append(el("span", "meta", "fused score " + fmt(h.score) + " · was #" + h.first_stage_rank + " · " + h.id));
  } else {
    li.append(el("span", "meta", "BM25 " + fmt(h.first_stage_score) + " · " + h.id));
  }
  li.addEventListener("click", () => explain(h.id, li));
  li.addEventListener("mouseenter", () => twins(h.id, true));
  li.addEventListener("mouseleave", () => twins(h.id, false));
  return li;
}

function twins(id, on) {
  for (const li of document.querySelectorAll(".hit")) {
    if (li.dataset.id === id) li.classList.toggle("twin", on);
  }
}

function render(res) {
  last = res;
  const first = $("first"), rr = $("reranked");
  first.replaceChildren();
  rr.replaceChildren();
  const stages = res.stages || [];
  $("stages").textContent = res.reranked ? stages.join(" + ") + " → fusion, window " + res.window : "rerank off";
  const firstHits = res.reranked ? (res.first_stage || []) : res.hits;
  const rg = ranges(res.hits.concat(firstHits), stages);
  for (const h of firstHits) first.append(renderHit(h, "first", stages, rg));
  if (res.reranked) for (const h of res.hits) rr.append(renderHit(h, "reranked", stages, rg));
  if (!firstHits.length) first.append(el("li", "empty", "no results"));
  if (res.reranked && !res.hits.length) rr.append(el("li", "empty", "no results"));
  if (!res.reranked) rr.append(el("li", "empty", "reranking is off: the first stage alone"));
  $("status").textContent = res.total_hits + " matching documents · " + (res.took / 1e6).toFixed(1) +
    " ms · pipeline generation " + res.generation;
}

async function search(ev) {
  if (ev) ev.preventDefault();
  const q = $("q").value.trim();
  if (!q) return;
  location.hash = "q=" + encodeURIComponent(q);
  const body = { query: q, size: PAGE, fields: ["title", "text"], explain: true, highlight: true,
    rerank: { enabled: $("rerank").checked, compare: true } };
  const w = parseInt($("window").value, 10);
  if (w > 0) body.rerank.window = w;
  $("status").textContent = "searching…";
  $("status").classList.remove("error");
  try {
    const r = await fetch("api/search", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const res = await r.json();
    if (!r.ok) throw new Error(res.error || r.statusText);
    render(res);
  } catch (e) {
    $("status").textContent = "error: " + e.message;
    $("status").classList.add("error");
  }
}

function explTree(e) {
  const li = el("li");
  li.append(el("span", "v", fmt(e.value)), document.createTextNode(e.message || ""));
  if (e.children && e.children.length) {
    const ul = el("ul");
    for (const c of e.children) ul.append(explTree(c));
    li.append(ul);
  }
  return li;
}

async function explain(id, li) {
  for (const x of document.querySelectorAll(".hit.selected")) x.classList.remove("selected");
  li.classList.add("selected");
  const hit = last.hits.find((h) => h.id === id) || (last.first_stage || []).find((h) => h.id === id);
  const body = $("explain-body");
  body.replaceChildren();
  const f = hit.fields || {};
  body.append(el("h3", "", f.title || id));
  const t = el("table");
  const row = (k, v) => { const tr = el("tr"); tr.append(el("th", "", k), el("td", "", v)); t.append(tr); };
  row("document", id);
  row("first stage", "#" + hit.first_stage_rank + " · BM25 " + fmt(hit.first_stage_score));
  const inReranked = last.reranked && last.hits.find((h) => h.id === id);
  if (inReranked) row("reranked", "#" + inReranked.rank + " · fused " + fmt(inReranked.score));
  else if (hit.reranked_rank) row("reranked", "#" + hit.reranked_rank);
  for (const [s, v] of Object.entries(hit.stage_scores || {})) row("stage " + s, fmt(v));
  body.append(t);
  const expl = (inReranked || hit).explanation;
  if (expl) {
    body.append(el("h4", "", "Explanation"));
    const ul = el("ul", "expl");
    ul.append(explTree(expl));
    body.append(ul);
  }
  const text = el("div", "doctext", f.text || "");
  body.append(el("h4", "", "Document"), text);
  $("explain").hidden = false;
  try {
    const r = await fetch("api/doc/" + encodeURIComponent(id));
    const d = await r.json();
    if (r.ok) {
      text.textContent = d.text;
      if (d.metadata) {
        const m = el("table");
        for (const [k, v] of Object.entries(d.metadata)) { const tr = el("tr"); tr.append(el("th", "", k), el("td", "", String(v))); m.append(tr); }
        body.append(el("h4", "", "Metadata"), m);
      }
    }
  } catch (e) { /* the text from the search is shown already */ }
}

// oneLine makes each run of white space one space: the search box is an
// <input>, which would drop a line break and join the words around it.
function oneLine(s) { return s.replace(/\s+/g, " ").trim(); }

async function init() {
  $("search").addEventListener("submit", search);
  $("close").addEventListener("click", () => { $("explain").hidden = true; });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") $("explain").hidden = true; });
  try {
    const h = await (await fetch("healthz")).json();
    $("info").textContent = h.documents + " documents · stages: " + h.stages.join(", ") + " · window " + h.window;
    $("window").placeholder = h.window;
    for (const q of h.examples || []) {
      const b = el("button", "", snippet(q, 60));
      b.type = "button";
      b.title = q;
      b.addEventListener("click", () => { $("q").value = oneLine(q); search(); });
      $("examples").append(b);
    }
  } catch (e) { $("info").textContent = "server unreachable"; }
  const m = location.hash.match(/^#q=(.*)$/);
  if (m) {
    let q = m[1];
    try { q = decodeURIComponent(q); } catch (e) { /* a malformed escape: search the text as written */ }
    $("q").value = oneLine(q);
    search();
  }
}

init();
