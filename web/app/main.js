// wildtable in a browser: the name, the lobby, a table. One WebSocket to the server that
// served this page (net.js); every screen is drawn from what the server last said (its
// views carry the whole state of the seat, docs/PROTOCOL.md), never from a patched copy.
// The table screen keeps its elements while it shows the same table, and a drawing
// rewrites only the parts whose content changed (dom.js kept/keyed/put): all it shows is
// still derived from the last view, but an update of a busy Run Wild table costs the few
// elements it changed, not the whole table.

import { Connection } from "./net.js";
import { store } from "./store.js";
import { attr, button, clear, h, keepFocus, kept, keyed, put, text } from "./dom.js";
import { GAMES, gameFor, seatName } from "./games/index.js";
import { onFelt } from "./felt.js";
import { afterDraw, beforeDraw, forgetPlaces, moves } from "./motion.js";
import { linkBox, linkedTable, showLink } from "./links.js";
import { enableDrag } from "./drag.js";

const root = document.getElementById("app");
const connLine = document.getElementById("conn");

const app = {
  name: "",
  conn: null,
  screen: "name",          // "name" | "lobby" | "table" | "replay"
  tables: [],
  omitted: 0,
  lobbyNote: null,         // {text, error}
  creating: false,         // a table_created answers our own create: join it
  at: null,                // the table: {id, game, seat, token, seq, view, players, over, events, eventsCut, refusal, ui}
  intents: new Map(),      // intent id -> what was tried (the words shown with its refusal)
  nextIntent: 1,
  lobbyTimer: null,
  tick: null,
  deadline: null,          // the turn timer's end (performance.now() ms), for the countdown
  updateMs: [],            // time to apply each update, ms (bench/web.py reads it)
  lobby: true,             // false: a server of replays only (wildtable replay LOG --web), no games
  replay: null,            // the replay viewer's state (replay.js, loaded when first wanted)
  asked: null,             // the last message a cluster may redirect (onRedirect sends it again)
  hops: 0,                 // redirects followed for it
  moves,                   // the cards' last moves on screen (motion.js)
  linking: null,           // the table a link asked to join: a refused join watches it
  linkWatch: null,         // ... and the one it then asked to watch
  notYet: 0,               // rejoins refused "not yet" since the seat was last held (NOT_YET)
  notYetTimer: null,       // the one that asks again
  connText: "",            // the connection line while it is open (a "not yet" covers it)
};
window.wildtable = app;    // for the curious and the tests: read only

// ------------------------------------------------------------------ connection
function start(name) {
  app.name = name;
  store.setName(name);
  app.conn = new Connection({ name, onMessage, onState });
  app.conn.open();
}

function onState(state, detail) {
  if (state === "closed" && !detail) return;      // closed on purpose: the line says why already
  connLine.textContent = state === "open" ? `connected as ${app.name} (${detail})` : state === "connecting" ? "connecting..." : detail;
  connLine.dataset.state = state;
  if (state === "open") app.connText = connLine.textContent;
}

function send(msg) {
  if (!app.conn || !app.conn.send(msg)) {
    note("not connected: wait a moment and try again", true);
    return false;
  }
  if (FOLLOWED.has(msg.type)) {
    app.asked = msg;
    app.hops = 0;
  }
  return true;
}

// ------------------------------------------------------------------ a cluster's redirects
// A node of a cluster answers these with `redirect` when another node serves the table
// (docs/PROTOCOL.md "Clusters"): the page goes there and sends the message again, a
// create_table with `here`, at most MAX_HOPS times for one message. Seat tokens stay
// keyed by this page's server (store.js), the cluster's entry.
const FOLLOWED = new Set(["create_table", "join", "rejoin", "spectate", "seat_bots"]);
const MAX_HOPS = 3;

function onRedirect(msg) {
  const asked = app.asked;
  let code = "bad_redirect", why = null;
  if (!asked || asked.type !== msg.ref) why = `the server sent this page to ${msg.url} for a ${msg.ref} it did not send`;
  else if (!/^wss?:\/\//i.test(String(msg.url))) why = `the server sent this page to ${msg.url}, which is not a ws:// or wss:// address`;
  else if (app.hops >= MAX_HOPS) {
    code = "too_many_redirects";
    why = `the cluster sent this ${msg.ref} on more than ${MAX_HOPS} times (last to ${msg.url}); try again in a moment`;
  }
  if (why) {
    app.asked = null;
    if (app.screen === "table" && app.at) {
      app.at.refusal = { what: msg.ref, code, reason: why };
      drawTable();
    } else {
      toLobby(`${code}: ${why}`, true);
    }
    return;
  }
  app.hops += 1;
  const again = msg.ref === "create_table" ? { ...asked, here: true } : asked;
  app.asked = again;
  app.conn.follow(msg.url, again);
}

function onMessage(msg) {
  switch (msg.type) {
    case "welcome": return onWelcome();
    case "table_list":
      app.tables = msg.tables || [];
      app.omitted = msg.omitted || 0;
      if (app.screen === "lobby") drawLobby();
      return;
    case "table_created":
      if (app.creating) {
        app.creating = false;
        send({ type: "join", table: msg.table, seat: null });
      }
      return;
    case "joined": return onSeated(msg, msg.seat, msg.token);
    case "bots_seated":
      if (app.at && app.at.id === msg.table) {
        app.at.events.push(`bots seated (${msg.level}): ${msg.names.map((n, i) => `${n} at seat ${msg.seats[i]}`).join(", ")}`);
        drawTable();
      }
      return;
    case "spectating": return onSeated(msg, null, null);
    case "players":
      if (app.at && app.at.id === msg.table) {
        app.at.players = msg.players;
        drawTable();
      }
      return;
    case "accepted":
      app.intents.delete(msg.intent);
      return;
    case "rejected": {
      const what = app.intents.get(msg.intent) || `intent ${msg.intent}`;
      app.intents.delete(msg.intent);
      if (app.at) {
        app.at.refusal = { what, code: msg.code, reason: msg.reason };
        drawTable();
      }
      return;
    }
    case "update": return onUpdate(msg);
    case "hint_given":      // the answer to the Hint button: shown while the table is at its seq
      if (app.at) {
        app.at.hint = msg;
        drawTable();
      }
      return;
    case "game_over":
      if (app.at) {
        app.at.over = msg;
        drawTable();
      }
      return;
    case "left":
      app.at = null;
      showLink(null);
      toLobby();
      return;
    case "error": return onError(msg);
    case "redirect": return onRedirect(msg);
    case "notice":
      // play paused (the server's disk is full) or resumed: shown where refusals are
      if (app.at && app.at.id === msg.table) {
        app.at.refusal = msg.code === "storage_resumed" ? null : { what: "the table", code: msg.code, reason: msg.message };
        drawTable();
      }
      note(msg.message, msg.code !== "storage_resumed");
      return;
    case "goodbye":
      note(`the server says goodbye: ${msg.reason}`, true);
      if (app.at) {
        app.at.refusal = { what: "connection", code: "goodbye", reason: msg.reason };
        drawTable();
      }
      return;
    default:
      return;
  }
}

// A rejoin (or spectate) refused for a reason that passes is "not yet", never "gone": the
// table's node is still taking it over or cannot reach its store (storage_error), its disk
// is full, every node is full, or we asked too fast. The seat's token is kept and the seat
// asked for again after each of these pauses, the last one repeated (docs/PROTOCOL.md,
// "Clusters"); what the page says meanwhile is on its connection line.
const NOT_YET = new Set(["storage_error", "storage_full", "too_many_tables", "rate_limited"]);
const NOT_YET_PAUSES = [1, 2, 4, 8, 15];      // seconds

function notYetAgain(msg, text) {
  const cur = app.at ? { table: app.at.id, spectate: app.at.seat === null } : store.current();
  if (!cur || !cur.table) return false;
  const kept = msg.ref === "rejoin" ? store.seat(cur.table, app.name) : null;
  if (msg.ref === "rejoin" && !kept) return false;
  const pause = NOT_YET_PAUSES[Math.min(app.notYet, NOT_YET_PAUSES.length - 1)];
  app.notYet += 1;
  const conn = app.conn, ws = conn.ws;
  connLine.textContent = `cannot go back to the table yet (${text}); trying again in ${pause} s...`;
  connLine.dataset.state = "waiting";
  clearTimeout(app.notYetTimer);
  app.notYetTimer = setTimeout(() => {
    // only on the same connection (a new one asks by itself, onWelcome)
    if (conn.ws !== ws || !conn.ready) return;
    send(msg.ref === "rejoin" ? { type: "rejoin", table: cur.table, seat: kept.seat, token: kept.token }
                              : { type: "spectate", table: cur.table });
  }, pause * 1000);
  return true;
}

function onWelcome() {
  if (app.screen === "replay") return;      // the way back from the replay viewer asks again
  // back to the table this tab sat at (a reload, or a dropped connection), or to the one
  // its address names (a link, /#t=ID: docs/PLAYING.md "In a browser")
  const link = linkedTable();
  let cur = app.at ? { table: app.at.id, spectate: app.at.seat === null } : store.current();
  if (link && (!cur || cur.table !== link)) cur = { table: link, link: true };
  if (cur && cur.table) {
    const kept = store.seat(cur.table, app.name);
    if (!cur.spectate && kept) {
      send({ type: "rejoin", table: cur.table, seat: kept.seat, token: kept.token });
      return;
    }
    if (cur.spectate) {
      send({ type: "spectate", table: cur.table });
      return;
    }
    if (cur.link) {
      openLink(cur.table);
      return;
    }
  }
  toLobby();
}

// ------------------------------------------------------------------ links to a table
// A table's address is this page's with #t=ID: opened, it rejoins this browser's seat at
// that table (the same name), else takes a free seat, else watches.
function openLink(table) {
  const kept = store.seat(table, app.name);
  if (kept) {
    send({ type: "rejoin", table, seat: kept.seat, token: kept.token });
    return;
  }
  app.linking = table;        // a refused join watches instead (onError)
  send({ type: "join", table, seat: null });
}


function onSeated(msg, seat, token) {
  app.linking = app.linkWatch = null;
  if (app.notYet) {         // back after "not yet": the connection line says connected again
    app.notYet = 0;
    clearTimeout(app.notYetTimer);
    connLine.textContent = app.connText;
    connLine.dataset.state = "open";
  }
  if (token) store.keepSeat(msg.table, app.name, seat, token, msg.game);
  store.setCurrent({ table: msg.table, spectate: seat === null });
  const same = app.at && app.at.id === msg.table;
  app.at = {
    id: msg.table, game: msg.game, seat, seq: msg.seq, view: msg.view || {}, players: msg.players || [],
    over: null, events: same ? app.at.events : [], eventsCut: same ? app.at.eventsCut : 0, refusal: null, ui: same ? app.at.ui : {},
  };
  app.at.events.push(seat === null ? "you watch this table" : same ? "you are back at your seat" : "you sat down at the table");
  setDeadline();
  if (app.screen !== "replay") showTable();
}

function onUpdate(msg) {
  const at = app.at;
  if (!at) return;
  const t0 = performance.now();
  if (msg.view !== undefined) at.view = msg.view;
  else if (msg.base !== at.seq) {
    // a patch of a view this page does not hold: reconnect; the rejoin's snapshot resyncs
    if (app.conn.ws) app.conn.ws.close(4000, "resync");
    return;
  } else {
    // a patch (docs/PROTOCOL.md "update"): a new object; the unchanged keys keep theirs
    const v = Object.assign({}, at.view, msg.changed);
    for (const k of msg.removed || []) delete v[k];
    for (const [k, spec] of Object.entries(msg.items || {})) {
      // [length, index, item, ...]: the list cut or grown to length, those items set
      const list = (Array.isArray(v[k]) ? v[k] : []).slice(0, spec[0]);
      while (list.length < spec[0]) list.push(null);
      for (let j = 1; j + 1 < spec.length; j += 2) list[spec[j]] = spec[j + 1];
      v[k] = list;
    }
    at.view = v;
  }
  at.seq = msg.seq;
  const g = gameFor(at.game);
  for (const ev of msg.events || []) {
    const text = g.describe(ev, ctxFor(at));
    if (text) at.events.push(text);
  }
  const cut = Math.max(0, at.events.length - 60);
  at.events.splice(0, cut);
  at.eventsCut += cut;          // events[i] is the (eventsCut + i)th of this table: its key
  setDeadline();
  drawTable();
  // how long the page took to apply it (events, redraw), for bench/web.py: the last 2,000
  app.updateMs.push(performance.now() - t0);
  if (app.updateMs.length > 2000) app.updateMs.splice(0, 1000);
}

function onError(msg) {
  const text = `${msg.code}: ${msg.message}`;
  if (msg.code === "seat_taken_over") {
    // this seat was taken back by another page or client (another tab of this browser
    // holds the same token): do not take it back in turn, or the two would fight forever
    app.conn.stopped = true;
    connLine.textContent = "your seat is played from another window now; reload this page to play here";
    connLine.dataset.state = "lost";
    if (app.at) {
      app.at.refusal = { what: "your seat", code: msg.code, reason: msg.message };
      drawTable();
    }
    return;
  }
  if (msg.ref === "join" && app.linking) {
    // the link's table has no free seat for us: watch it
    const table = app.linking;
    app.linking = null;
    app.linkWatch = table;
    send({ type: "spectate", table });
    return;
  }
  if ((msg.ref === "rejoin" || msg.ref === "spectate") && NOT_YET.has(msg.code) && notYetAgain(msg, text)) return;
  if (msg.ref === "rejoin") {
    // the seat is gone (released, forgotten, expired): drop its token, back to the lobby
    const cur = app.at ? app.at.id : (store.current() || {}).table;
    if (cur) store.dropSeat(cur, app.name);
    store.setCurrent(null);
    app.at = null;
    showLink(null);
    toLobby(`could not take the seat back: ${text}`, true);
    return;
  }
  if (msg.ref === "spectate" && (app.screen !== "lobby" || app.linkWatch)) {
    app.linkWatch = null;
    store.setCurrent(null);
    app.at = null;
    showLink(null);
    toLobby(text, true);
    return;
  }
  if (app.screen === "table" && app.at) {
    app.at.refusal = { what: msg.ref || "request", code: msg.code, reason: msg.message };
    drawTable();
  } else {
    app.creating = false;
    note(text, true);
  }
}

// ------------------------------------------------------------------ screens
function note(text, error = false) {
  app.lobbyNote = { text, error };
  if (app.screen === "lobby") drawLobby();
}

function drawName() {
  app.screen = "name";
  clear(root);
  root.dataset.screen = "name";
  const input = h("input", { id: "name", name: "name", maxlength: 40, required: true, autocomplete: "nickname", value: store.name() });
  const form = h("form", {
    class: "card-panel", onsubmit: (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      start(name);
      toLobby();
    },
  }, h("label", { for: "name" }, "Your name "), input, " ", h("button", { type: "submit", id: "enter" }, "Enter"));
  const link = linkedTable();
  root.append(h("section", { "aria-label": "your name" },
    link ? h("p", { id: "invited" }, `You are invited to table ${link}: type your name to sit down.`) : null, form));
  input.focus();
}

function toLobby(text, error) {
  app.screen = "lobby";
  if (text) app.lobbyNote = { text, error: !!error };
  stopTick();
  if (app.conn && app.conn.ready) send({ type: "list_tables" });
  if (app.lobbyTimer === null) {
    app.lobbyTimer = setInterval(() => {
      if (app.screen === "lobby" && app.conn && app.conn.ready) send({ type: "list_tables" });
    }, 2000);
  }
  drawLobby();
}

const TABLE_STATUS = { waiting: "waiting for players", playing: "playing", over: "finished" };

function drawLobby() {
  keepFocus(root, () => {
    const rows = app.tables.map((t) => {
      const players = (t.players || []).map((p, i) => p === null ? "(free seat)" : `${p}${t.connected && !t.connected[i] ? " (offline)" : ""}`);
      const mine = store.seat(t.table, app.name);
      const free = (t.players || []).some((p) => p === null);
      const buttons = [];
      if (mine && t.status !== "over") {
        buttons.push(button("Rejoin", () => send({ type: "rejoin", table: t.table, seat: mine.seat, token: mine.token }), { "data-key": `rejoin-${t.table}`, "data-action": "rejoin" }));
      } else if (free && t.status !== "over") {
        buttons.push(button("Join", () => send({ type: "join", table: t.table, seat: null }), { "data-key": `join-${t.table}`, "data-action": "join" }));
      }
      buttons.push(button("Watch", () => send({ type: "spectate", table: t.table }), { "data-key": `watch-${t.table}`, "data-action": "watch" }));
      if (t.status === "over") buttons.push(" ", h("a", { href: `#replay=${encodeURIComponent(t.table)}`, "data-action": "replay" }, "Replay"));
      return h("tr", { dataset: { table: t.table, status: t.status } },
        h("td", {}, h("a", { href: `#t=${encodeURIComponent(t.table)}`, "data-action": "link", title: "this table's link" }, t.name || t.table)),
        h("td", {}, gameFor(t.game).title), h("td", { class: "tplayers" }, players.join(", ")),
        h("td", {}, TABLE_STATUS[t.status] || t.status), h("td", { class: "row-actions" }, buttons));
    });
    const list = rows.length
      ? h("table", { class: "tables" }, h("caption", {}, "Tables"),
        h("thead", {}, h("tr", {}, ["table", "game", "players", "status", ""].map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, rows))
      : h("p", { class: "hint" }, "No tables yet: create one.");
    if (root.dataset.screen !== "lobby") {
      // the form is made once per visit of the lobby, so a refresh of the list never
      // wipes what the player is typing
      clear(root);
      root.dataset.screen = "lobby";
      root.append(h("div", { id: "lobby-note-box" }), h("section", { id: "tables-box", "aria-label": "tables" }),
        h("p", {}, h("a", { href: "#replays", id: "to-replays" }, "Finished games: replays")), createForm(),
        h("p", { class: "hint" }, `playing as ${app.name}; `, button("change name", () => {
          if (app.conn) app.conn.close();
          app.conn = null;
          clearInterval(app.lobbyTimer);
          app.lobbyTimer = null;
          drawName();
        }, { class: "small", id: "rename", "data-key": "rename" })));
    }
    clear(document.getElementById("lobby-note-box")).append(
      app.lobbyNote ? h("p", { class: app.lobbyNote.error ? "refusal" : "hint", role: "alert", id: "lobby-note" }, app.lobbyNote.text) : "");
    clear(document.getElementById("tables-box")).append(list,
      app.omitted ? h("p", { class: "hint" }, `${app.omitted} more not listed`) : "");
  });
}

// The games and their settings, as the server's engines define them (/games.json, made by
// server/web.py); without it, the games this page knows, with no settings offered.
// ``lobby`` false: a server of one replay (wildtable replay LOG --web), with no games.
async function loadGames() {
  try {
    const r = await fetch("/games.json");
    if (r.ok) return await r.json();
  } catch {
    // the lobby still works with the page's own list
  }
  return { games: GAMES.map((g) => ({ name: g.name, title: g.title, min_seats: 2, max_seats: 6, settings: [] })), lobby: true };
}

function settingInput(s) {
  const id = `set-${s.name}`;
  const common = { id, "data-setting": s.name, "data-key": id };
  if (s.type === "bool") return h("input", { ...common, type: "checkbox", checked: s.default });
  if (s.type === "int") return h("input", { ...common, type: "number", step: 1, value: s.default });
  if (s.type === "float") return h("input", { ...common, type: "number", step: "any", value: s.default });
  if (s.type === "str") return h("input", { ...common, value: s.default });
  return mapInput(s);
}

// A map setting (Wild Shots' symbols: card -> symbol; snake_oil: symbol -> count): its
// default names its keys and the type of each value; the strings its default holds are
// offered as choices. The engine checks the whole when the table is created.
function mapInput(s) {
  const entries = Object.entries(s.default || {});
  const strings = [...new Set(entries.map(([, v]) => v).filter((v) => typeof v === "string"))].sort();
  const listId = `choices-${s.name}`;
  const rows = entries.map(([k, v]) => {
    const common = { "data-map": s.name, "data-entry": k, "data-key": `set-${s.name}-${k}`, "aria-label": `${s.name.replaceAll("_", " ")}: ${k}` };
    let input;
    if (typeof v === "boolean") input = h("input", { ...common, type: "checkbox", checked: v });
    else if (typeof v === "number") input = h("input", { ...common, type: "number", step: Number.isInteger(v) ? 1 : "any", value: v });
    else if (typeof v === "string") input = h("input", { ...common, value: v, list: strings.length ? listId : null, size: 9 });
    else input = h("input", { ...common, value: JSON.stringify(v), "data-json": "yes" });
    return h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, input));
  });
  return h("details", { class: "mapset", id: `set-${s.name}`, "data-setting": s.name, "data-key": `set-${s.name}` },
    h("summary", {}, `${entries.length} entries`),
    strings.length ? h("datalist", { id: listId }, strings.map((v) => h("option", { value: v }))) : null,
    h("table", {}, h("tbody", {}, rows)));
}

function entryValue(input) {
  if (input.type === "checkbox") return input.checked;
  if (input.type === "number") return input.value.trim() === "" ? null : Number(input.value);
  if (input.dataset.json) {
    try {
      return JSON.parse(input.value);
    } catch {
      return input.value;     // the engine says what is wrong with it
    }
  }
  return input.value;
}

function settingValue(s, input) {
  if (s.type === "bool") return input.checked;
  if (s.type === "str") return input.value;
  if (s.type === "map") {
    const out = {};
    for (const el of input.querySelectorAll("[data-entry]")) out[el.dataset.entry] = entryValue(el);
    return out;
  }
  return Number(input.value);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function createForm() {
  const games = app.games;
  const gameSel = h("select", { id: "game", name: "game", "data-key": "game" }, games.map((g) => h("option", { value: g.name }, g.title)));
  gameSel.value = app.createGame || games[0].name;
  const g = games.find((x) => x.name === gameSel.value) || games[0];
  const seats = h("input", { id: "seats", name: "seats", type: "number", min: g.min_seats, max: g.max_seats, value: g.min_seats, "data-key": "seats" });
  const tname = h("input", { id: "tname", name: "tname", maxlength: 60, placeholder: "optional", "data-key": "tname" });
  const shown = g.settings;
  const fields = shown.map((s) => (s.type === "map"
    ? h("div", { class: "mapfield" }, h("span", {}, `${s.name.replaceAll("_", " ")} `), settingInput(s))
    : h("p", {}, h("label", { for: `set-${s.name}` }, `${s.name.replaceAll("_", " ")} `), settingInput(s))));
  gameSel.addEventListener("change", () => {
    app.createGame = gameSel.value;
    document.getElementById("create").replaceWith(createForm());
    document.getElementById("game").focus();
  });
  const form = h("form", {
    id: "create", onsubmit: (e) => {
      e.preventDefault();
      const settings = {};
      for (const s of shown) {
        const v = settingValue(s, form.querySelector(`[data-setting="${s.name}"]`));
        if (!same(v, s.default)) settings[s.name] = v;
      }
      const msg = { type: "create_table", game: g.name, seats: Number(seats.value), settings };
      if (tname.value.trim()) msg.name = tname.value.trim();
      app.creating = true;
      app.lobbyNote = null;
      send(msg);
    },
  },
  h("h2", {}, "New table"),
  h("p", {}, h("label", { for: "game" }, "game "), gameSel, " ", h("label", { for: "seats" }, `seats (${g.min_seats}-${g.max_seats}) `), seats),
  h("p", {}, h("label", { for: "tname" }, "table name "), tname),
  h("details", {}, h("summary", {}, "settings"), fields),
  h("p", {}, h("button", { type: "submit", id: "create-btn" }, "Create and join")),
  h("p", { class: "hint" }, "To play against bots: create the table, then \"Seat bots\" at it."));
  return form;
}

// One ctx per table sat at (the game modules keep their drawing's elements by it, and
// their handlers read it when clicked): it reads the table's current view and players.
const ctxs = new WeakMap();

function ctxFor(at) {
  let ctx = ctxs.get(at);
  if (!ctx) {
    ctx = makeCtx(at);
    ctxs.set(at, ctx);
  }
  return ctx;
}

function makeCtx(at) {
  return {
    get view() { return at.view || {}; },
    get players() { return at.players; },
    seat: at.seat,
    ui: at.ui,
    connected: (seat) => {
      const p = (at.players || []).find((x) => x.seat === seat);
      return !p || !p.name || p.connected !== false;     // a free seat is not "offline"
    },
    act(action, what) {
      const id = app.nextIntent++;
      app.intents.set(id, what);
      at.refusal = null;
      if (!send({ type: "intent", id, action })) app.intents.delete(id);
    },
    refuse(what, reason) {        // refused here, before the server: said the same way
      at.refusal = { what, code: "", reason };
      drawTable();
    },
    redraw: () => drawTable(),
  };
}

function showTable() {
  app.screen = "table";
  showLink(app.at.id);
  if (app.lobbyTimer !== null) {
    clearInterval(app.lobbyTimer);
    app.lobbyTimer = null;
  }
  drawTable();
  startTick();
}

function setDeadline() {
  const v = app.at && app.at.view;
  app.deadline = v && v.turn_timer > 0 && v.turn !== null && v.turn !== undefined && v.phase !== "over"
    ? performance.now() + v.turn_timer * 1000 : null;
}

function countdown() {
  if (app.deadline === null) return "";
  return `${Math.max(0, Math.ceil((app.deadline - performance.now()) / 1000))} s`;
}

function startTick() {
  stopTick();
  app.tick = setInterval(() => {
    const el = document.getElementById("countdown");
    if (el) el.textContent = countdown();
  }, 250);
}

function stopTick() {
  if (app.tick !== null) clearInterval(app.tick);
  app.tick = null;
}

// The table screen's elements, kept while the page shows the same table (the same `at`:
// a new seat, a rejoin or another table draws it afresh).
let shown = null;

function tableScreen(at, g) {
  if (shown && shown.at === at && root.dataset.screen === "table" && shown.section.parentNode === root) return shown;
  clear(root);
  root.dataset.screen = "table";
  const s = {
    at,
    kept: new Map(),
    eventItems: new Map(),
    section: h("section", { id: "table", "aria-label": "table" }),
    head: h("div", { class: "tablehead" }),
    title: h("h2", {}, `${g.title} - table ${at.id}`),
    status: h("p", { id: "status" }),
    leave: button("", () => leave(), { id: "leave", "data-key": "leave" }),
    board: h("div", { class: "board" }),
    handHead: h("h3", {}, "Your hand"),
    hand: h("section", { "aria-label": "your hand" }),
    actions: h("div", { class: "actions", role: "toolbar", "aria-label": "actions" }),
    events: h("ol", { id: "events", reversed: true }),
  };
  s.linkBox = linkBox(at.id);
  s.eventsBox = h("section", { class: "events", "aria-label": "what happened" }, h("h3", {}, "What happened"), s.events);
  s.feltParts = {};
  root.append(s.section);
  forgetPlaces();
  shown = s;
  return s;
}

function drawTable() {
  const at = app.at;
  if (!at || app.screen !== "table") return;
  const g = gameFor(at.game);
  const ctx = ctxFor(at);
  beforeDraw(root);
  keepFocus(root, () => {
    const s = tableScreen(at, g);
    const parts = g.render(ctx);
    const v = ctx.view;
    const data = { table: at.id, game: at.game, seq: at.seq, phase: v.phase || "", seat: at.seat === null ? "" : at.seat, over: at.over ? "yes" : "no" };
    for (const [k, x] of Object.entries(data)) attr(s.section, `data-${k}`, x);
    const st = g.status(ctx);
    text(s.status, `${at.seat === null ? "watching" : `playing as ${app.name}`}${st ? ` - ${st}` : ""}`);
    text(s.leave, at.over || at.seat === null ? "Back to lobby" : "Leave table");
    put(s.head, s.title, s.status, turnLine(s, at, ctx), overLine(s, at, ctx), s.leave, at.over ? null : s.linkBox);
    put(s.board, onFelt(parts.board, at.seat, v, s.feltParts));
    if (parts.hand) put(s.hand, s.handHead, parts.hand);
    if (parts.actions && parts.actions.length) put(s.actions, parts.actions);
    put(s.events, keyed(s.eventItems, at.events.slice(-12).map((t, i, last) => [at.eventsCut + at.events.length - last.length + i, t]).reverse(),
      ([n]) => n, ([, t]) => t, ([n, t]) => h("li", { value: n + 1 }, t)));    // numbered in the table's order
    put(s.section, s.head, botsControl(s, at), s.board, parts.hand ? s.hand : null,
      parts.actions && parts.actions.length ? s.actions : null, hintLine(s, at), refusalLine(s, at), s.eventsBox);
  });
  afterDraw(root);
}

function turnLine(s, at, ctx) {
  const v = ctx.view;
  if (v.turn === undefined || v.turn === null || v.phase === "over") return null;
  const mine = v.turn === at.seat;
  const who = mine ? "Your turn" : `${seatName(ctx, v.turn)} to play`;
  const el = kept(s.kept, "turn", JSON.stringify([who, app.deadline !== null]), () => h("p", { id: "turn", class: mine ? "yourturn" : "" },
    who, app.deadline !== null ? [" - ", h("span", { id: "countdown", "aria-label": "turn timer" })] : null));
  const cd = el.querySelector("#countdown");
  if (cd) text(cd, countdown());
  return el;
}

function overLine(s, at, ctx) {
  if (!at.over) return null;
  const scores = (at.players || []).map((p) => `${seatName(ctx, p.seat)} ${at.over.scores[p.seat]}`).join(", ");
  const won = at.over.winners.length ? `Won: ${at.over.winners.map((x) => seatName(ctx, x)).join(", ")}.` : "Nobody won.";
  return kept(s.kept, "over", JSON.stringify([scores, won]), () => h("p", { id: "over", role: "status" }, `Game over. Scores: ${scores}. `,
    won, " ", h("a", { href: `#replay=${encodeURIComponent(at.id)}`, id: "replay-this" }, "Replay this game")));
}

// made anew for each refusal (so that its alert is said again), kept while it stands
function refusalLine(s, at) {
  const r = at.refusal;
  return kept(s.kept, "refusal", r, () => (r
    ? h("p", { id: "refusal", class: "refusal", role: "alert", dataset: { code: r.code } },
      h("strong", {}, r.what), ": ", r.code ? `${r.code} - ` : "", r.reason)
    : h("p", { id: "refusal", class: "refusal empty", role: "alert" })));
}

// "Hint" (the protocol's hint): the server's expert says what it would play for this seat,
// from this seat's view alone (docs/PLAYING.md "Hints and analysis"); stale once the table moves on.
function hintLine(s, at) {
  if (at.seat === null || at.over) return null;
  const got = at.hint && at.hint.seq === at.seq ? at.hint.text : "";
  return kept(s.kept, "hint", got, () => h("p", { class: "hint" },
    button("Hint", () => send({ type: "hint" }), { id: "hint", "data-key": "hint" }), " ",
    h("span", { id: "hint-text", role: "status" }, got)));
}

// "Seat bots" (the protocol's seat_bots): the server runs them, and they play on when this
// player goes. Only a seated player may ask, while seats are free and the game is not over.
const LEVELS = ["easy", "normal", "hard", "expert"];

function botsControl(s, at) {
  const free = (at.players || []).filter((p) => !p.name).length;
  if (at.seat === null || at.over || free === 0) return null;
  return kept(s.kept, "bots", String(free), () => {
    const ui = at.ui;
    ui.bots = Math.min(Math.max(ui.bots || free, 1), free);
    ui.level = ui.level || "normal";
    const count = h("select", { id: "bot-count", "data-key": "bot-count", "aria-label": "how many bots",
      onchange: (e) => { ui.bots = Number(e.target.value); } },
    Array.from({ length: free }, (_, i) => h("option", { value: i + 1, selected: ui.bots === i + 1 }, `${i + 1} bot${i ? "s" : ""}`)));
    const level = h("select", { id: "bot-level", "data-key": "bot-level", "aria-label": "how well they play",
      onchange: (e) => { ui.level = e.target.value; } },
    LEVELS.map((l) => h("option", { value: l, selected: ui.level === l }, l)));
    return h("p", { class: "seatbots" }, `${free} seat${free > 1 ? "s" : ""} free: `, count, " ", level, " ",
      button("Seat bots", () => {
        at.refusal = null;
        send({ type: "seat_bots", table: at.id, count: ui.bots, level: ui.level });
      }, { id: "seat-bots", "data-action": "seat_bots", "data-key": "seat-bots" }));
  });
}

function leave() {
  const at = app.at;
  if (!at) return toLobby();
  if (at.seat !== null && !at.over) store.dropSeat(at.id, app.name);
  store.setCurrent(null);
  showLink(null);
  if (!send({ type: "leave" })) toLobby();
}

function onKey(ev) {
  if (app.screen === "replay") {
    if (replayMod && replayMod.replayKey(ev)) ev.preventDefault();
    return;
  }
  if (app.screen !== "table" || !app.at || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
  const g = gameFor(app.at.game);
  if (g.keys && g.keys(ev, ctxFor(app.at))) ev.preventDefault();
}

// ------------------------------------------------------------------ replays
// #replays and #replay=TABLE... are the replay viewer (replay.js): it needs no name and no
// WebSocket; leaving it comes back to the table or lobby the page was at. Its module is
// loaded the first time it is wanted, so a player who never opens a replay never loads it.
let replayMod = null;

// "#replays" -> {list: true}; "#replay=t1&step=3&view=1" -> {table, step, seq, view}; else null
function replayRoute(hash) {
  const text = (hash || "").replace(/^#/, "");
  if (text === "replays") return { list: true };
  if (!text.startsWith("replay=")) return null;
  const q = new URLSearchParams(text);
  const num = (k) => (q.has(k) && /^\d{1,9}$/.test(q.get(k)) ? Number(q.get(k)) : null);
  return { table: q.get("replay"), step: num("step"), seq: num("seq"), view: q.get("view") || "all" };
}

async function openReplay(r) {
  if (replayMod === null) {
    replayMod = await import("./replay.js");
    app.replay = replayMod.replayState;
  }
  if (app.screen !== "replay") return;       // left meanwhile
  if (r.list) replayMod.showReplays();
  else replayMod.showReplay(r);
}

function route() {
  const r = replayRoute(location.hash);
  if (!r) return false;
  app.screen = "replay";
  if (!app.conn) {
    connLine.textContent = app.lobby ? "" : "replay viewer (wildtable replay --web): no games here";
    connLine.dataset.state = "replay";
  }
  stopTick();
  if (app.lobbyTimer !== null) {
    clearInterval(app.lobbyTimer);
    app.lobbyTimer = null;
  }
  openReplay(r);
  return true;
}

function fromReplay() {
  if (replayMod) replayMod.leaveReplay();
  if (!app.lobby) {
    location.hash = "#replays";       // no games here
    return;
  }
  app.screen = "name";
  clear(root);
  if (app.conn && app.conn.ready) onWelcome();
  else if (app.conn) root.append(h("p", { class: "hint" }, "connecting..."));   // its welcome draws the lobby
  else begin();
}

window.addEventListener("hashchange", () => {
  if (route()) return;
  if (app.screen === "replay") {
    fromReplay();
    return;
  }
  const link = linkedTable();      // a link to a table followed in the lobby
  if (link && app.screen === "lobby" && app.conn && app.conn.ready) openLink(link);
});

function begin() {
  const saved = store.name();
  if (saved) {
    root.append(h("p", { class: "hint" }, `connecting as ${saved}...`));
    start(saved);
  } else {
    drawName();
  }
}

document.addEventListener("keydown", onKey);
// a card dragged onto its target (drag.js): the game's module says what the drop sends
enableDrag(root, (from, to) => {
  const at = app.at;
  if (app.screen !== "table" || !at || at.seat === null || at.over) return;
  const g = gameFor(at.game);
  if (g.drop) g.drop(ctxFor(at), from, to);
});
const schema = await loadGames();
app.games = schema.games;
app.lobby = schema.lobby !== false;
if (!app.lobby && !replayRoute(location.hash)) history.replaceState(null, "", "#replays");
if (!route()) begin();
