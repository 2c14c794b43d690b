// Go Fish Wildcard (docs/RULES.md "Go Fish Wildcard"): on your turn pick a player, then
// click a rank you hold to ask them for it; select 3 cards to place a set; End turn.
// Or drag (drag.js): a hand card onto a player asks them for its rank; onto "place a set",
// it is placed with the cards selected. Each player's sets lie face up at their seat.

import { button, h } from "../dom.js";
import { offlineMark, phaseWords, seatList, seatName, verb } from "./names.js";
import { goFishFace, prepareFaces } from "../faces.js";

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const SUITS = ["C", "D", "H", "S"];
const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
// what the player to act is to do (the view's step)
const STEPS = { ask: "to ask", again: "to ask again or end the turn", bonus: "to place a set or end the turn" };
const rank = (c) => RANKS[Math.floor(c / 4)];
const label = (c) => rank(c) + SUITS[c % 4];
const cardName = (c, wild) => `${rank(c)} of ${SUIT_NAMES[c % 4]}${wild ? ", wild" : ""}`;

// a set at its owner's seat: three small faces, read as one line
function setCards(set) {
  return h("span", { class: "cards gf-set", role: "img", "aria-label": `set of ${set.cards.map((c) => cardName(c, false)).join(", ")}` },
    set.cards.map((c) => h("span", { class: `card gf-${SUIT_NAMES[c % 4]}`, "data-card": c, "aria-hidden": "true" }, goFishFace(c))));
}

function render(ctx) {
  prepareFaces("go-fish-wildcard");
  const { view, ui } = ctx;
  const hand = (view.hand || []).slice().sort((a, b) => a - b);
  ui.selected = new Set([...(ui.selected || [])].filter((c) => hand.includes(c)));
  const sel = ui.selected;
  const wild = new Set(view.wild_ranks || []);
  const others = (view.players || []).map((p) => p.seat).filter((s) => s !== ctx.seat);
  if (!others.includes(ui.target)) {
    // the next seat clockwise is asked unless the player picks another
    const next = others.findIndex((s) => s > ctx.seat);
    ui.target = others.length ? others[next < 0 ? 0 : next] : null;
  }
  const players = h("ul", { class: "players" }, (view.players || []).map((p) => {
    const marks = [];
    if (p.seat === view.turn) marks.push(STEPS[view.step] || "to act");
    if ((view.winners || []).includes(p.seat)) marks.push("winner");
    const sets = p.sets || [];
    const asked = ctx.seat !== null && p.seat !== ctx.seat;
    return h("li", { dataset: asked ? { seat: p.seat, drop: "seat" } : { seat: p.seat } }, h("strong", { class: "pname" }, seatName(ctx, p.seat)),
      ` ${p.hand} cards, ${p.score} sets`,
      marks.length ? h("span", { class: "marks" }, ` ${marks.join(", ")}`) : "",
      offlineMark(ctx, p.seat, h),
      sets.length ? h("span", { class: "gf-sets" }, sets.map(setCards)) : null);
  }));
  const asks = (view.asks || []).slice(-4).reverse().map((a) => h("li", {},
    `${seatName(ctx, a.seat)} asked ${seatName(ctx, a.target)} for ${a.rank}s: ${a.handed ? `got ${a.handed}` : "go fish"}`));
  const board = [
    players,
    h("p", {}, `pile ${view.pile ?? 0}; wild ranks: ${[...wild].join(" ") || "none"}`),
    asks.length ? h("ul", { class: "asks" }, asks) : null,
    ctx.seat !== null ? h("div", { class: "drop-zone", "data-drop": "place" },
      "place a set: drop a card here to place it with the cards selected; drop a card on a player to ask them for its rank") : null,
  ];
  if (ctx.seat === null) return { board, hand: null, actions: [] };
  const handNode = h("div", { class: "hand", role: "group", "aria-label": "your hand" }, hand.map((c) => button(
    goFishFace(c),
    () => { if (sel.has(c)) sel.delete(c); else sel.add(c); ctx.redraw(); },
    { class: `card gf-${SUIT_NAMES[c % 4]}` + (sel.has(c) ? " selected" : "") + (wild.has(rank(c)) ? " wild" : ""),
      "data-card": c, "data-key": `h${c}`, "data-drag": "hand", "aria-pressed": sel.has(c) ? "true" : "false",
      "aria-label": `${label(c)}: ${cardName(c, wild.has(rank(c)))}` })));
  const myTurn = view.turn === ctx.seat;
  const canAsk = myTurn && (view.step === "ask" || view.step === "again");
  const held = RANKS.filter((r) => hand.some((c) => rank(c) === r));
  const actions = [
    h("span", { class: "targets", role: "group", "aria-label": "ask whom" }, "ask ", others.map((s) => button(seatName(ctx, s),
      () => { ui.target = s; ctx.redraw(); },
      { class: "small" + (ui.target === s ? " selected" : ""), "aria-pressed": ui.target === s ? "true" : "false", "data-target": s, "data-key": `t${s}` }))),
    h("span", { class: "ranks", role: "group", "aria-label": "for which rank" }, " for ", held.map((r) => button(`${r}s`,
      () => ctx.act({ kind: "ask", target: ui.target, rank: r }, `ask ${seatName(ctx, ui.target)} for ${r}s`),
      { class: "small", "data-rank": r, "data-action": "ask", "data-key": `r${r}`, disabled: !canAsk || ui.target === null }))),
    button(`Place set (${sel.size})`, () => place(ctx, [...sel]), { "data-action": "place", "data-key": "place", disabled: !myTurn }),
    button("End turn", () => ctx.act({ kind: "end_turn" }, "end turn"),
      { "data-action": "end_turn", "data-key": "end", disabled: !myTurn || view.step === "ask" }),
  ];
  return { board, hand: handNode, actions };
}

function place(ctx, cards) {
  if (cards.length !== 3) {
    ctx.refuse("place", "select exactly 3 cards of your hand");
    return;
  }
  ctx.act({ kind: "place", cards }, `place ${cards.map(label).join(" ")}`);
}

// a hand card dropped (drag.js): onto a player, ask them for its rank; onto "place a set",
// place it with the cards selected
function drop(ctx, from, to) {
  const c = Number(from.card);
  if (from.drag !== "hand" || !(ctx.view.hand || []).includes(c)) return;
  if (to.drop === "seat") {
    const target = Number(to.seat);
    ctx.ui.target = target;
    ctx.act({ kind: "ask", target, rank: rank(c) }, `ask ${seatName(ctx, target)} for ${rank(c)}s`);
  } else if (to.drop === "place") place(ctx, [...new Set([...ctx.ui.selected, c])]);
}

function status(ctx) {
  const v = ctx.view;
  if (v.phase === "over") return `game over: ${seatList(ctx, v.winners)} won`;
  if (v.phase === "last_asks") return "last asks";
  return v.phase === "play" ? `pile ${v.pile}` : phaseWords(v.phase);
}

function describe(ev, ctx) {
  const who = seatName(ctx, ev.seat);
  switch (ev.event) {
    case "dealer_chosen": return `${who} ${verb(ctx, ev.seat, "deal", "deals")}`;
    case "asked": return `${who} asked ${seatName(ctx, ev.target)} for ${ev.rank}s: ${ev.handed ? `handed ${ev.handed}` : "go fish!"}`;
    case "cards_drawn": return `${who} drew ${ev.count}`;
    case "set_placed": return `${who} placed ${ev.cards.map(label).join("-")}${ev.forced ? " (forced)" : ""}`;
    case "extra_ask_earned": return `${who} earned another ask`;
    case "turn_started": return `${who} to act${ev.last_ask ? " (last ask)" : ""}`;
    case "last_asks_began": return "last asks!";
    case "game_over": return `game over: ${seatList(ctx, ev.winners)} won`;
    case "turn_ended": return null;
    default: return ev.event.replaceAll("_", " ");
  }
}

export default {
  name: "go-fish-wildcard",
  title: "Go Fish Wildcard",
  render,
  status,
  describe,
  drop,
};
