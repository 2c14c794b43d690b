// Wild Shots (docs/RULES.md "Wild Shots"): tricks, on your turn; click a card to play it.

import { button, h } from "../dom.js";
import { byName, offlineMark, phaseWords, seatList, seatName, verb } from "./names.js";
import { wildShotsFace, wildShotsIcon, prepareFaces } from "../faces.js";

const SUITS = ["black", "red", "green", "blue"];
const LETTERS = "KRGB";
const SUIT_NAMES = ["black K", "red R", "green G", "blue B"];

const suitOf = (c) => Math.floor(c / 10);
const valueOf = (c) => (c % 10) + 1;
const label = (c) => LETTERS[suitOf(c)] + valueOf(c);

function symbolOf(view, c) {
  return view.symbols ? view.symbols[c] : null;
}

function cardLabel(view, c) {
  const s = symbolOf(view, c);
  return s ? `${label(c)} ${s}` : label(c);
}

// the card's face (faces.js): its suit's shape and letter, value and symbol, drawn
function face(view, c) {
  return wildShotsFace(c, symbolOf(view, c));
}

// a card's accessible name: what it is, then what its face reads ("5 R5 revolver",
// faces.js), word for word in that order (WCAG 2.5.3)
const cardName = (view, c) => `${SUITS[suitOf(c)]} ${valueOf(c)}, ${cardLabel(view, c)}`;

function cardClass(view, c) {
  return `card ws-${SUITS[suitOf(c)]}` + (symbolOf(view, c) && symbolOf(view, c) === view.trump ? " trump" : "");
}

function render(ctx) {
  prepareFaces("wild-shots", ctx.view.symbols);
  const { view } = ctx;
  const hand = (view.hand || []).slice().sort((a, b) => a - b);
  const playable = new Set(view.playable || []);
  const players = h("ul", { class: "players" }, (view.players || []).map((p) => {
    const marks = [];
    if (p.seat === view.turn) marks.push("to play");
    if (p.seat === view.leader) marks.push("leads");
    if ((view.winners || []).includes(p.seat)) marks.push("winner");
    return h("li", { dataset: { seat: p.seat } }, h("strong", { class: "pname" }, seatName(ctx, p.seat)),
      ` ${p.hand} cards, ${p.tricks} tricks, penalties ${p.total}`,
      marks.length ? h("span", { class: "marks" }, ` ${marks.join(", ")}`) : "",
      offlineMark(ctx, p.seat, h));
  }));
  const hits = Object.entries(view.hits || {}).map(([k, v]) => `${k} ${v}`).join(", ");
  const last = view.last_trick;
  const board = [
    players,
    h("div", { class: "drop-zone", "data-drop": "trick" },
    h("p", {}, `hits this round: ${hits || "-"}; trump: ${view.trump || "-"}; led suit: ${view.led_suit || "-"}`),
    h("h3", {}, `Trick ${view.trick_number || "-"}`),
    (view.trick || []).length
      ? h("ul", { class: "trick" }, view.trick.map((t) => h("li", {},
        h("span", { class: cardClass(view, t.card), "data-card": t.card, "data-from": t.seat, role: "img", "aria-label": cardName(view, t.card) },
          face(view, t.card)), h("span", { class: "who" }, `${seatName(ctx, t.seat)}: ${cardLabel(view, t.card)}`))))
      : h("p", { class: "hint" }, "no card played in this trick yet")),
    last ? h("p", { class: "hint" }, `last trick: ${seatName(ctx, last.winner)} won (${last.cards.map((x) => cardLabel(view, x.card)).join(", ")})`) : null,
  ];
  if (ctx.seat === null) return { board, hand: null, actions: [] };
  const myTurn = view.turn === ctx.seat && view.phase === "playing";
  const handNode = h("div", { class: "hand", role: "group", "aria-label": "your hand: click a card to play it, or drag it onto the trick" },
    hand.map((c) => button(face(view, c), () => ctx.act({ kind: "play", card: c }, `play ${cardLabel(view, c)}`), {
      class: cardClass(view, c) + (myTurn && !playable.has(c) ? " dim" : ""),
      "data-card": c, "data-key": `h${c}`, "data-drag": "hand", "data-playable": myTurn && playable.has(c) ? "true" : "false",
      "aria-label": cardName(view, c),
    })));
  const symbols = [...new Set(hand.map((c) => symbolOf(view, c)).filter(Boolean))].sort();
  // the legend: each suit's shape and each symbol on the hand, drawn as on the faces
  const list = (items, words) => items.map((x, i) => [i ? ", " : "", wildShotsIcon(x), words(x, i)]);
  const legend = h("p", { class: "legend hint" }, "Suits: ", list(SUITS, (_, i) => SUIT_NAMES[i]), ". ",
    symbols.length ? ["Symbols on your cards: ", list(symbols, (x) => x), ". "] : "",
    view.trump ? `Cards with the trump symbol (${view.trump}) are underlined and ringed.` : "No trump symbol yet.");
  return { board, hand: h("div", {}, handNode, legend), actions: [] };
}

function status(ctx) {
  const v = ctx.view;
  if (v.phase === "over") return `game over: ${seatList(ctx, v.winners)} won`;
  if (v.phase !== "playing") return phaseWords(v.phase);
  return `round ${v.round} of ${v.rounds}, trick ${v.trick_number}`;
}

function describe(ev, ctx) {
  const who = seatName(ctx, ev.seat);
  switch (ev.event) {
    case "starter_chosen": return `${who} ${verb(ctx, ev.seat, "start", "starts")}`;
    case "snake_oil_revealed": return `trick ${ev.trick}: ${ev.symbol} is trump`;
    case "card_played": return `${who} played ${label(ev.card)}${ev.symbol ? ` ${ev.symbol}` : ""}`;
    case "trick_won": return `${who} won trick ${ev.trick} with ${label(ev.card)}`;
    case "round_scored": return `round ${ev.round} scored: penalties ${byName(ctx, ev.penalties)}`;
    case "game_over": return `game over: ${seatList(ctx, ev.winners)} won`;
    case "snake_oil_shuffled": return null;
    default: return ev.event.replaceAll("_", " ");
  }
}

// a hand card dragged onto the trick: played (drag.js)
function drop(ctx, from, to) {
  if (from.drag !== "hand" || to.drop !== "trick") return;
  const c = Number(from.card);
  ctx.act({ kind: "play", card: c }, `play ${cardLabel(ctx.view, c)}`);
}

export default {
  name: "wild-shots",
  drop,
  title: "Wild Shots",
  render,
  status,
  describe,
};
