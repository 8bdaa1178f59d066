// The retro web viewer: draws a position with the server's SVG (/api/svg), asks the probe
// API (/api/probe) for its value and every move's, and lets a person play, edit, undo and
// share positions. URLs use the published Sixteen Musashi viewer's parameters
// (?size=25&turn=brown&init=ooooo,o...o,...), so that its links open the same positions;
// other games use ?table=NAME&position=NOTATION.
"use strict";

const $ = (id) => document.getElementById(id);

/** The viewer's state, readable by tests as window.viewer. */
const viewer = {
  tables: [],      // /api/tables
  table: null,     // the chosen table's name
  board: null,     // /api/board of that table
  history: [],     // positions in notation ("<rows> <side>"), the current one at `at`
  at: -1,
  report: null,    // /api/probe of the current position
  mode: "play",
  selected: null,  // the selected point's name in play mode
  ready: false,    // true when the current position is drawn and probed
  error: null,
};
window.viewer = viewer;

async function getJson(url) {
  const answer = await fetch(url);
  const body = await answer.json().catch(() => ({ error: "answer is not JSON" }));
  if (!answer.ok) throw new Error(body.error || ("HTTP " + answer.status));
  return body;
}

function current() { return viewer.history[viewer.at]; }
function tableParam() { return "table=" + encodeURIComponent(viewer.table); }
function positionParam(text) { return "position=" + encodeURIComponent(text); }

/** Rows and side of a notation "<rows> <side>" (Musashi-like games). */
function split(text) {
  const [rows, side] = text.trim().split(/\s+/);
  return { rows: rows.split(","), side };
}

/** The order of link parameters: as in the URL the page was opened with, else as the
 * published Sixteen Musashi viewer writes them; other parameters after these. */
const linkOrder = (() => {
  const opened = [...new URLSearchParams(location.search).keys()];
  return opened.length ? opened : ["size", "turn", "init"];
})();

/** A link to a position: the game's viewer parameters when it has them (from the probe
 * report's `query`), else table= and position=. */
function shareUrl(text) {
  if (viewer.report && viewer.report.query) {
    const query = viewer.report.query;
    const keys = linkOrder.filter((k) => k in query)
      .concat(Object.keys(query).filter((k) => !linkOrder.includes(k)));
    const q = new URLSearchParams(keys.map((k) => [k, query[k]]));
    return "?" + q.toString().replace(/%2C/g, ",");
  }
  return "?" + tableParam() + "&" + positionParam(text);
}

function status(text) { $("status").textContent = text || ""; }

/** Shows `text` as the current position: the picture, the probe report, the link. */
async function show() {
  viewer.ready = false;
  viewer.selected = null;
  const text = current();
  $("position").value = text;
  $("undo").disabled = viewer.at <= 0;
  $("redo").disabled = viewer.at >= viewer.history.length - 1;
  try {
    const svg = await fetch("/api/svg?" + tableParam() + "&" + positionParam(text));
    $("board").innerHTML = svg.ok ? await svg.text() : "";
    viewer.report = null;
    viewer.error = null;
    status("");
    try {
      viewer.report = await getJson("/api/probe?" + tableParam() + "&" + positionParam(text));
    } catch (e) {
      viewer.error = e.message;
      status(e.message);
    }
    renderReport();
    const url = shareUrl(text);
    $("share").href = url;
    history.replaceState(null, "", url);
  } finally {
    viewer.ready = true;
  }
}

function renderReport() {
  const r = viewer.report;
  $("value").textContent = r ? r.value : "–";
  $("meaning").textContent = r ? r.meaning : "";
  const moves = $("moves");
  moves.innerHTML = "";
  const pv = $("pv");
  pv.innerHTML = "";
  if (!r) return;
  const bestValue = r.moves.length ? r.moves[0].value : null;
  r.moves.forEach((m) => {
    const li = document.createElement("li");
    li.textContent = `${m.move}  → ${m.value}  ${m.meaning}`;
    li.dataset.move = m.move;
    li.dataset.value = m.value;
    if (m.value === bestValue) li.classList.add("best");
    li.onclick = () => play(m.position);
    moves.appendChild(li);
  });
  (r.principal_variation || []).forEach((m, i) => {
    const li = document.createElement("li");
    li.textContent = `${m.side} ${m.move}  (${m.value})`;
    li.onclick = () => jumpAlongPv(i);
    pv.appendChild(li);
  });
  $("best").disabled = r.moves.length === 0;
  $("replay").disabled = !(r.principal_variation || []).length;
  markBest();
}

/** The points of a move "ab-cd[x...]": its origin and destination. */
function ends(move) {
  const [from, rest] = move.split("-");
  return { from, to: rest.split("x")[0] };
}

function pointGroup(name) {
  return document.querySelector(`#board g.point[data-point="${name}"]`);
}

function addRing(group, cls) {
  if (!group) return;
  group.classList.add(cls);
  const ring = document.createElementNS("http://www.w3.org/2000/svg", "circle");
  ring.setAttribute("r", "34");
  ring.setAttribute("class", "ring");
  group.appendChild(ring);
}

function markBest() {
  const r = viewer.report;
  if (!r || !r.moves.length || viewer.mode !== "play") return;
  const { from, to } = ends(r.moves[0].move);
  addRing(pointGroup(from), "best-from");
  addRing(pointGroup(to), "best-to");
}

/** Play mode: a piece of the side to move selects it and shows its targets with values. */
function clickPlay(name) {
  const r = viewer.report;
  if (!r) return;
  if (viewer.selected) {
    const move = r.moves.find((m) => { const e = ends(m.move); return e.from === viewer.selected && e.to === name; });
    if (move) { play(move.position); return; }
  }
  document.querySelectorAll("#board .selected, #board .target").forEach((g) => g.classList.remove("selected", "target"));
  document.querySelectorAll("#board .label, #board .mark").forEach((e) => e.remove());
  const mine = r.moves.filter((m) => ends(m.move).from === name);
  if (!mine.length) { viewer.selected = null; return; }
  viewer.selected = name;
  pointGroup(name).classList.add("selected");
  mine.forEach((m) => {
    const g = pointGroup(ends(m.move).to);
    g.classList.add("target");
    const mark = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    mark.setAttribute("r", "22");
    mark.setAttribute("class", "mark");
    g.appendChild(mark);
    const label = document.createElementNS("http://www.w3.org/2000/svg", "text");
    label.setAttribute("class", "label");
    label.setAttribute("text-anchor", "middle");
    label.setAttribute("dy", "7");
    label.textContent = m.value;
    g.appendChild(label);
  });
}

/** Edit mode: the chosen tool's piece (or nothing) on the clicked point. */
function clickEdit(name) {
  const point = viewer.board.points.find((p) => p.name === name);
  const { rows, side } = split(current());
  const tool = document.querySelector('input[name="tool"]:checked').value;
  const grid = rows.map((r) => r.split(""));
  if (tool === "X") grid.forEach((r) => r.forEach((c, i) => { if (c === "X") r[i] = "."; }));
  const was = grid[point.y][point.x];
  grid[point.y][point.x] = (tool === "o" && was === "o") ? "." : tool;
  play(grid.map((r) => r.join("")).join(",") + " " + side);
}

/** Makes `text` the current position, dropping what could be redone. */
function play(text) {
  viewer.history.splice(viewer.at + 1);
  viewer.history.push(text);
  viewer.at = viewer.history.length - 1;
  return show();
}

function jumpAlongPv(i) {
  const line = viewer.report.principal_variation;
  line.slice(0, i + 1).forEach((m) => { viewer.history.splice(viewer.at + 1); viewer.history.push(m.position); viewer.at++; });
  return show();
}

async function replay() {
  const line = (viewer.report && viewer.report.principal_variation) || [];
  for (const m of line) {
    await play(m.position);
    await new Promise((done) => setTimeout(done, 400));
  }
}

function setMode(mode) {
  viewer.mode = mode;
  $("mode-play").classList.toggle("on", mode === "play");
  $("mode-edit").classList.toggle("on", mode === "edit");
  $("edit-tools").hidden = mode !== "edit";
  show();
}

/** The table's interesting positions (`retro extremes`), each list folded, a click opens one. */
async function showExtremes() {
  const box = $("extremes");
  box.innerHTML = "";
  let found;
  try {
    found = await getJson("/api/extremes?" + tableParam());
  } catch (e) {
    const hint = document.createElement("p");
    hint.className = "hint";
    hint.textContent = e.message;
    box.appendChild(hint);
    return;
  }
  found.lists.forEach((list) => {
    const details = document.createElement("details");
    details.dataset.list = list.id;
    const summary = document.createElement("summary");
    const shown = list.positions.length;
    summary.textContent = list.title + ` (${list.count}` + (shown < list.count ? `, ${shown} shown)` : ")");
    details.appendChild(summary);
    const ol = document.createElement("ol");
    list.positions.forEach((p) => {
      const li = document.createElement("li");
      li.textContent = `${p.note}: ${p.meaning}`;
      li.title = p.position;
      li.dataset.position = p.position;
      li.onclick = () => play(p.position);
      ol.appendChild(li);
    });
    details.appendChild(ol);
    box.appendChild(details);
  });
}

async function chooseTable(name, position) {
  viewer.table = name;
  $("table").value = name;
  showExtremes();
  viewer.board = await getJson("/api/board?" + tableParam());
  const start = position || viewer.board.start || viewer.board.example;
  viewer.history = [start];
  viewer.at = 0;
  await show();
}

async function init() {
  $("board").addEventListener("click", (event) => {
    const g = event.target.closest("g.point");
    if (!g || !viewer.ready) return;
    if (viewer.mode === "play") clickPlay(g.dataset.point); else clickEdit(g.dataset.point);
  });
  $("undo").onclick = () => { if (viewer.at > 0) { viewer.at--; show(); } };
  $("redo").onclick = () => { if (viewer.at < viewer.history.length - 1) { viewer.at++; show(); } };
  $("best").onclick = () => { if (viewer.report && viewer.report.moves.length) play(viewer.report.moves[0].position); };
  $("replay").onclick = replay;
  $("mode-play").onclick = () => setMode("play");
  $("mode-edit").onclick = () => setMode("edit");
  $("turn").onclick = () => {
    const { rows, side } = split(current());
    play(rows.join(",") + " " + (side === "brown" ? "black" : "brown"));
  };
  $("start").onclick = () => { if (viewer.board.start) play(viewer.board.start); };
  $("position-form").onsubmit = (event) => { event.preventDefault(); play($("position").value.trim()); };
  $("table").onchange = () => chooseTable($("table").value);
  try {
    viewer.tables = await getJson("/api/tables");
    viewer.tables.forEach((t) => {
      const option = document.createElement("option");
      option.value = t.table;
      const trap = t.trap ? `, trap zone ${t.trap.join(",")}` : "";
      option.textContent = t.board ? `${t.table} (${t.board}${trap})` : `${t.table} (${t.game})`;
      $("table").appendChild(option);
    });
    // Which table and position the URL asks for: table= and position=, or the published
    // viewer's size/turn/init (the server picks the table whose board has that size, and
    // that trap zone when the link has trap=).
    const q = new URLSearchParams(location.search);
    let table = q.get("table");
    let position = q.get("position");
    if (!position && q.get("init")) {
      const probe = await getJson("/api/probe" + location.search);
      table = probe.table;
      position = probe.position;
    }
    await chooseTable(table || viewer.tables[0].table, position);
  } catch (e) {
    viewer.error = e.message;
    status(e.message);
    viewer.ready = true;
  }
}

init();
