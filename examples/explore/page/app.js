// The explorer's page: draws the pipeline from the server's state snapshots, lists
// trace events as they stream in, follows one key's journey through the boxes, posts
// the buttons' actions, switches the controller's pipeline and repeats the last
// action. No framework, no build step.
"use strict";

const token = document.querySelector('meta[name="explore-token"]').content;
const namespace = document.querySelector('meta[name="explore-namespace"]').content;
const $ = (sel, root = document) => root.querySelector(sel);

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
const wide = new Set(["filledBy", "lastRelist", "lastWatchEnd", "lastBackoff", "indices", "lastCall", "lastError", "lease"]);

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
  if (kind === "reflector") el.dataset.phase = state.phase;
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
  for (const b of document.querySelectorAll("button[data-pipeline]")) b.disabled = switching || b.dataset.pipeline === p.name;
  $("#repeat-last").disabled = switching || acting > 0 || !state.lastAction;
  $("#last-action").textContent = state.lastAction ? `Last action: ${state.lastAction}.` : "No action to repeat yet.";
}

// render draws the boxes from one snapshot, building them when the set of informers
// and handlers changes.
function render(s) {
  state = s;
  controls();
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

function row(e) {
  const li = document.createElement("li");
  li.dataset.seq = e.seq;
  li.dataset.stage = e.stage;
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
  pulse(events);
  if (following) {
    if (!refetch) refetch = setTimeout(() => { refetch = null; follow(followingFrom, following); }, 300);
  } else if (!redraw) {
    redraw = setTimeout(() => { redraw = null; if (!following) showEvents(); }, 100);
  }
}

function connect() {
  const es = new EventSource("/events");
  es.addEventListener("open", () => { $("#conn").textContent = "live"; $("#conn").className = "conn on"; });
  es.addEventListener("error", () => { $("#conn").textContent = "reconnecting…"; $("#conn").className = "conn off"; });
  es.addEventListener("state", (m) => render(JSON.parse(m.data)));
  es.addEventListener("events", (m) => onEvents(JSON.parse(m.data)));
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
  for (const b of document.querySelectorAll("button[data-action]")) b.addEventListener("click", () => act(b));
  for (const b of document.querySelectorAll("button[data-pipeline]")) b.addEventListener("click", () => switchPipeline(b));
  $("#repeat-last").addEventListener("click", (ev) => repeat(ev.currentTarget));
  $("#events").addEventListener("click", (ev) => {
    const k = ev.target.closest("button.key");
    if (k) follow(k.dataset.from, k.dataset.key);
  });
  $("#filter").addEventListener("change", () => follow(fooSource, $("#filter").value));
  $("#clear-filter").addEventListener("click", () => follow("", ""));
  connect();
});
