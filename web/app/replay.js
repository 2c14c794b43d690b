// The replay viewer: finished games, stepped through record by record. The server folds
// the log with the games' own engines (server/replays.py) and answers one step at a time
// (GET /replay/TABLE.json?step=N&view=V, docs/PROTOCOL.md "Replays over HTTP"); this page
// only draws what it gets, with the same game modules as the table screen (their buttons
// disabled). Where it is: the address's hash, #replay=TABLE&step=N&view=V, so a reload or a
// shared link shows the same record; #replays is the list of finished games.

import { button, clear, h, keepFocus } from "./dom.js";
import { gameFor, seatName } from "./games/index.js";
import { onFelt } from "./felt.js";

const root = document.getElementById("app");
// ``want``: the step last asked for, while its answer is on its way (keys pressed quickly
// move on from there, not from the step shown)
// ``only``: the filter (refused, seat:N, kind:K; "" none); ``query``/``queryBack``: the last
// search, for n and N; ``note``: why a search found nothing
const view = { list: null, at: null, route: null, loading: 0, error: null, want: null, only: "", query: "", queryBack: false, note: null };
export const replayState = view;     // window.wildtable.replay (main.js): for the tests, read only

function hashFor(r) {
  return `#replay=${encodeURIComponent(r.table)}&step=${r.step}&view=${encodeURIComponent(r.view)}`;
}

async function getJSON(url) {
  let r;
  try {
    r = await fetch(url, { cache: "no-store" });
  } catch (e) {
    return { error: `the server did not answer (${e.message})` };
  }
  try {
    const body = await r.json();
    return r.ok ? body : { error: body.error || `${r.status} ${r.statusText}` };
  } catch {
    return { error: `${r.status} ${r.statusText}` };
  }
}

// ------------------------------------------------------------------ the list
export async function showReplays() {
  view.route = { list: true };
  root.dataset.screen = "replays";
  clear(root).append(h("p", { class: "hint" }, "loading the finished games..."));
  const got = await getJSON("/replays.json");
  if (!view.route || !view.route.list) return;     // left meanwhile
  view.list = got;
  clear(root);
  const back = got.lobby === false ? null : h("p", {}, h("a", { href: "#", id: "to-lobby" }, "Back to the lobby"));
  if (got.error) {
    root.append(h("p", { class: "refusal", role: "alert" }, got.error), back);
    return;
  }
  const rows = got.replays.map((g) => h("tr", { dataset: { table: g.table } },
    h("td", {}, h("a", { href: `#replay=${encodeURIComponent(g.table)}`, "data-open": g.table }, g.table)),
    h("td", {}, gameFor(g.game).title),
    h("td", { class: "tplayers" }, g.players.map((p, i) => p || `seat ${i}`).join(", ")),
    h("td", {}, g.finished ? new Date(g.finished * 1000).toLocaleString() : "")));
  root.append(h("section", { id: "replays", "aria-label": "finished games" },
    h("h2", {}, "Finished games"),
    rows.length
      ? h("table", { class: "tables" }, h("thead", {}, h("tr", {}, ["table", "game", "players", "finished"].map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, rows))
      : h("p", { class: "hint" }, "No finished games yet."),
    got.omitted ? h("p", { class: "hint" }, `${got.omitted} older not listed`) : null,
    back));
}

// ------------------------------------------------------------------ one game
// One request at a time: keys pressed (or held) while an answer is on its way ask for
// nothing more until it comes; then the last route asked meanwhile is fetched. The server
// works one replay step at a time and lets one address have 4 in its line (docs/
// PROTOCOL.md, the replay viewer's 503), and only the latest answer is shown anyway.
let fetching = false;
let queued = null;

export async function showReplay(route) {
  view.route = route;
  root.dataset.screen = "replay";
  if (fetching) {
    queued = route;
    return;
  }
  fetching = true;
  try {
    await fetchAndShow(route);
  } finally {
    fetching = false;
  }
  const next = queued;
  queued = null;
  if (next && view.route === next) showReplay(next);
}

async function fetchAndShow(route) {
  const params = new URLSearchParams({ view: route.view });
  if (route.seq !== null) params.set("seq", route.seq);
  else params.set("step", route.step || 0);
  if (view.only) params.set("only", view.only);
  if (route.find) {
    params.set("find", route.find);
    if (route.back) params.set("back", "1");
  }
  const ticket = ++view.loading;
  const got = await getJSON(`/replay/${encodeURIComponent(route.table)}.json?${params}`);
  if (ticket !== view.loading) return;                               // left
  // asked for again meanwhile (a key held): still shown if of the same game, so the
  // record moves while the next answer is on its way; an error is left to that answer
  const superseded = view.route !== route;
  if (superseded && (got.error || !view.route || view.route.table !== route.table)) return;
  if (got.error) {
    view.error = got.error;
    if (!view.at || view.at.table !== route.table) {
      clear(root).append(h("p", { class: "refusal", role: "alert", id: "replay-error" }, got.error),
        h("p", {}, h("a", { href: "#replays" }, "Finished games")));
      return;
    }
  } else {
    view.error = null;
    view.note = got.found === false
      ? `"${route.find}" is not found ${route.back ? "before" : "after"} this record${view.only ? " among those the filter shows" : ""}` : null;
    view.at = got;
    if (!superseded) view.want = null;
    // the address names this record and view (not the seq asked for): a reload shows it again
    const here = hashFor({ table: got.table, step: got.step, view: String(got.view_as) });
    if (location.hash !== here) history.replaceState(null, "", here);
  }
  draw();
}

// / and ?: search the records' lines from the record shown; n and N again (docs/PLAYING.md)
function search(back) {
  const at = view.at;
  if (!at || !view.query) return;
  showReplay({ table: at.table, step: at.step, seq: null, view: String(at.view_as), find: view.query, back });
}

function setFilter(only) {
  view.only = only;
  const at = view.at;
  if (at) showReplay({ table: at.table, step: at.step, seq: null, view: String(at.view_as) });
}

// the records the arrows step to: the filter's neighbours when one is set
const nextStep = (at) => (at.only ? at.only.next : at.step + 1);
const prevStep = (at) => (at.only ? at.only.prev : at.step - 1);

function go(step, viewAs) {
  const at = view.at;
  if (!at) return;
  const next = { table: at.table, step: Math.max(0, Math.min(at.steps - 1, step)), seq: null, view: viewAs ?? String(at.view_as) };
  view.want = next.step;
  showReplay(next);
}

// the step keys move from: the one asked for last, else the one shown
const here = () => (view.want !== null ? view.want : view.at.step);

function names(at) {
  // the seats someone claimed: another is "seat N"
  return at.players.map((name, seat) => ({ seat, name, connected: true })).filter((p) => p.name);
}

function ctxFor(at, seat, v) {
  return {
    view: v || {}, seat, players: names(at), ui: {}, replay: true,
    connected: () => true, act() {}, refuse() {}, redraw() {},
  };
}

// a game module's drawing of one view, its buttons inert (a fieldset that is disabled)
function board(g, ctx) {
  const parts = g.render(ctx);
  return { board: h("fieldset", { class: "replay-board", disabled: true }, onFelt(parts.board, ctx.seat, ctx.view || {})),
    hand: parts.hand ? h("fieldset", { class: "replay-board", disabled: true }, parts.hand) : null };
}

function hashLine(at) {
  const x = at.hashes;
  if (!x.checked) return h("span", { id: "replay-hashes", dataset: { state: "none" } }, "no state hashes in this log");
  if (!x.mismatched) return h("span", { id: "replay-hashes", dataset: { state: "ok" } }, `state hashes: ${x.checked} checked, all ok`);
  return h("span", { id: "replay-hashes", class: "refusal", dataset: { state: "mismatch" } },
    `state hashes: ${x.checked} checked, ${x.mismatched} differ (the first at record ${x.first_mismatch}): `,
    "the rules changed since this game, or the log was edited ", button("show", () => go(x.first_mismatch), { class: "small", id: "replay-first-mismatch" }));
}

function recordBox(at, g, ctx) {
  const r = at.record;
  const lines = r.detail.slice(1).map((t) => h("li", {}, t));
  let head = h("p", { class: "line" }, r.line);
  if (r.kind === "rejected") {
    const who = seatName(ctx, r.seat);
    head = h("p", { class: "refusal", id: "replay-refusal", dataset: { code: r.code } },
      h("strong", {}, `refused: ${who}`), r.hidden
        ? ` - ${r.code} (what this seat's player tried, and why it was refused, are not shown to this view)`
        : [` tried ${r.what} - ${r.code}: `, r.reason, h("br"), h("span", { class: "hint" }, `as sent: ${r.action}`)]);
  }
  return h("section", { id: "replay-record", "aria-label": "this record", dataset: { kind: r.kind, hash: r.hash || "" } },
    head,
    r.hash ? h("p", { class: r.hash === "ok" ? "hint" : "refusal", id: "replay-hash" }, r.hash === "ok"
      ? "state hash: ok (the replayed state is the one the server logged)"
      : `state hash: MISMATCH - ${r.problem}`) : null,
    r.problem && !r.hash ? h("p", { class: "refusal" }, `problem: ${r.problem}`) : null,
    lines.length ? h("ul", { class: "detail" }, lines) : null);
}

function recordList(at) {
  return h("ol", { id: "replay-records", class: "records", "aria-label": "records around this one" },
    at.around.map((x) => h("li", { class: [x.kind === "rejected" ? "rejected" : "", x.step === at.step ? "current" : "", x.problem ? "problem" : ""].join(" ").trim(),
      dataset: { step: x.step, kind: x.kind, hash: x.hash || "" }, "aria-current": x.step === at.step ? "step" : false },
    button(`${x.step}`, () => go(x.step), { class: "small", "data-key": `rec-${x.step}`, "aria-label": `record ${x.step}` }), " ", x.line,
    x.hash ? h("span", { class: x.hash === "ok" ? "marks" : "refusal" }, x.hash === "ok" ? " ok" : " MISMATCH") : null)));
}

function controls(at) {
  const seq = h("input", { id: "replay-seq", type: "number", min: 0, max: at.last_seq, value: at.seq, "data-key": "replay-seq", "aria-label": "seq to jump to" });
  const jump = h("form", {
    id: "replay-jump", class: "inline", onsubmit: (e) => {
      e.preventDefault();
      if (/^\d{1,9}$/.test(seq.value)) showReplay({ table: at.table, step: null, seq: Number(seq.value), view: String(at.view_as) });
    },
  }, h("label", { for: "replay-seq" }, "seq "), seq, " ", h("button", { type: "submit", class: "small", "data-key": "replay-go" }, "Go"));
  const sel = h("select", { id: "replay-view", "data-key": "replay-view", "aria-label": "whose view",
    onchange: (e) => go(at.step, e.target.value) },
  h("option", { value: "all" }, "all-seeing"), h("option", { value: "spectator" }, "spectator"),
  at.players.map((p, s) => h("option", { value: String(s) }, `seat ${s}${p ? ` (${p})` : ""}`)));
  sel.value = String(at.view_as);
  const last = at.steps - 1;
  const b = (label, to, key, extra = {}) => button(label, () => go(to), { class: "small", id: key, "data-key": key, disabled: to === null || to === at.step || to < 0 || to > last, ...extra });
  return h("div", { class: "actions replay-controls", role: "toolbar", "aria-label": "replay controls" },
    b("|<", 0, "replay-first", { "aria-label": "first record" }),
    b("-10", Math.max(0, at.step - 10), "replay-back10", { "aria-label": "-10: ten records back" }),
    b("< Back", prevStep(at), "replay-prev"),
    b("Next >", nextStep(at), "replay-next"),
    b("+10", Math.min(last, at.step + 10), "replay-fwd10", { "aria-label": "+10: ten records on" }),
    b(">|", last, "replay-last", { "aria-label": "last record" }),
    b("< refused", at.prev_rejected, "replay-prev-rejected", { "aria-label": "previous refused intent" }),
    b("refused >", at.next_rejected, "replay-next-rejected", { "aria-label": "next refused intent" }),
    jump, h("label", {}, "view ", sel), findForm(), onlyForm(at));
}

function findForm() {
  const box = h("input", { id: "replay-find", type: "search", maxlength: 100, value: view.query, "data-key": "replay-find", "aria-label": "search the records" });
  const ask = (back) => {
    view.query = box.value.trim();
    view.queryBack = back;
    search(back);
  };
  return h("form", { id: "replay-search", class: "inline", onsubmit: (e) => { e.preventDefault(); ask(false); } },
    h("label", { for: "replay-find" }, "find "), box, " ",
    button("<", () => ask(true), { class: "small", id: "replay-find-back", "aria-label": "find before" }),
    button(">", () => ask(false), { class: "small", id: "replay-find-next", "aria-label": "find after" }));
}

function onlyForm(at) {
  const sel = h("select", { id: "replay-only", "data-key": "replay-only", "aria-label": "which records",
    onchange: (e) => setFilter(e.target.value) },
  h("option", { value: "" }, "every record"), h("option", { value: "refused" }, "refused only"),
  at.players.map((p, s) => h("option", { value: `seat:${s}` }, `seat ${s}${p ? ` (${p})` : ""} only`)),
  h("option", { value: "kind:chance" }, "shuffles and draws by lot"));
  const kind = h("input", { id: "replay-kind", size: 8, "data-key": "replay-kind", "aria-label": "action kind", placeholder: "kind" });
  if (view.only.startsWith("kind:") && view.only !== "kind:chance") {
    sel.append(h("option", { value: view.only }, view.only.slice(5) + " only"));
    kind.value = view.only.slice(5);
  }
  sel.value = view.only;
  return h("form", { id: "replay-filter", class: "inline", onsubmit: (e) => { e.preventDefault(); setFilter(kind.value.trim() ? `kind:${kind.value.trim()}` : ""); } },
    h("label", {}, "show ", sel), " ", kind,
    at.only ? h("span", { id: "replay-only-count" }, ` ${at.only.count} shown`) : null);
}

function draw() {
  const at = view.at;
  if (!at) return;
  const g = gameFor(at.game);
  const viewAs = at.view_as;
  const seat = typeof viewAs === "number" ? viewAs : null;
  keepFocus(root, () => {
    clear(root);
    root.dataset.screen = "replay";
    const st = at.state;
    const main = st.view ? board(g, ctxFor(at, seat, st.view)) : board(g, ctxFor(at, null, st.board));
    const hands = [];
    if (st.view && main.hand) hands.push(h("section", { "aria-label": "hand" }, h("h3", {}, `${seatName(ctxFor(at, null), seat)}'s hand`), main.hand));
    if (st.hands) {
      st.hands.forEach((v, s) => {
        const part = board(g, ctxFor(at, s, v)).hand;
        if (part) hands.push(h("section", { "aria-label": `hand of seat ${s}`, dataset: { seat: s } }, h("h3", {}, `${seatName(ctxFor(at, null), s)}'s hand`), part));
      });
    }
    // the all-seeing view: every pile's cards in order, as the terminal viewer shows them
    // (the seats' views drawn above show a pile's count only)
    const piles = st.piles && st.piles.length ? h("section", { id: "replay-piles", "aria-label": "piles" },
      h("h3", {}, "Piles, top first"), h("pre", { class: "raw" }, st.piles.join("\n"))) : null;
    const who = viewAs === "all" ? "all-seeing" : viewAs === "spectator" ? "spectator" : `seat ${seat}${at.players[seat] ? ` (${at.players[seat]})` : ""}`;
    root.append(h("section", {
      id: "replay", "aria-label": "replay", dataset: { table: at.table, step: at.step, seq: at.seq, view: String(viewAs), kind: at.record.kind },
    },
    h("div", { class: "tablehead" },
      h("h2", {}, `Replay: ${at.title} - table ${at.table}`),
      h("p", { id: "replay-pos" }, `record ${at.step} of ${at.steps - 1} - seq ${at.seq} of ${at.last_seq} - view: ${who}`),
      h("p", {}, hashLine(at)),
      at.torn ? h("p", { class: "hint" }, `the log's last ${at.torn.dropped} bytes are a record cut mid-write: left out`) : null,
      // a damaged log (replay --web of the player's own file): its records up to the damage
      at.damage ? h("p", { class: "refusal", id: "replay-damage" }, `DAMAGED: the log ends early, after seq ${at.last_seq}: ${at.damage.message} [${at.damage.code}]; the records before it are all shown (wildtable replay LOG --salvage OUT keeps them)`) : null,
      h("p", {}, h("a", { href: "#replays" }, "Finished games"), at.lobby ? [" - ", h("a", { href: "#", id: "to-lobby" }, "Back to the lobby")] : null)),
    controls(at),
    view.error ? h("p", { class: "refusal", role: "alert" }, view.error) : null,
    view.note ? h("p", { class: "hint", id: "replay-note" }, view.note) : null,
    recordBox(at, g, ctxFor(at, null)),
    h("p", { id: "replay-status" }, g.status(ctxFor(at, seat, st.view || st.board))),
    h("div", { class: "board" }, main.board),
    hands,
    piles,
    recordList(at),
    h("details", {}, h("summary", {}, "the state as text (as wildtable replay shows it)"),
      h("pre", { class: "raw", id: "replay-text" }, at.text.join("\n")))));
  });
}

// Left/Right step, PageUp/PageDown ten, Home/End, r the next refused intent, a/s/0-9 the view
export function replayKey(ev) {
  const at = view.at;
  if (!at || root.dataset.screen !== "replay" || ev.ctrlKey || ev.metaKey || ev.altKey) return false;
  const t = ev.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return false;
  const k = ev.key;
  // with a filter, the arrows step through the records it shows
  if (k === "ArrowRight" && at.only) {
    if (at.only.next !== null) go(at.only.next);
  } else if (k === "ArrowLeft" && at.only) {
    if (at.only.prev !== null) go(at.only.prev);
  } else if (k === "ArrowRight") go(here() + 1);
  else if (k === "ArrowLeft") go(here() - 1);
  else if (k === "/") document.getElementById("replay-find")?.focus();
  else if (k === "n") search(view.queryBack);
  else if (k === "N") search(!view.queryBack);
  else if (k === "PageDown") go(here() + 10);
  else if (k === "PageUp") go(here() - 10);
  else if (k === "Home") go(0);
  else if (k === "End") go(at.steps - 1);
  else if (k === "r" && at.next_rejected !== null) go(at.next_rejected);
  else if (k === "a") go(here(), "all");
  else if (k === "s") go(here(), "spectator");
  else if (/^[0-9]$/.test(k) && Number(k) < at.seats) go(here(), k);
  else return false;
  return true;
}

export function leaveReplay() {
  view.route = null;
  view.loading++;
}
