// The explorer's page: draws the pipeline from the server's state snapshots, lists
// trace events as they stream in, follows one key's journey through the boxes, plots
// the boxes' numbers over time, posts the buttons' actions, switches the controller's
// pipeline and repeats the last action — or, replaying a recording, drives the
// player. No framework, no build step.
"use strict";

const token = document.querySelector('meta[name="explore-token"]').content;
const namespace = document.querySelector('meta[name="explore-namespace"]').content;
const $ = (sel, root = document) => root.querySelector(sel);
// replaying: the page replays a recording (the server rendered the player instead of
// the actions).
const replaying = document.querySelector("#player") !== null;

// What each kind of box shows: [field, label, value of the box's state].
const fields = {
  reflector: [
    ["phase", "phase", (r) => r.phase],
    ["rv", "last rv", (r) => r.rv || "—"],
    ["filledBy", "cache filled by", (r) => r.filledBy || "—"],
    ["lists", "lists", (r) => r.lists],
    ["watches", "watches", (r) => r.watches],
    ["watchEvents", "watch events", (r) => r.watchEvents],
    ["relists", "relists", (r) => r.relists],
    ["lastRelist", "last relist", (r) => r.lastRelist || "—"],
    ["lastWatchEnd", "last watch end", (r) => r.lastWatchEnd || "—"],
    ["lastBackoff", "last backoff", (r) => r.lastBackoff || "—"],
    ["shard", "shard", (r) => r.shard || "—"],
    ["shardDropped", "dropped outside the shard", (r) => r.shardDropped || 0],
  ],
  queue: [
    ["kind", "kind", (q) => queueKinds[q.kind] || q.kind],
    ["depth", "depth", (q) => q.depth],
    ["maxDepth", "max depth", (q) => q.maxDepth],
    ["queued", "queued", (q) => q.queued],
    ["popped", "popped", (q) => q.popped],
    ["replaces", "replaces", (q) => q.replaces],
  ],
  indexer: [
    ["objects", "objects", (i) => i.objects],
    ["indices", "indices", (i) => Object.entries(i.indices || {}).map(([n, v]) => `${n}: ${v} values`).join(", ") || "—"],
    ["applied", "writes applied", (i) => i.applied],
    ["fannedOut", "fanned out", (i) => i.fannedOut],
  ],
  handler: [
    ["backlog", "backlog", (h) => h.backlog],
    ["highWater", "high-water", (h) => h.highWater],
    ["calls", "calls", (h) => h.calls],
    ["panics", "panics", (h) => h.panics],
    ["lastCall", "last call", (h) => (h.inCall ? "▶ " : "") + (h.lastCall || "—")],
  ],
  workqueue: [
    ["depth", "depth", (q) => q.depth],
    ["processing", "processing", (q) => q.processing],
    ["retriesWaiting", "retries waiting", (q) => q.retriesWaiting],
    ["adds", "adds", (q) => q.adds],
    ["deduplicated", "deduplicated adds", (q) => q.deduplicated],
    ["dirty", "added while processing", (q) => q.dirty],
    ["rateLimited", "rate-limited adds", (q) => q.rateLimited],
    ["forgets", "forgets", (q) => q.forgets],
  ],
  workers: [
    ["busy", "busy", (w) => `${w.busy} of ${w.workers}`],
    ["reconciles", "reconciles", (w) => w.reconciles],
    ["errors", "errors", (w) => w.errors],
    ["lastError", "last error", (w) => w.lastError || "—"],
    ["lease", "lease", (w) => w.lease || "—"],
    ["renewals", "lease renewals", (w) => w.renewals],
  ],
};

// The queue's stage, as trace events name it, and the type it is.
const queueKinds = { realfifo: "RealFIFO", deltafifo: "DeltaFIFO" };

// Fields whose values are sentences get a row of their own.
const wide = new Set(["filledBy", "lastRelist", "lastWatchEnd", "lastBackoff", "shard", "indices", "lastCall", "lastError", "lease"]);

// Fields only a sharded informer's reflector box shows (data-sharded, set by fill).
const shardFields = new Set(["shard", "shardDropped"]);

const titles = { reflector: "Reflector", queue: "Queue", indexer: "Indexer", handler: "Handler", workqueue: "Workqueue", workers: "Workers" };

// box builds one box: data-box is its id ("reflector:foos"), the one events name.
function box(kind, id, subtitle) {
  const el = document.createElement("div");
  el.className = `box ${kind}`;
  el.dataset.box = id;
  const h = document.createElement("h3");
  h.textContent = titles[kind] + " ";
  const small = document.createElement("small");
  small.textContent = subtitle;
  h.append(small);
  const step = document.createElement("span");
  step.className = "step";
  h.append(step);
  el.append(h);
  const dl = document.createElement("dl");
  for (const [field, label] of fields[kind]) {
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    dd.dataset.field = field;
    if (wide.has(field)) {
      dt.className = "wide";
      dd.className = "wide";
    }
    if (shardFields.has(field)) {
      dt.classList.add("shard-row");
      dd.classList.add("shard-row");
    }
    dl.append(dt, dd);
  }
  el.append(dl);
  return el;
}

function fill(el, kind, state) {
  for (const [field, , value] of fields[kind]) {
    const dd = el.querySelector(`[data-field="${field}"]`);
    const text = String(value(state));
    if (dd.textContent !== text) dd.textContent = text;
  }
  if (kind === "reflector") {
    el.dataset.phase = state.phase;
    el.dataset.sharded = state.shard ? "yes" : "no";
  }
}

let shape = "";
let state = null; // the last snapshot
let switching = false; // a switch-pipeline request is in flight
let acting = 0; // action requests in flight

// controls shows the running pipeline and what the pipeline control may do now:
// switch to a pipeline that is not running, repeat an action once there is one.
function controls() {
  if (!state) return;
  const p = state.pipeline;
  const now = $("#pipeline-now");
  if (now.dataset.pipeline !== p.name || $("strong", now).textContent !== p.text) {
    now.dataset.pipeline = p.name;
    $("strong", now).textContent = p.text;
  }
  if (replaying) return; // no pipeline control: nothing runs
  for (const b of document.querySelectorAll("button[data-pipeline]")) b.disabled = switching || b.dataset.pipeline === p.name;
  $("#repeat-last").disabled = switching || acting > 0 || !state.lastAction;
  $("#last-action").textContent = state.lastAction ? `Last action: ${state.lastAction}.` : "No action to repeat yet.";
}

// render draws the boxes from one snapshot, building them when the set of informers
// and handlers changes.
function render(s) {
  state = s;
  controls();
  if (s.replay) showPlayer(s.replay);
  $("#events-total").textContent = s.events;
  const newShape = JSON.stringify([s.informers.map((i) => i.resource), s.handlers.map((h) => h.name)]);
  if (newShape !== shape) {
    shape = newShape;
    const cols = $("#columns");
    cols.replaceChildren();
    for (const inf of s.informers) {
      const col = document.createElement("div");
      col.className = "column";
      col.append(box("reflector", `reflector:${inf.resource}`, inf.resource), box("queue", `queue:${inf.resource}`, inf.resource),
        box("indexer", `indexer:${inf.resource}`, inf.resource));
      for (const h of s.handlers.filter((h) => h.informer === inf.resource)) col.append(box("handler", `handler:${h.name}`, h.name));
      cols.append(col);
    }
    const orphans = s.handlers.filter((h) => !s.informers.some((i) => i.resource === h.informer));
    if (orphans.length) {
      const col = document.createElement("div");
      col.className = "column";
      for (const h of orphans) col.append(box("handler", `handler:${h.name}`, h.name));
      cols.append(col);
    }
    $("#tail").replaceChildren(box("workqueue", "workqueue", "foos"), box("workers", "workers", "sync"));
    markJourney();
  }
  for (const inf of s.informers) {
    fill($(`[data-box="reflector:${inf.resource}"]`), "reflector", inf.reflector);
    fill($(`[data-box="queue:${inf.resource}"]`), "queue", inf.queue);
    fill($(`[data-box="indexer:${inf.resource}"]`), "indexer", inf.indexer);
  }
  for (const h of s.handlers) fill($(`[data-box="handler:${h.name}"]`), "handler", h);
  fill($('[data-box="workqueue"]'), "workqueue", s.workqueue);
  fill($('[data-box="workers"]'), "workers", s.workers);
}

// pulse flashes the boxes the events happened in.
function pulse(events) {
  for (const id of new Set(events.map((e) => e.box).filter(Boolean))) {
    const el = $(`[data-box="${id}"]`);
    if (!el) continue;
    el.classList.remove("pulse");
    void el.offsetWidth; // restart the animation
    el.classList.add("pulse");
  }
}

// The timeline: every event while no key is followed, else the key's journey.
const maxRows = 400;
let recent = [];
// following is the followed key, followingFrom the informer (resource) whose object it
// is, or "" for a workqueue key: trace.Journey follows an object of one informer.
let following = "";
let followingFrom = "";
// fooSource is the informer of the Foos the buttons act on; a typed key is a Foo's.
const fooSource = "foos";
let journey = { events: [], boxes: [] };
let first = 0;
// selecting is true while the timeline shows the events of a moment picked on a plot.
let selecting = false;

function row(e) {
  const li = document.createElement("li");
  li.dataset.seq = e.seq;
  li.dataset.stage = e.stage;
  if (e.level) li.dataset.level = e.level;
  if (!first) first = e.t;
  const time = document.createElement("time");
  time.textContent = `+${((e.t - first) / 1000).toFixed(3)}s`;
  const stage = document.createElement("span");
  stage.className = "stage";
  stage.textContent = e.stage;
  const source = document.createElement("span");
  source.className = "source";
  source.textContent = e.source;
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = e.text;
  li.append(time, stage, source, text);
  // e.from is set by the server: the informer whose object e.key is, absent for a
  // workqueue key.
  const from = e.from || "";
  if (e.key && (e.key !== following || from !== followingFrom)) {
    const a = document.createElement("button");
    a.type = "button";
    a.className = "key";
    a.textContent = "follow";
    a.title = `follow ${from ? `${from} ${e.key}` : `the workqueue key ${e.key}`} through the pipeline`;
    a.dataset.key = e.key;
    a.dataset.from = from;
    li.append(a);
  }
  return li;
}

function showEvents() {
  const list = $("#events");
  const rows = following ? journey.events : recent;
  list.replaceChildren(...rows.map(row));
  list.scrollTop = list.scrollHeight;
}

function markJourney() {
  for (const el of document.querySelectorAll(".box")) {
    const i = following ? journey.boxes.indexOf(el.dataset.box) : -1;
    el.classList.toggle("on-journey", i >= 0);
    $(".step", el).textContent = i >= 0 ? String(i + 1) : "";
  }
  $("#journey-of").textContent = following ? (followingFrom ? `of ${followingFrom}` : "workqueue key") : "";
  $("#journey-boxes").textContent = following ? journey.boxes.join(" → ") : "";
}

// follow shows the journey of the object key of informer from ("" for a workqueue
// key); an empty key shows every event again.
async function follow(from, key) {
  selecting = false;
  following = key.trim();
  followingFrom = following ? from : "";
  $("#filter").value = following;
  if (!following) {
    journey = { events: [], boxes: [] };
  } else {
    const r = await fetch(`/journey?source=${encodeURIComponent(followingFrom)}&key=${encodeURIComponent(following)}`);
    const j = await r.json();
    if (j.key !== following || j.source !== followingFrom) return; // a newer follow started meanwhile
    journey = { events: j.events || [], boxes: j.boxes || [] };
  }
  markJourney();
  showEvents();
}

// Under a burst the stream sends many batches a second; the page redraws the
// timeline at most every 100ms and refetches a followed journey at most every 300ms.
let refetch = null;
let redraw = null;
function onEvents(events) {
  recent = recent.concat(events).slice(-maxRows);
  schedulePlots();
  pulse(events);
  if (following) {
    if (!refetch) refetch = setTimeout(() => { refetch = null; follow(followingFrom, following); }, 300);
  } else if (!redraw && !selecting) {
    redraw = setTimeout(() => { redraw = null; if (!following && !selecting) showEvents(); }, 100);
  }
}

// reset starts the page over after the server forgot its events (a replay that
// went back): the timeline, the journey and the plots.
function reset() {
  recent = [];
  first = 0;
  plotData = emptyPlots();
  if (following) follow(followingFrom, following);
  else showEvents();
  drawPlots();
}

function connect() {
  const es = new EventSource("/events");
  es.addEventListener("open", () => { $("#conn").textContent = replaying ? "replay" : "live"; $("#conn").className = "conn on"; });
  es.addEventListener("error", () => { $("#conn").textContent = "reconnecting…"; $("#conn").className = "conn off"; });
  es.addEventListener("state", (m) => render(JSON.parse(m.data)));
  es.addEventListener("events", (m) => onEvents(JSON.parse(m.data)));
  es.addEventListener("reset", reset);
  es.addEventListener("gap", (m) => {
    const n = JSON.parse(m.data).missed;
    onEvents([{ seq: 0, t: Date.now(), stage: "page", source: "", text: `${n} events went by faster than this page read them` }]);
  });
}

// post sends one action (/api/{name}) from button and shows its outcome; it returns
// the answer when the action succeeded, else null.
async function post(name, body, button) {
  const out = $("#result");
  out.className = "busy";
  out.textContent = `${button.textContent}…`;
  button.disabled = true;
  acting++;
  controls();
  try {
    const r = await fetch(`/api/${name}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Explore-Token": token },
      body: JSON.stringify(body),
    });
    const j = await r.json();
    out.className = r.ok ? "ok" : "err";
    out.textContent = r.ok ? `✓ ${j.did}. Expect: ${j.expect}` : `✗ ${j.error}`;
    return r.ok ? j : null;
  } catch (err) {
    out.className = "err";
    out.textContent = `✗ ${err}`;
    return null;
  } finally {
    button.disabled = false;
    acting--;
    controls();
  }
}

// act posts one button's action with the inputs it takes, then follows the Foo.
async function act(button) {
  const body = {};
  for (const f of button.dataset.fields.split(",").filter(Boolean)) {
    const v = $(`#in-${f}`).value;
    body[f] = ["replicas", "times", "delayMs"].includes(f) ? Number(v) : v;
  }
  const j = await post(button.dataset.action, body, button);
  if (j && body.name && button.dataset.action !== "delete-foo") follow(fooSource, `${namespace}/${body.name}`);
}

// switchPipeline restarts the controller on the button's pipeline; the answer comes
// once the new caches are filled.
async function switchPipeline(button) {
  switching = true;
  try {
    await post("switch-pipeline", { pipeline: button.dataset.pipeline }, button);
  } finally {
    switching = false;
    controls();
  }
}

// repeat runs the last action again, on the pipeline running now, and follows the
// Foo it acted on (a repeated create may have given it a fresh name).
async function repeat(button) {
  const j = await post("repeat-last", {}, button);
  if (j && j.name && j.action !== "delete-foo") follow(fooSource, `${namespace}/${j.name}`);
}

document.addEventListener("DOMContentLoaded", () => {
  if (!replaying) {
    for (const b of document.querySelectorAll("button[data-action]")) b.addEventListener("click", () => act(b));
    for (const b of document.querySelectorAll("button[data-pipeline]")) b.addEventListener("click", () => switchPipeline(b));
    $("#repeat-last").addEventListener("click", (ev) => repeat(ev.currentTarget));
  }
  $("#events").addEventListener("click", (ev) => {
    const k = ev.target.closest("button.key");
    if (k) follow(k.dataset.from, k.dataset.key);
  });
  $("#filter").addEventListener("change", () => follow(fooSource, $("#filter").value));
  $("#clear-filter").addEventListener("click", () => follow("", ""));
  $("#plot-area").addEventListener("click", onPlotClick);
  if ($("#player")) {
    $("#replay-play").addEventListener("click", () => replay(state && state.replay && state.replay.playing ? "pause" : "play"));
    $("#replay-step").addEventListener("click", () => replay("step"));
    $("#replay-speed").addEventListener("change", (ev) => replay("speed", Number(ev.target.value)));
    const scrub = $("#replay-scrub");
    scrub.addEventListener("input", () => { scrubbing = true; });
    scrub.addEventListener("change", () => { scrubbing = false; replay("seek", Number(scrub.value)); });
  }
  connect();
  schedulePlots();
});

// ── Replay ──────────────────────────────────────────────────────────────────────

let scrubbing = false; // the reader is dragging the scrubber: leave it where it is

// replay sends one control to the player: play, pause, step, seek (value: events
// played), speed (value: times the recorded pace).
async function replay(op, value = 0) {
  const r = await fetch("/api/replay", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Explore-Token": token },
    body: JSON.stringify({ op, value }),
  });
  const j = await r.json();
  if (!r.ok) {
    $("#replay-note").textContent = `✗ ${j.error}`;
    return;
  }
  showPlayer(j);
}

// showPlayer shows the player's state: where it is, whether it plays.
function showPlayer(p) {
  $("#replay-play").textContent = p.playing ? "pause" : p.pos === p.total ? "play again" : "play";
  const scrub = $("#replay-scrub");
  if (!scrubbing) scrub.value = String(p.pos);
  scrub.max = String(p.total);
  $("#replay-pos").textContent = `${p.pos} / ${p.total} events · +${(p.at / 1000).toFixed(3)}s of ${(p.duration / 1000).toFixed(3)}s`;
  $("#replay-note").textContent = p.shortened || "";
}

// ── Plots ───────────────────────────────────────────────────────────────────────
// One SVG per group of series: the informers' queues, the handlers' backlogs, the
// workqueue (its depth and the retries waiting). Each series is a step function: a
// point is the value from that event on. Marks are vertical lines on every plot.

const plotGroups = [
  ["queue", "queue depth (per informer)"],
  ["backlog", "handler backlog (notifications waiting)"],
  ["workqueue", "workqueue: depth and retries waiting"],
];
const palette = ["#2563eb", "#b45309", "#15803d", "#9333ea", "#db2777", "#0891b2"];
const emptyPlots = () => ({ generation: -1, after: 0, series: new Map(), marks: [] });
let plotData = emptyPlots();
let plotTimer = null;

// schedulePlots fetches the new points at most every 500ms.
function schedulePlots() {
  if (!plotTimer) plotTimer = setTimeout(() => { plotTimer = null; fetchPlots(); }, 500);
}

async function fetchPlots() {
  const r = await fetch(`/plots?after=${plotData.after}`);
  if (!r.ok) return;
  const j = await r.json();
  if (j.generation !== plotData.generation) {
    // Another generation (a replay went back): these points are relative to the page's
    // old position, so ask again from the start.
    const fresh = plotData.generation === -1 && plotData.after === 0;
    plotData = emptyPlots();
    plotData.generation = j.generation;
    if (!fresh) return fetchPlots();
  }
  for (const s of j.series) {
    const have = plotData.series.get(s.id) || { id: s.id, label: s.label, group: s.group, points: [] };
    have.points = have.points.concat(s.points).slice(-5000);
    plotData.series.set(s.id, have);
  }
  plotData.marks = plotData.marks.concat(j.marks).slice(-5000);
  for (const s of plotData.series.values()) for (const p of s.points) plotData.after = Math.max(plotData.after, p.seq);
  for (const m of plotData.marks) plotData.after = Math.max(plotData.after, m.seq);
  drawPlots();
}

const svgNS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// timeAxis maps a time to an x on every plot, the same for all of them. Quiet
// stretches — more than a tenth of the span, and at least 100ms, without a point or a
// mark — are drawn breakWidth wide, with a break on the axis.
//
// Why: a recording is bursts separated by waits (a backoff, a scenario's pause), and
// on a linear axis the waits take the width and squeeze the bursts into lines.
const breakWidth = 14;
const plotW = 640, plotH = 110, padL = 34, padR = 8, padT = 8, padB = 16;
function timeAxis() {
  const times = [];
  for (const s of plotData.series.values()) for (const p of s.points) times.push(p.t);
  for (const m of plotData.marks) times.push(m.t);
  times.sort((a, b) => a - b);
  if (!times.length) times.push(0);
  const lo = times[0], hi = Math.max(times[times.length - 1], lo + 1);
  const quiet = Math.max(100, (hi - lo) / 10);
  const breaks = []; // [from, to] of each quiet stretch
  for (let i = 1; i < times.length; i++) if (times[i] - times[i - 1] > quiet) breaks.push([times[i - 1], times[i]]);
  const busy = hi - lo - breaks.reduce((n, [a, b]) => n + (b - a), 0);
  const width = plotW - padL - padR - breaks.length * breakWidth;
  const scale = width / Math.max(busy, 1);
  const x = (t) => {
    let at = padL, from = lo;
    for (const [a, b] of breaks) {
      if (t <= a) break;
      if (t < b) return at + (a - from) * scale + ((t - a) / (b - a)) * breakWidth;
      at += (a - from) * scale + breakWidth;
      from = b;
    }
    return at + (Math.min(t, hi) - from) * scale;
  };
  return { lo, hi, x, breaks };
}

function drawPlots() {
  const area = $("#plot-area");
  const axis = timeAxis();
  const { lo, hi, x } = axis;
  const figures = [];
  for (const [group, title] of plotGroups) {
    const series = [...plotData.series.values()].filter((s) => s.group === group);
    if (!series.length) continue;
    const top = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.v)));
    const y = (v) => plotH - padB - (v / top) * (plotH - padT - padB);
    const root = svg("svg", { viewBox: `0 0 ${plotW} ${plotH}`, class: "plot", "data-group": group, role: "img", "aria-label": title });
    root.append(svg("line", { x1: padL, x2: plotW - padR, y1: y(0), y2: y(0), class: "axis" }));
    root.append(svg("text", { x: padL - 4, y: y(top) + 4, class: "tick", "text-anchor": "end" }, top));
    root.append(svg("text", { x: padL - 4, y: y(0), class: "tick", "text-anchor": "end" }, 0));
    root.append(svg("text", { x: plotW - padR, y: plotH - 3, class: "tick", "text-anchor": "end" }, `+${((hi - lo) / 1000).toFixed(3)}s`));
    for (const [a, b] of axis.breaks) {
      const bx = x(a) + breakWidth / 2;
      const gap = svg("text", { x: bx, y: y(0) + 4, class: "break", "text-anchor": "middle" }, "≈");
      gap.append(svg("title", {}, `${((b - a) / 1000).toFixed(3)}s without a change, drawn narrow`));
      root.append(gap);
    }
    for (const m of plotData.marks) {
      const mx = x(m.t);
      const kind = m.kind.replace(" ", "-");
      root.append(svg("line", { x1: mx, x2: mx, y1: padT, y2: y(0), class: `mark ${kind}` }));
      // Why a rectangle over the line: a line has no width to point at; this one
      // picks the mark's own event when clicked, and names it on hover.
      const hit = svg("rect", { x: mx - 3, y: padT, width: 6, height: y(0) - padT, class: `mark-hit ${kind}`, "data-seq": m.seq, "data-t": m.t });
      hit.append(svg("title", {}, m.text));
      root.append(hit);
    }
    series.forEach((s, i) => {
      let d = "";
      let last = null;
      for (const p of s.points) {
        d += last === null ? `M${x(p.t)},${y(p.v)}` : `H${x(p.t)}V${y(p.v)}`;
        last = p;
      }
      if (last) d += `H${x(hi)}`;
      const color = palette[i % palette.length];
      root.append(svg("path", { d, class: "series", stroke: color, "data-series": s.id }));
      root.append(svg("text", { x: padL + 4 + i * 150, y: padT + 6, class: "legend", fill: color }, `${s.label}: ${last ? last.v : 0}`));
    });
    const fig = document.createElement("figure");
    const cap = document.createElement("figcaption");
    cap.textContent = title;
    fig.append(cap, root);
    figures.push(fig);
  }
  if (!figures.length) {
    const p = document.createElement("p");
    p.className = "muted";
    p.textContent = "No queue, handler or workqueue event yet.";
    figures.push(p);
  }
  area.replaceChildren(...figures);
  plotAxis = axis;
}

let plotAxis = null; // the time axis of the plots drawn last

// onPlotClick shows, in the timeline, the events around the point or mark nearest
// to the clicked moment.
async function onPlotClick(ev) {
  const plot = ev.target.closest("svg.plot");
  if (!plot) return;
  const box = plot.getBoundingClientRect();
  const { lo, x } = plotAxis;
  const clicked = ((ev.clientX - box.left) / box.width) * plotW; // in the plot's own units
  // The nearest on screen: the axis is not linear in time (timeAxis).
  let best = null;
  const consider = (seq, at) => { if (!best || Math.abs(x(at) - clicked) < Math.abs(x(best.t) - clicked)) best = { seq, t: at }; };
  const hit = ev.target.closest("rect.mark-hit");
  if (hit) {
    best = { seq: Number(hit.dataset.seq), t: Number(hit.dataset.t) };
  } else {
    for (const s of plotData.series.values()) for (const p of s.points) consider(p.seq, p.t);
    for (const m of plotData.marks) consider(m.seq, m.t);
  }
  if (!best) return;
  const r = await fetch(`/around?seq=${best.seq}`);
  const j = await r.json();
  following = "";
  followingFrom = "";
  journey = { events: [], boxes: [] };
  markJourney();
  $("#journey-of").textContent = `events at +${((best.t - lo) / 1000).toFixed(3)}s (show all to go back)`;
  const list = $("#events");
  list.replaceChildren(...(j.events || []).map((e) => {
    const li = row(e);
    if (e.seq === best.seq) li.classList.add("picked");
    return li;
  }));
  selecting = true;
  const picked = $("#events li.picked");
  if (picked) picked.scrollIntoView({ block: "center" });
}
