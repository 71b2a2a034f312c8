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
  sel: [], // the indices of the selected cards of the person's hand
  locked: false, // the moves just played are being shown: no move now
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

// A table of each seat's infos (points, scores) after a hand or at the end: a row for each
// quantity, a column for each seat (the seats are few, the quantities many: it fits a phone).
function infoTable(infos) {
  const agents = Object.keys(infos || {});
  const keys = [];
  for (const a of agents) {
    for (const k of Object.keys(infos[a])) if (!keys.includes(k)) keys.push(k);
  }
  const table = el("table", null, "infos");
  const head = el("tr");
  head.appendChild(el("th", ""));
  for (const a of agents) head.appendChild(el("th", a));
  table.appendChild(head);
  for (const k of keys) {
    const row = el("tr");
    row.appendChild(el("th", k.replaceAll("_", " ")));
    for (const a of agents) row.appendChild(el("td", k in infos[a] ? infos[a][k] : ""));
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

// The placeholder of the rule options: this game's own first options and their defaults.
function optionsPlaceholder(info) {
  const shown = info.options.filter((o) => o.default !== null).slice(0, 3);
  return shown.map((o) => `${o.name}=${o.default}`).join("\n");
}

function onGameChange() {
  const info = gameInfo();
  // another game's agents: start again from this game's default opponent
  $("opponent-inputs").replaceChildren();
  const agents = info.agents.map((a) => a.name);
  fillSelect($("opponent"), agents, agents, info.default_opponent);
  fillSelect($("players"), info.players, null, info.players[0]);
  $("options").value = "";
  $("options").placeholder = optionsPlaceholder(info);
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

function onOpponentChange() {
  for (const input of document.querySelectorAll("#opponent-inputs input")) input.value = $("opponent").value;
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
    input.value = old[k] || $("opponent").value || gameInfo().default_opponent;
    label.appendChild(input);
    box.appendChild(label);
    k++;
  }
}

// -- play: the cards ----------------------------------------------------------------------------

// A card as a button: rank and suit symbol, red or black.
function cardButton(card, cls) {
  const b = el("button", card.text, `card ${card.red ? "red" : "black"}${card.id >= 52 ? " joker" : ""} ${cls || ""}`);
  b.type = "button";
  b.dataset.card = String(card.id);
  return b;
}

function cardSpan(card) {
  return el("span", card.text, `card-text ${card.red ? "red" : "black"}`);
}

function cardsLine(cards) {
  const span = el("span", null, "cards-line");
  cards.forEach((c, i) => {
    if (i) span.appendChild(document.createTextNode(" "));
    span.appendChild(cardSpan(c));
  });
  return span;
}

function legalMoves() {
  const g = state.game;
  return g && g.my_turn && !state.locked ? g.seat_table.moves : [];
}

function selectedCards() {
  const hand = state.game.seat_table.hand;
  return state.sel.map((i) => hand[i].id);
}

// Does ``move`` play every selected card (as many copies as selected)?
function usesSelection(move, sel) {
  if (!sel.length) return false;
  const left = move.cards.slice();
  for (const c of sel) {
    const k = left.indexOf(c);
    if (k < 0) return false;
    left.splice(k, 1);
  }
  return true;
}

function meldMoves(m, sel) {
  return legalMoves().filter(
    (mv) => mv.meld === m && ["layoff", "joker", "retrieve"].includes(mv.kind) && usesSelection(mv, sel),
  );
}

function say(text) {
  $("selection").textContent = text || "";
}

function renderCards() {
  const g = state.game;
  const t = g.seat_table;
  const moves = legalMoves();
  const sel = g.my_turn ? selectedCards() : [];
  // stock and pile
  const draw = moves.find((m) => m.kind === "draw");
  $("stock-count").textContent = `(${t.stock})`;
  $("stock").disabled = !draw;
  $("stock").classList.toggle("playable", Boolean(draw));
  const pile = $("pile");
  pile.replaceChildren();
  if (!t.pile.length) pile.appendChild(el("span", "empty", "empty"));
  const shownFrom = Math.max(0, t.pile.length - 12); // the last cards: the pile can be long
  if (shownFrom > 0) pile.appendChild(el("span", `${shownFrom} more, `, "more-cards"));
  t.pile.slice(shownFrom).forEach((card, k) => {
    const depth = t.pile.length - 1 - (shownFrom + k);
    const take = moves.find((m) => m.kind === "take" && m.depth === depth);
    const b = cardButton(card, take ? "playable" : "");
    b.dataset.depth = String(depth);
    b.disabled = !take;
    if (take) {
      b.title = take.text;
      b.addEventListener("click", () => play(take.action));
    }
    pile.appendChild(b);
  });
  // the melds a lay-off goes on, numbered as the moves number them
  const melds = $("table-melds");
  melds.replaceChildren();
  melds.parentElement.hidden = !t.melds.length;
  for (const m of t.melds) {
    const item = el("li", null, "table-meld");
    const b = el("button", null, "meld");
    b.type = "button";
    b.dataset.meld = String(m.index);
    b.appendChild(el("span", `${m.index}`, "meld-no"));
    b.appendChild(cardsLine(m.cards));
    b.appendChild(el("span", ` ${m.owner}`, "owner"));
    const fits = sel.length ? meldMoves(m.index, sel) : [];
    b.classList.toggle("target", fits.length > 0);
    b.disabled = !g.my_turn || state.locked;
    b.addEventListener("click", () => onMeldClick(m.index));
    item.appendChild(b);
    melds.appendChild(item);
  }
  // the hand
  const hand = $("hand");
  hand.replaceChildren();
  t.hand.forEach((card, i) => {
    const uses = moves.filter((m) => m.cards.includes(card.id));
    const b = cardButton(card, uses.length ? "playable" : "");
    b.dataset.index = String(i);
    if (uses.some((m) => m.kind === "discard")) b.dataset.discard = "1";
    if (uses.some((m) => ["layoff", "joker", "retrieve"].includes(m.kind))) b.dataset.layoff = "1";
    b.classList.toggle("selected", state.sel.includes(i));
    b.setAttribute("aria-pressed", state.sel.includes(i) ? "true" : "false");
    b.disabled = !g.my_turn || state.locked;
    b.addEventListener("click", () => onCardClick(i));
    hand.appendChild(b);
  });
  // the hints on the hand
  const h = t.hints;
  const hints = $("hints");
  hints.replaceChildren();
  if (h.points !== null) {
    hints.appendChild(el("strong", `${h.label} ${h.points}`));
    if (h.best_discard !== null) hints.appendChild(el("span", ` (after your best discard: ${h.best_discard})`));
    hints.appendChild(el("span", " · melds: "));
    if (!h.melds.length) hints.appendChild(el("span", "none"));
    h.melds.forEach((m, k) => {
      if (k) hints.appendChild(el("span", ", "));
      hints.appendChild(el("span", "[", "bracket"));
      hints.appendChild(cardsLine(m));
      hints.appendChild(el("span", "]", "bracket"));
    });
    hints.appendChild(el("span", " · unmelded: "));
    hints.appendChild(h.unmelded.length ? cardsLine(h.unmelded) : el("span", "none"));
  }
  for (const note of h.notes) hints.appendChild(el("span", ` · ${note}`, "note"));
  // the moves in words; those of the selected cards lit
  const box = $("moves");
  box.replaceChildren();
  if (!g.my_turn) return;
  g.seat_table.moves.forEach((m, k) => {
    const b = el("button", null, `move legal kind-${m.kind}`);
    b.type = "button";
    if (k < 9) b.appendChild(el("span", `${k + 1}`, "key"));
    b.appendChild(el("span", m.text, "words"));
    b.dataset.action = String(m.action);
    b.title = m.name;
    b.disabled = state.locked;
    b.classList.toggle("hl", usesSelection(m, sel));
    b.addEventListener("click", () => play(m.action));
    box.appendChild(b);
  });
}

function onCardClick(i) {
  if (!state.game || !state.game.my_turn || state.locked) return;
  const card = state.game.seat_table.hand[i];
  if (state.sel.length === 1 && state.sel[0] === i) {
    // a second click on the one selected card discards it
    const discard = legalMoves().find((m) => m.kind === "discard" && m.cards[0] === card.id);
    if (discard) {
      play(discard.action);
      return;
    }
  }
  const at = state.sel.indexOf(i);
  if (at >= 0) state.sel.splice(at, 1);
  else state.sel.push(i);
  const sel = selectedCards();
  const lit = legalMoves().filter((m) => usesSelection(m, sel));
  if (!sel.length) say("");
  else if (!lit.length) say("no legal move plays these cards now");
  else {
    const exact = lit.filter((m) => m.cards.length === sel.length);
    const tips = [];
    if (exact.some((m) => m.kind === "discard")) tips.push("click it again to discard it");
    if (lit.some((m) => ["layoff", "joker", "retrieve"].includes(m.kind))) tips.push("click a lit meld to lay it off");
    if (lit.some((m) => m.kind === "meld")) tips.push("select more cards for a meld, then its move");
    say(`${lit.length} move(s) with ${sel.length === 1 ? card.text : "these cards"}: ${tips.join("; ") || "lit below"}`);
  }
  renderCards();
}

function onMeldClick(m) {
  if (!state.game || !state.game.my_turn || state.locked) return;
  const sel = selectedCards();
  if (!sel.length) {
    say("select a card of your hand first, then click the meld to lay it off");
    return;
  }
  const fits = meldMoves(m, sel);
  if (fits.length === 1) play(fits[0].action);
  else if (!fits.length) say(`meld ${m} takes none of the selected cards now`);
  else say(`${fits.length} ways to play on meld ${m}: choose one of the lit moves`);
}

function onStockClick() {
  const draw = legalMoves().find((m) => m.kind === "draw");
  if (draw) play(draw.action);
}

// Keys 1-9 play the moves listed (keyboard play; the buttons also take Tab and Enter).
function onPlayKey(ev) {
  if ($("play-panel").hidden || !state.game || !state.game.my_turn || state.locked) return false;
  const tag = ev.target && ev.target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return false;
  if (!/^[1-9]$/.test(ev.key)) return false;
  const move = state.game.seat_table.moves[Number(ev.key) - 1];
  if (!move) return false;
  ev.preventDefault();
  play(move.action);
  return true;
}

// -- play: the game -----------------------------------------------------------------------------

function logMove(event) {
  const item = el("li", null, event.you ? "mine" : "");
  item.appendChild(el("span", who(event.agent, event.label) + ": ", "who"));
  item.appendChild(el("span", event.text || event.name, "move"));
  item.title = event.name;
  const log = $("log");
  log.appendChild(item);
  item.scrollIntoView({ block: "nearest" });
}

function setMoves(game, enabled) {
  state.locked = !enabled;
  if (state.game) renderCards();
}

function renderGame(game) {
  const same = state.game && state.game.id === game.id && state.game.steps === game.steps;
  state.game = game;
  if (!same) state.sel = [];
  state.locked = false;
  say("");
  $("game-area").hidden = false;
  $("setup").classList.add("compact");
  showPicture($("table"), game.svg);
  const me = `you are ${game.me}`;
  let status;
  if (game.over) status = `${game.title}: the game is over (${me}); every card is face up now.`;
  else if (game.my_turn) status = `${game.title}: your move (${me}).`;
  else status = `${game.title}: ${game.to_act} to act (${me}).`;
  $("status").textContent = status;
  renderCards();
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
    const returns = {};
    for (const [agent, value] of Object.entries(r.returns)) returns[who(agent, game.labels[agent])] = { return: value };
    result.appendChild(infoTable(returns));
  }
  const link = $("download");
  link.hidden = !game.record_ready;
  if (game.record_ready) {
    link.href = `/api/play/${encodeURIComponent(game.id)}/record`;
    link.setAttribute("download", `rummy-${game.game}-${game.seed}.jsonl`);
  }
  $("stop").hidden = game.over;
  $("again").hidden = !game.over;
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
    state.game = null;
    await showEvents(game, game.events);
    await playOn(game);
  });
}

async function play(action) {
  if (!state.game || state.busy || state.locked) return;
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

function newGame() {
  $("game-area").hidden = true;
  $("setup").classList.remove("compact");
  $("start").focus();
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
  if (onPlayKey(ev)) return;
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
  $("again").addEventListener("click", newGame);
  $("opponent").addEventListener("change", onOpponentChange);
  $("stock").addEventListener("click", onStockClick);
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
