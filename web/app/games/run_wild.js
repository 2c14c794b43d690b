// Run Wild (docs/RULES.md "Run Wild"): no turns, everyone plays at once.
// Hand: click cards to select them. Melds: with one hand card selected, click a meld's
// "add" button to add it, or one of its cards to swap it in; with nothing selected, click a
// meld's card to take it. Keys: r ready, m meld, d draw, 3 Draw-3, s stuck, Esc clear.
// Or drag (drag.js): a hand card onto a meld adds it, onto a meld's card swaps it in, onto
// "new meld" melds it with the cards selected; a Draw-3 anywhere on the table plays it; a
// meld's card onto the hand takes it.

import { attr, button, forget, h, kept, keyed, put, text } from "../dom.js";
import { byName, seatList, seatName, verb } from "./names.js";
import { prepareFaces, runWildFace } from "../faces.js";

const COLOURS = ["blue", "green", "yellow", "red", "purple"];
const LETTERS = "BGYRP";
const FIRST_WILD = 60;
const FIRST_DRAW3 = 69;

const isWild = (c) => c >= FIRST_WILD && c < FIRST_DRAW3;
const isDraw3 = (c) => c >= FIRST_DRAW3;
const number = (c) => (c % 12) + 1;
const colour = (c) => Math.floor(c / 12);

export function label(c) {
  if (isDraw3(c)) return "D3";
  if (isWild(c)) return "W";
  return LETTERS[colour(c)] + number(c);
}

function sortKey(c) {
  return c < FIRST_WILD ? colour(c) * 100 + number(c) : c + 1000;
}

function cardClass(c) {
  if (isDraw3(c)) return "card rw-draw3";
  if (isWild(c)) return "card rw-wild";
  return `card rw-${COLOURS[colour(c)]}`;
}

// A card's accessible name: what it is, then what its face reads (faces.js: "7 B7",
// "5 W=5", "W", "+3 D3"), word for word in that order (WCAG 2.5.3).
function cardName(c, value) {
  if (isDraw3(c)) return "Draw-3, +3 D3";
  if (isWild(c)) return value ? `wild as ${value}, W=${value}` : "wild, W";
  return `${COLOURS[colour(c)]} ${number(c)}, ${label(c)}`;
}

const cardsText = (cards, values) => cards.map((c, i) => (isWild(c) && values && values[i] ? `W=${values[i]}` : label(c))).join(" ");

// Values parallel to a new meld's cards ([] without wilds), as the terminal client infers
// them (headless/games/run_wild.py infer_values): a set's number; in a run, gaps first, then
// upwards, then downwards. ``fixed``: the number every wild stands for, if the player chose one.
export function inferValues(cards, fixed) {
  if (!cards.some(isWild)) return [];
  if (fixed) return cards.map((c) => (isWild(c) ? fixed : number(c)));
  const nums = cards.filter((c) => c < FIRST_WILD).map(number);
  if (!nums.length) return null;
  const unset = cards.filter(isWild).length;
  let guess = [];
  if (new Set(nums).size === 1) {
    guess = Array(unset).fill(nums[0]);
  } else if (new Set(cards.filter((c) => c < FIRST_WILD).map(colour)).size <= 1) {
    const taken = new Set(nums);
    const lo = Math.min(...nums);
    const hi = Math.max(...nums);
    const spots = [];
    for (let v = lo; v <= hi; v++) if (!taken.has(v)) spots.push(v);
    for (let v = hi + 1; v <= 12; v++) spots.push(v);
    for (let v = lo - 1; v >= 1; v--) spots.push(v);
    guess = spots.slice(0, unset);
  }
  while (guess.length < unset) guess.push(nums[0]);
  let i = 0;
  return cards.map((c) => (c < FIRST_WILD ? number(c) : guess[i++]));
}

function wildValueFor(meld) {
  const vals = meld.values;
  if (meld.kind === "set") return vals[0];
  return vals[vals.length - 1] < 12 ? vals[vals.length - 1] + 1 : vals[0] - 1;
}

const PHASES = {
  dealing: "waiting for players / dealing",
  ready: "cards dealt: press Ready to start",
  playing: "playing",
  scored: "round over",
  over: "game over",
};

function me(ctx) {
  return (ctx.view.players || []).find((p) => p.seat === ctx.seat) || null;
}

// The elements of a table's drawing, kept from one update to the next by its ctx (main.js
// keeps one ctx per table it sits at; the replay viewer makes one per drawing, so it draws
// afresh): an update remakes only the players, melds and cards that changed. A handler
// reads the selection and the view when clicked; what it captures is in its element's
// signature, so a changed card or meld gets a new element and handler.
const drawings = new WeakMap();

function drawing(ctx) {
  let d = drawings.get(ctx);
  if (!d) {
    prepareFaces("run-wild");
    d = {
      players: h("ul", { class: "players" }), playerItems: new Map(),
      meldsHead: h("h3", {}, "Melds"),
      melds: h("ul", { class: "melds" }), meldItems: new Map(),
      noMelds: h("p", { class: "hint" }, "no melds on the table"),
      newMeld: h("div", { class: "drop-zone new-meld", "data-drop": "new-meld" }, "new meld: drop a card here to meld it with the cards selected"),
      kept: new Map(),
      hand: h("div", { class: "hand", role: "group", "aria-label": "your hand", "data-drop": "hand" }), handItems: new Map(),
      noCards: h("span", { class: "hint" }, "no cards in hand"),
      actions: actionButtons(ctx),
    };
    drawings.set(ctx, d);
  }
  return d;
}

function render(ctx) {
  const { view, ui } = ctx;
  const d = drawing(ctx);
  const hand = sortedHand(view);
  ui.selected = new Set([...(ui.selected || [])].filter((c) => hand.includes(c)));
  const sel = ui.selected;
  const playing = view.phase === "playing";
  const mine = me(ctx);
  const canPlay = playing && ctx.seat !== null;

  put(d.players, (view.players || []).map((p) => playerItem(ctx, d, p)));

  const meldNodes = (view.melds || []).map((m) => meldItem(ctx, d, m, sel, canPlay));
  forget(d.meldItems, (view.melds || []).map((m) => m.id));
  if (meldNodes.length) put(d.melds, meldNodes);

  const board = [
    d.players,
    d.meldsHead,
    meldNodes.length ? d.melds : d.noMelds,
    canPlay ? d.newMeld : null,
    kept(d.kept, "results", JSON.stringify([view.round_scores, view.totals, view.phase, seatList(ctx, view.winners),
      (view.players || []).map((p) => seatName(ctx, p.seat))]), () => results(ctx)),
  ];
  if (ctx.seat === null) return { board, hand: null, actions: [] };

  const handNodes = keyed(d.handItems, hand, (c) => c, () => "", (c) => button(runWildFace(c), () => {
    const now = ctx.ui.selected;
    if (now.has(c)) now.delete(c);
    else now.add(c);
    ctx.redraw();
  }, { "data-card": c, "data-key": `h${c}`, "data-drag": "hand", "aria-label": cardName(c) }));
  handNodes.forEach((el, i) => {
    attr(el, "class", cardClass(hand[i]) + (sel.has(hand[i]) ? " selected" : ""));
    attr(el, "aria-pressed", sel.has(hand[i]) ? "true" : "false");
  });
  put(d.hand, handNodes.length ? handNodes : d.noCards);

  const a = d.actions;
  text(a.meld, `Meld (${sel.size})`);
  attr(a.meld, "disabled", !playing);
  text(a.draw, `Draw (${view.pile ?? 0} left)`);
  attr(a.draw, "disabled", !playing || !view.pile);
  attr(a.draw3, "disabled", !playing || !hand.some(isDraw3));
  attr(a.stuck, "disabled", !playing || (mine && mine.stuck));
  attr(a.clear, "disabled", sel.size === 0);
  const ready = view.phase === "ready" && mine && mine.in_round && !mine.ready;
  return { board, hand: d.hand, actions: [ready ? a.ready : null, a.meld, a.draw, a.draw3, a.stuck, a.clear, a.wild].filter(Boolean) };
}

// A player's line is kept for their seat and its words rewritten in place when they
// changed: every update changes someone's counts.
function playerItem(ctx, d, p) {
  let e = d.playerItems.get(p.seat);
  if (!e) {
    e = { name: h("strong", { class: "pname" }), counts: document.createTextNode(""),
      marks: h("span", { class: "marks" }), offline: h("span", { class: "offline" }, " (offline)") };
    e.li = h("li", { dataset: { seat: p.seat } });
    d.playerItems.set(p.seat, e);
  }
  const view = ctx.view;
  const marks = [];
  if (p.seat === view.dealer) marks.push("dealer");
  if (view.phase === "ready" && p.in_round) marks.push(p.ready ? "ready" : "not ready");
  if (p.stuck) marks.push("STUCK");
  if (!p.in_round) marks.push("sits out");
  if (view.out === p.seat) marks.push("OUT");
  const total = view.totals ? view.totals[p.seat] : 0;
  const counts = ` hand ${p.hand}, pile ${p.pile}, total ${total}${(p.draw3s || []).length ? `, Draw-3s ${p.draw3s.length}` : ""}`;
  const name = seatName(ctx, p.seat);
  const online = ctx.connected(p.seat);
  // a line whose words are all as drawn is left alone (most updates change one player's)
  const sig = `${name}\n${counts}\n${marks}\n${online}`;
  if (e.sig === sig) return e.li;
  e.sig = sig;
  text(e.name, name);
  if (e.counts.data !== counts) e.counts.data = counts;
  text(e.marks, ` ${marks.join(", ")}`);
  return put(e.li, e.name, e.counts, marks.length ? e.marks : null, online ? null : e.offline);
}

// A meld's element is kept for its id; its cards, each kept while its value stays, are
// put in the meld's order; "add" and a card's click find the meld in the view when clicked.
// A meld the update did not change (its cards and their values, and what its buttons say:
// whether one may play, take or swap) gives back its element as it is: a busy table has a
// dozen melds, and an update changes one at most.
function meldItem(ctx, d, m, sel, canPlay) {
  const id = m.id;
  let e = d.meldItems.get(id);
  const swapping = sel.size > 0;
  const sig = `${m.kind} ${m.cards} ${m.values} ${canPlay} ${swapping}`;
  if (e && e.sig === sig) return e.li;
  if (!e) {
    e = { name: h("span", { class: "meld-name" }), cards: h("span", { class: "cards" }), cardItems: new Map(),
      add: button(`add to m${id}`, () => addTo(ctx, id), { class: "add", "data-add": id, "data-key": `add-${id}` }) };
    e.li = h("li", { class: "meld", dataset: { meld: id, drop: "meld" } }, e.name, e.cards, e.add);
    d.meldItems.set(id, e);
  }
  text(e.name, `m${id} ${m.kind}`);
  const cards = m.cards.map((c, i) => ({ c, v: m.values[i] }));
  const nodes = keyed(e.cardItems, cards, (x) => x.c, (x) => String(x.v), (x) => button(runWildFace(x.c, isWild(x.c) ? x.v : null),
    () => takeOrSwap(ctx, id, x.c, x.v), { class: cardClass(x.c), "data-card": x.c, "data-key": `m${id}-${x.c}`,
      "data-drag": "meld", "data-drop": "meld-card", "data-of": id, "data-value": x.v }));
  nodes.forEach((el, i) => {
    const { c, v } = cards[i];
    attr(el, "disabled", !canPlay);
    attr(el, "aria-label", `${cardName(c, isWild(c) ? v : null)} in meld ${id}: ${swapping ? "swap your card for it" : "take it"}`);
  });
  put(e.cards, nodes);
  attr(e.add, "disabled", !canPlay);
  e.sig = sig;
  return e.li;
}

function takeOrSwap(ctx, id, c, v) {
  const sel = ctx.ui.selected;
  if (sel.size === 0) take(ctx, id, c);
  else if (sel.size === 1) swap(ctx, id, c, v, [...sel][0]);
  else ctx.refuse("take or swap", "select one card of your hand to swap it in, or none to take this card");
}

const take = (ctx, id, c) => ctx.act({ kind: "take", meld: id, card: c }, `take ${label(c)} from m${id}`);

function swap(ctx, id, c, v, give) {
  ctx.act({ kind: "swap", meld: id, take: c, give, value: isWild(give) ? (ctx.ui.wild || v) : null },
    `swap ${label(give)} for ${isWild(c) ? `W=${v}` : label(c)} in m${id}`);
}

function addTo(ctx, id, card) {
  const sel = ctx.ui.selected;
  if (card === undefined && sel.size !== 1) {
    ctx.refuse(`add to m${id}`, "select one card of your hand first");
    return;
  }
  const m = (ctx.view.melds || []).find((x) => x.id === id);
  if (!m) return;           // gone since it was drawn (the button goes with the next drawing)
  const c = card === undefined ? [...sel][0] : card;
  const v = isWild(c) ? (ctx.ui.wild || wildValueFor(m)) : null;
  ctx.act({ kind: "add", meld: id, card: c, value: v }, `add ${label(c)} to m${id}`);
}

// a card dropped (drag.js): the same intents as the buttons send
function drop(ctx, from, to) {
  const c = Number(from.card);
  if (from.drag === "meld") {
    if (to.drop === "hand") take(ctx, Number(from.of), c);
    return;
  }
  if (from.drag !== "hand" || !(ctx.view.hand || []).includes(c)) return;
  if (isDraw3(c)) {
    if (to.drop !== "hand") ctx.act({ kind: "draw3", card: c }, "Draw-3");
  } else if (to.drop === "new-meld") meld(ctx, [...new Set([...ctx.ui.selected, c])]);
  else if (to.drop === "meld") addTo(ctx, Number(to.meld), c);
  else if (to.drop === "meld-card") swap(ctx, Number(to.of), Number(to.card), Number(to.value) || null, c);
}

// The action buttons, made once per drawing: each render sets their labels and whether
// they are enabled.
function actionButtons(ctx) {
  return {
    ready: button("Ready", () => ctx.act({ kind: "ready" }, "ready"), { "data-action": "ready", "data-key": "ready", accesskey: "r" }),
    meld: button("Meld (0)", () => meld(ctx, [...ctx.ui.selected]), { "data-action": "meld", "data-key": "meld" }),
    draw: button("Draw", () => ctx.act({ kind: "draw" }, "draw"), { "data-action": "draw", "data-key": "draw" }),
    draw3: button("Draw-3", () => playDraw3(ctx), { "data-action": "draw3", "data-key": "draw3" }),
    stuck: button("Stuck", () => ctx.act({ kind: "stuck" }, "stuck"), { "data-action": "stuck", "data-key": "stuck" }),
    clear: button("Clear", () => { ctx.ui.selected.clear(); ctx.redraw(); }, { "data-action": "clear", "data-key": "clear" }),
    wild: wildPicker(ctx),
  };
}

function wildPicker(ctx) {
  const sel = h("select", {
    "data-key": "wild", "aria-label": "the number a wild stands for",
    onchange: (e) => { ctx.ui.wild = Number(e.target.value) || null; },
  }, h("option", { value: "" }, "wild: auto"),
  Array.from({ length: 12 }, (_, i) => h("option", { value: i + 1, selected: ctx.ui.wild === i + 1 }, `wild = ${i + 1}`)));
  return h("label", { class: "wildpick" }, sel);
}

function meld(ctx, cards) {
  const what = `meld ${cards.map(label).join(" ")}`;
  if (cards.length < 3) {
    ctx.refuse(what, "select at least 3 cards of your hand for a set or run");
    return;
  }
  const values = inferValues(cards, ctx.ui.wild);
  if (values === null) {
    ctx.refuse(what, "choose the number the wilds stand for (the wild menu)");
    return;
  }
  ctx.act({ kind: "meld", cards, values }, what);
}

// the hand in the order it is shown (with no Draw-3 selected, Draw-3 plays the first one in it)
function sortedHand(view) {
  return (view.hand || []).slice().sort((a, b) => sortKey(a) - sortKey(b));
}

function playDraw3(ctx) {
  const chosen = [...ctx.ui.selected].find(isDraw3);
  const c = chosen !== undefined ? chosen : sortedHand(ctx.view).find(isDraw3);
  ctx.act({ kind: "draw3", card: c }, "Draw-3");
}

function results(ctx) {
  const v = ctx.view;
  if (!(v.round_scores || []).length) return null;
  const seats = (v.players || []).map((p) => p.seat);
  return h("table", { class: "scores" },
    h("caption", {}, v.phase === "over" ? `Game over: ${seatList(ctx, v.winners)} won` : "Scores (lowest total wins)"),
    h("tr", {}, h("th", {}, "round"), seats.map((s) => h("th", {}, seatName(ctx, s)))),
    v.round_scores.map((row, i) => h("tr", {}, h("td", {}, i + 1), row.map((x) => h("td", {}, x === null ? "-" : x)))),
    h("tr", {}, h("th", {}, "total"), (v.totals || []).map((x) => h("td", {}, x))));
}

function status(ctx) {
  const v = ctx.view;
  if (!v.phase) return "";
  // past the last round, a tie-break round (docs/RULES.md), never "round 5 of 4"
  const extra = v.round - v.rounds;
  const round = !v.round ? "" : extra > 0
    ? `tie-break round${extra > 1 ? ` ${extra}` : ""} (after ${v.rounds} rounds)` : `round ${v.round} of ${v.rounds}`;
  const why = v.phase === "scored" && v.ended_by ? ` (${v.ended_by.replace("_", " ")})` : "";
  return `${round} - ${PHASES[v.phase] || v.phase}${why}`;
}

function keys(ev, ctx) {
  const click = (name) => {
    const b = document.querySelector(`[data-action="${name}"]`);
    if (b && !b.disabled) b.click();
    return true;
  };
  switch (ev.key) {
    case "r": return click("ready");
    case "m": return click("meld");
    case "d": return click("draw");
    case "3": return click("draw3");
    case "s": return click("stuck");
    case "Escape": ctx.ui.selected = new Set(); ctx.redraw(); return true;
    default: return false;
  }
}

function describe(ev, ctx) {
  const who = seatName(ctx, ev.seat);
  switch (ev.event) {
    case "dealer_chosen": return `${who} ${verb(ctx, ev.seat, "deal", "deals")} round ${ev.round}`;
    case "round_dealt": return `round ${ev.round} dealt by ${seatName(ctx, ev.dealer)}`;
    case "player_ready": return `${who} ${verb(ctx, ev.seat, "are", "is")} ready`;
    case "round_started": return `Go! round ${ev.round}`;
    case "meld_played": return `${who} played m${ev.meld} (${ev.kind}): ${cardsText(ev.cards, ev.values)}`;
    case "card_drawn": return `${who} drew a card`;
    case "card_added": return `${who} added ${isWild(ev.card) ? `W=${ev.value}` : label(ev.card)} to m${ev.meld}`;
    case "card_taken": return `${who} took ${label(ev.card)} from m${ev.meld}`;
    case "card_swapped": return `${who} swapped ${label(ev.gave)} for ${label(ev.took)} in m${ev.meld}`;
    case "draw3_played": return `${who} played a Draw-3`;
    case "stuck_declared": return `${who} ${verb(ctx, ev.seat, "are", "is")} stuck`;
    case "stuck_cleared": return `${who} ${verb(ctx, ev.seat, "are", "is")} no longer stuck`;
    case "player_out": return `${who} ${verb(ctx, ev.seat, "are", "is")} out!`;
    case "round_ended": return `round ${ev.round} over (${(ev.reason || "").replace("_", " ")}); totals ${byName(ctx, ev.totals)}`;
    case "tie_break": return `tie-break round for ${seatList(ctx, ev.seats)}`;
    case "game_ended": return `game over: ${seatList(ctx, ev.winners)} won`;
    default: return ev.event.replaceAll("_", " ");
  }
}

export default {
  name: "run-wild",
  title: "Run Wild",
  render,
  status,
  keys,
  describe,
  drop,
};
