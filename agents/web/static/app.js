// rummy-env serve: the page. Plain JavaScript, no libraries; every text from the server goes
// into the page as text (textContent), pictures as images (an SVG in an <img> runs nothing).
"use strict";

const $ = (id) => document.getElementById(id);

const state = {
  catalog: null,
  game: null, // the game being played (its last state from the server)
  replay: null, // the replay open (its steps and result)
  frame: 0,
  frameToken: 0,
  busy: 0,
};

// -- helpers ------------------------------------------------------------------------------------

function busy(on) {
  state.busy += on ? 1 : -1;
  document.body.dataset.busy = state.busy > 0 ? "1" : "0";
}

function showError(message) {
  const box = $("error");
  box.textContent = message || "";
  box.hidden = !message;
}

async function api(method, path, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (method !== "GET") {
    // the server takes requests that change something as JSON only (no other site's form)
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body === undefined ? {} : body);
  }
  const response = await fetch(path, init);
  let data = null;
  try {
    data = await response.json();
  } catch (e) {
    data = { error: `${response.status} ${response.statusText}` };
  }
  if (!response.ok) {
    throw new Error(data && data.error ? data.error : `${response.status} ${response.statusText}`);
  }
  return data;
}

// Run an async action with the page marked busy; an error is shown in the banner.
async function guarded(action) {
  busy(true);
  try {
    showError("");
    return await action();
  } catch (e) {
    showError(e.message || String(e));
    return undefined;
  } finally {
    busy(false);
  }
}

function showPicture(img, svg) {
  img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function who(agent, label) {
  return label ? `${agent} (${label})` : agent;
}

// A table of each seat's infos (points, scores) after a hand or at the end.
function infoTable(infos) {
  const agents = Object.keys(infos || {});
  const keys = [];
  for (const a of agents) {
    for (const k of Object.keys(infos[a])) if (!keys.includes(k)) keys.push(k);
  }
  const table = el("table", null, "infos");
  const head = el("tr");
  head.appendChild(el("th", "seat"));
  for (const k of keys) head.appendChild(el("th", k.replaceAll("_", " ")));
  table.appendChild(head);
  for (const a of agents) {
    const row = el("tr");
    row.appendChild(el("td", a));
    for (const k of keys) row.appendChild(el("td", k in infos[a] ? infos[a][k] : ""));
    table.appendChild(row);
  }
  return table;
}

function handBox(hand, labels) {
  const box = el("div", null, "hand-result");
  const outcome = Object.values(hand.infos || {})[0]?.outcome;
  box.appendChild(el("h3", `Hand ${hand.number} over` + (outcome ? `: ${outcome.replaceAll("_", " ")}` : "")));
  box.appendChild(infoTable(hand.infos));
  return box;
}

// -- tabs ---------------------------------------------------------------------------------------

function showPanel(id) {
  for (const tab of document.querySelectorAll(".tab")) {
    const on = tab.dataset.panel === id;
    tab.classList.toggle("active", on);
    $(tab.dataset.panel).hidden = !on;
  }
}

// -- play: the setup form ----------------------------------------------------------------------

function gameInfo() {
  return state.catalog.games[$("game").value];
}

function fillSelect(select, values, labels, selected) {
  select.replaceChildren();
  values.forEach((v, i) => {
    const opt = el("option", labels ? labels[i] : v);
    opt.value = String(v);
    if (String(v) === String(selected)) opt.selected = true;
    select.appendChild(opt);
  });
}

function onGameChange() {
  const info = gameInfo();
  // another game's agents: start again from this game's default opponent
  $("opponent-inputs").replaceChildren();
  fillSelect($("players"), info.players, null, info.players[0]);
  const names = $("agent-names");
  names.replaceChildren();
  for (const a of info.agents) {
    const opt = el("option", a.doc);
    opt.value = a.name;
    names.appendChild(opt);
  }
  const body = $("option-help").querySelector("tbody");
  body.replaceChildren();
  for (const o of info.options) {
    const row = el("tr");
    const name = el("td");
    const link = el("button", o.name, "link");
    link.type = "button";
    link.addEventListener("click", () => addOption(o));
    name.appendChild(link);
    row.appendChild(name);
    row.appendChild(el("td", o.default === null ? "none" : JSON.stringify(o.default)));
    row.appendChild(el("td", o.type));
    body.appendChild(row);
  }
  onPlayersChange();
}

function addOption(o) {
  const box = $("options");
  const value = o.default === null ? "none" : o.default;
  box.value = (box.value.trim() ? box.value.trim() + "\n" : "") + `${o.name}=${value}`;
  box.focus();
}

function onPlayersChange() {
  const n = Number($("players").value);
  const seats = [...Array(n).keys()];
  fillSelect($("seat"), seats, seats.map((s) => `player_${s}`), Math.min(Number($("seat").value) || 0, n - 1));
  onSeatChange();
}

function onSeatChange() {
  const n = Number($("players").value);
  const seat = Number($("seat").value);
  const box = $("opponent-inputs");
  const old = [...box.querySelectorAll("input")].map((i) => i.value);
  box.replaceChildren();
  let k = 0;
  for (let s = 0; s < n; s++) {
    if (s === seat) continue;
    const label = el("label", `player_${s} `);
    const input = document.createElement("input");
    input.type = "text";
    input.className = "opponent";
    input.setAttribute("list", "agent-names");
    input.spellcheck = false;
    input.value = old[k] || gameInfo().default_opponent;
    label.appendChild(input);
    box.appendChild(label);
    k++;
  }
}

// -- play: the game -----------------------------------------------------------------------------

function logMove(event) {
  const item = el("li", null, event.you ? "mine" : "");
  item.appendChild(el("span", who(event.agent, event.label) + ": ", "who"));
  item.appendChild(el("span", event.name, "move"));
  const log = $("log");
  log.appendChild(item);
  item.scrollIntoView({ block: "nearest" });
}

function setMoves(game, enabled) {
  const moves = $("moves");
  moves.replaceChildren();
  if (!game.my_turn) return;
  for (const m of game.legal) {
    const b = el("button", m.name, "move legal");
    b.type = "button";
    b.dataset.action = String(m.id);
    b.disabled = !enabled;
    b.addEventListener("click", () => play(m.id));
    moves.appendChild(b);
  }
}

function renderGame(game) {
  state.game = game;
  $("game-area").hidden = false;
  showPicture($("table"), game.svg);
  const me = `you are ${game.me}`;
  let status;
  if (game.over) status = `${game.title}: the game is over (${me}); every card is face up now.`;
  else if (game.my_turn) status = `${game.title}: your move (${me}).`;
  else status = `${game.title}: ${game.to_act} to act (${me}).`;
  $("status").textContent = status;
  setMoves(game, true);
  const result = $("result");
  result.replaceChildren();
  result.hidden = !game.over;
  result.dataset.over = game.over ? "1" : "0";
  if (game.over) {
    const r = game.result;
    const verdict = { win: "You win!", loss: "You lose.", draw: "A draw.", stopped: "The game was stopped." }[r.verdict];
    result.appendChild(el("h3", verdict, `verdict ${r.verdict}`));
    if (game.error) result.appendChild(el("p", game.error, "error-text"));
    const parts = [];
    if (r.outcome) parts.push(`outcome ${r.outcome.replaceAll("_", " ")}`);
    if (r.winners.length) parts.push(`winner ${r.winners.join(", ")}`);
    if (r.hands_played) parts.push(`${r.hands_played} hand(s)`);
    parts.push(`${game.steps} moves`);
    if (game.seed !== null) parts.push(`seed ${game.seed}`);
    result.appendChild(el("p", parts.join("; ")));
    const returns = el("table", null, "infos");
    const head = el("tr");
    head.appendChild(el("th", "seat"));
    head.appendChild(el("th", "return"));
    returns.appendChild(head);
    for (const [agent, value] of Object.entries(r.returns)) {
      const row = el("tr");
      row.appendChild(el("td", who(agent, game.labels[agent])));
      row.appendChild(el("td", value));
      returns.appendChild(row);
    }
    result.appendChild(returns);
  }
  const link = $("download");
  link.hidden = !game.record_ready;
  if (game.record_ready) {
    link.href = `/api/play/${encodeURIComponent(game.id)}/record`;
    link.setAttribute("download", `rummy-${game.game}-${game.seed}.jsonl`);
  }
  $("stop").hidden = game.over;
}

// Show the moves just played one by one (the agents' with a pause), then the new state.
async function showEvents(game, events) {
  const delay = Number($("delay").value);
  setMoves(game, false);
  for (const event of events || []) {
    logMove(event);
    if (event.svg) showPicture($("table"), event.svg);
    if (event.hand) $("hands").appendChild(handBox(event.hand, game.labels));
    if (!event.you && delay > 0) await sleep(delay);
  }
  renderGame(game);
}

async function startGame(ev) {
  ev.preventDefault();
  await guarded(async () => {
    if (state.game && !state.game.over) {
      // one game at a time on this page: the one running ends
      await api("DELETE", `/api/play/${encodeURIComponent(state.game.id)}`).catch(() => {});
    }
    const seedText = $("seed").value.trim();
    const body = {
      game: $("game").value,
      players: Number($("players").value),
      seat: Number($("seat").value),
      opponents: [...document.querySelectorAll("#opponent-inputs input")].map((i) => i.value.trim()),
      options: $("options").value,
      seed: seedText === "" ? null : Number(seedText),
    };
    const game = await api("POST", "/api/play", body);
    $("log").replaceChildren();
    $("hands").replaceChildren();
    state.game = game;
    await showEvents(game, game.events);
    await playOn(game);
  });
}

async function play(action) {
  if (!state.game || state.busy) return;
  await guarded(async () => {
    setMoves(state.game, false);
    try {
      const game = await api("POST", `/api/play/${encodeURIComponent(state.game.id)}/move`, { action });
      await showEvents(game, game.events);
      await playOn(game);
    } catch (e) {
      setMoves(state.game, true);
      throw e;
    }
  });
}

// A long run of agents' moves comes in parts (the server answers each request in bounded
// time, the game "pending"): ask for the rest until it is the person's turn or the end.
async function playOn(game) {
  while (game && game.pending && !game.over && state.game && state.game.id === game.id) {
    game = await api("POST", `/api/play/${encodeURIComponent(game.id)}/advance`, {});
    await showEvents(game, game.events);
  }
}

async function stopGame() {
  if (!state.game) return;
  await guarded(async () => {
    const game = await api("POST", `/api/play/${encodeURIComponent(state.game.id)}/stop`);
    renderGame(game);
  });
}

// After a reload: show this session's game that is still running, if any.
async function resume() {
  const list = await api("GET", "/api/play");
  const running = list.games.filter((g) => !g.over);
  if (!running.length) return;
  const game = await api("GET", `/api/play/${encodeURIComponent(running[running.length - 1].id)}`);
  $("log").replaceChildren();
  $("hands").replaceChildren();
  for (const event of game.log) {
    logMove(event);
    if (event.hand) $("hands").appendChild(handBox(event.hand, game.labels));
  }
  renderGame(game);
  await playOn(game);
}

// -- replays ------------------------------------------------------------------------------------

async function loadRecords() {
  const data = await api("GET", "/api/records");
  $("records-box").hidden = !data.enabled;
  const labels = data.records.slice();
  fillSelect($("records"), data.records, labels, data.records[0]);
  if (data.truncated) {
    const more = el("option", "(more records not listed)");
    more.disabled = true;
    $("records").appendChild(more);
  }
}

async function openReplay(body) {
  await guarded(async () => {
    const meta = await api("POST", "/api/replays", body);
    state.replay = meta;
    $("replay-area").hidden = false;
    const labels = meta.views.map((v) => (v === "referee" ? "referee (every card)" : who(v, meta.labels[v])));
    fillSelect($("view"), meta.views, labels, "referee");
    const seats = meta.agents.map((a) => who(a, meta.labels[a])).join(", ");
    $("replay-title").textContent = `${meta.title} (${meta.source}): ${seats}; ${meta.steps.length} steps`;
    await showFrame(0);
  });
}

async function showFrame(step) {
  const meta = state.replay;
  if (!meta) return;
  const target = Math.max(0, Math.min(step, meta.frames - 1));
  state.frame = target;
  const token = ++state.frameToken;
  busy(true);
  try {
    const view = $("view").value;
    const frame = await api(
      "GET",
      `/api/replays/${encodeURIComponent(meta.id)}/frame?step=${target}&view=${encodeURIComponent(view)}`,
    );
    if (token !== state.frameToken) return; // a later step was asked for meanwhile
    showError("");
    showPicture($("replay-table"), frame.svg);
    $("step-label").textContent = `step ${frame.step} / ${frame.frames - 1}`;
    $("step-label").dataset.step = String(frame.step);
    const action = $("step-action");
    if (frame.next) {
      action.textContent = `next: ${who(frame.next.agent, frame.next.label)} plays ${frame.next.name}`;
    } else {
      action.textContent = "the end of the record";
    }
    const hand = $("replay-hand");
    hand.replaceChildren();
    if (frame.hand) hand.appendChild(handBox(frame.hand, meta.labels));
    const result = $("replay-result");
    result.replaceChildren();
    result.hidden = !frame.result;
    if (frame.result) {
      const r = frame.result;
      const parts = [r.finished ? "finished" : "unfinished"];
      if (r.outcome) parts.push(`outcome ${r.outcome.replaceAll("_", " ")}`);
      parts.push(r.matches ? "the replay matches the record's result" : "the record has no result to compare with");
      result.appendChild(el("h3", "Result"));
      result.appendChild(el("p", parts.join("; ")));
      const returns = {};
      for (const [a, v] of Object.entries(r.returns)) returns[a] = { return: v };
      result.appendChild(infoTable(returns));
    }
    $("first").disabled = $("prev").disabled = frame.step === 0;
    $("last").disabled = $("next").disabled = frame.step === frame.frames - 1;
  } catch (e) {
    showError(e.message || String(e));
  } finally {
    busy(false);
  }
}

async function uploadRecord() {
  const file = $("upload").files[0];
  if (!file) return;
  const limit = state.catalog.limits.record_bytes;
  if (file.size > limit) {
    showError(`${file.name} is over ${limit} bytes: too large for a record`);
    return;
  }
  const text = await file.text();
  await openReplay({ text, name: file.name });
  $("upload").value = "";
}

function onKey(ev) {
  if ($("replay-panel").hidden || !state.replay) return;
  const tag = ev.target && ev.target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
  const moves = { ArrowRight: state.frame + 1, ArrowLeft: state.frame - 1, Home: 0, End: state.replay.frames - 1 };
  if (!(ev.key in moves)) return;
  ev.preventDefault();
  showFrame(moves[ev.key]);
}

// -- start --------------------------------------------------------------------------------------

async function init() {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => showPanel(tab.dataset.panel));
  }
  $("game").addEventListener("change", onGameChange);
  $("players").addEventListener("change", onPlayersChange);
  $("seat").addEventListener("change", onSeatChange);
  $("setup").addEventListener("submit", startGame);
  $("stop").addEventListener("click", stopGame);
  $("open-listed").addEventListener("click", () => openReplay({ path: $("records").value }));
  $("open-paste").addEventListener("click", () => openReplay({ text: $("paste").value, name: "pasted record" }));
  $("upload").addEventListener("change", uploadRecord);
  $("first").addEventListener("click", () => showFrame(0));
  $("prev").addEventListener("click", () => showFrame(state.frame - 1));
  $("next").addEventListener("click", () => showFrame(state.frame + 1));
  $("last").addEventListener("click", () => showFrame(state.replay.frames - 1));
  $("view").addEventListener("change", () => showFrame(state.frame));
  document.addEventListener("keydown", onKey);
  await guarded(async () => {
    state.catalog = await api("GET", "/api/catalog");
    const games = Object.keys(state.catalog.games);
    fillSelect($("game"), games, games.map((g) => state.catalog.games[g].title), games[0]);
    onGameChange();
    await loadRecords();
    await resume();
  }); // the body is marked busy from the start until here
}

document.addEventListener("DOMContentLoaded", init);
