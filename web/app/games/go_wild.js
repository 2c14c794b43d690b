// Go Wild! (docs/RULES.md "Go Wild!"): tricks, on your turn. Click cards of your hand to
// select them (or a colour's "all" button), then Play. Wilds alone are a slough.

import { button, h } from "../dom.js";
import { offlineMark, phaseWords, seatList, seatName, verb } from "./names.js";
import { goWildFace, prepareFaces } from "../faces.js";

const COLOURS = ["red", "yellow", "orange", "blue", "green", "wild"];
const LETTERS = "RYOBGW";
const colourOf = (c) => Math.min(Math.floor(c / 18), 5);

function group(cards) {
  const by = COLOURS.map(() => []);
  for (const c of cards) by[colourOf(c)].push(c);
  return by;
}

function playText(cards) {
  return group(cards).map((cs, i) => (cs.length ? `${cs.length} ${COLOURS[i]}` : "")).filter(Boolean).join(" + ");
}

// a play's name as its faces read: "2 red (R) + 1 wild (W)" (the letters the faces show)
function playName(cards) {
  return group(cards).map((cs, i) => (cs.length ? `${cs.length} ${COLOURS[i]} (${LETTERS[i]})` : "")).filter(Boolean).join(" + ");
}

// a card on the table (a trick's), not a button: it came from that seat
function face(c, seat) {
  const k = colourOf(c);
  return h("span", { class: `card gw-${COLOURS[k]}`, "data-card": c, "data-from": seat, "aria-hidden": "true" }, goWildFace(c));
}

function cardButton(c, ctx, sel) {
  const k = colourOf(c);
  return button(goWildFace(c), () => {
    if (sel.has(c)) sel.delete(c);
    else sel.add(c);
    ctx.redraw();
  }, {
    class: `card gw-${COLOURS[k]}` + (sel.has(c) ? " selected" : ""), "data-card": c, "data-key": `h${c}`, "data-drag": "hand",
    "aria-pressed": sel.has(c) ? "true" : "false", "aria-label": `${LETTERS[k]}: ${COLOURS[k]}`,
  });
}

function render(ctx) {
  prepareFaces("go-wild");
  const { view, ui } = ctx;
  const hand = (view.hand || []).slice().sort((a, b) => a - b);
  ui.selected = new Set([...(ui.selected || [])].filter((c) => hand.includes(c)));
  const sel = ui.selected;
  const players = h("ul", { class: "players" }, (view.players || []).map((p) => {
    const marks = [];
    if (p.wild_one) marks.push("WILD ONE");
    if (p.seat === view.turn) marks.push("to play");
    if (p.leader) marks.push("leads");
    if (p.played) marks.push("played");
    if ((view.winners || []).includes(p.seat)) marks.push("winner");
    return h("li", { dataset: { seat: p.seat } }, h("strong", { class: "pname" }, seatName(ctx, p.seat)),
      ` ${p.hand} cards, score ${p.score}`, marks.length ? h("span", { class: "marks" }, ` ${marks.join(", ")}`) : "",
      offlineMark(ctx, p.seat, h));
  }));
  const trick = (view.trick || []).map((t) => h("li", {},
    h("span", { class: "cards", role: "img", "aria-label": playName(t.cards) }, (t.cards || []).map((c) => face(c, t.seat))),
    h("span", { class: "who" }, `${seatName(ctx, t.seat)}: ${t.kind === "slough" ? "sloughed " : ""}${playText(t.cards)}`)));
  const last = view.last_trick;
  const board = [
    players,
    h("div", { class: "drop-zone", "data-drop": "trick" },
      h("h3", {}, `Trick ${view.trick_number || "-"} (${view.trick_points || 0} points)`),
      trick.length ? h("ul", { class: "trick" }, trick) : h("p", { class: "hint" }, "no cards played in this trick yet")),
    view.best ? h("p", {}, `winning so far: ${seatName(ctx, view.best.seat)} with ${view.best.size}`) : null,
    last ? h("p", { class: "hint" }, `last trick: ${last.winner === null ? "all sloughed" : `${seatName(ctx, last.winner)} won ${last.points}`}`) : null,
    h("p", { class: "hint" }, `deck ${view.deck_count ?? 0}, discards ${view.discard_count ?? 0}`),
  ];
  if (ctx.seat === null) return { board, hand: null, actions: [] };
  const groups = group(hand);
  const handNode = h("div", { class: "hand", role: "group", "aria-label": "your hand" },
    groups.map((cs, i) => (cs.length ? h("span", { class: "cgroup" },
      button(`all ${COLOURS[i]} (${cs.length})`, () => { cs.forEach((c) => sel.add(c)); ctx.redraw(); },
        { class: "small", "data-key": `all-${i}` }),
      cs.map((c) => cardButton(c, ctx, sel))) : null)));
  const myTurn = view.turn === ctx.seat && view.phase === "playing";
  const actions = [
    button(`Play ${sel.size ? playText([...sel]) : ""}`.trim(), () => {
      const cards = [...sel];
      if (!cards.length) {
        ctx.refuse("play", "select cards of your hand first");
        return;
      }
      ctx.act({ kind: "play", cards }, `play ${playText(cards)}`);
    }, { "data-action": "play", "data-key": "play", disabled: !myTurn }),
    button("Clear", () => { sel.clear(); ctx.redraw(); }, { "data-action": "clear", "data-key": "clear", disabled: !sel.size }),
  ];
  return { board, hand: handNode, actions };
}

function status(ctx) {
  const v = ctx.view;
  if (v.phase === "over") return `game over: ${seatList(ctx, v.winners)} won`;
  if (v.phase !== "playing") return phaseWords(v.phase);
  return `round ${v.round}, trick ${v.trick_number} (${v.trick_points} points), target ${v.target}`;
}

function describe(ev, ctx) {
  const who = seatName(ctx, ev.seat);
  switch (ev.event) {
    case "leader_chosen": return `${who} ${verb(ctx, ev.seat, "lead", "leads")} first`;
    case "cards_played": return `${who} ${ev.kind === "slough" ? "sloughed" : "played"} ${playText(ev.cards)}`;
    case "trick_won": return `${who} won trick ${ev.trick}: +${ev.points} (score ${ev.score})`;
    case "trick_sloughed": return `trick ${ev.trick}: all sloughed, nobody scores`;
    case "wild_one_passed": return `${who} ${verb(ctx, ev.seat, "are", "is")} now the Wild One`;
    case "round_started": return `round ${ev.round}: ${seatName(ctx, ev.leader)} ${verb(ctx, ev.leader, "lead", "leads")}`;
    case "game_over": return `game over: ${seatList(ctx, ev.winners)} won`;
    case "deck_shuffled": case "discards_shuffled": return null;
    default: return ev.event.replaceAll("_", " ");
  }
}

// a hand card dragged onto the trick: it is played with the cards selected (drag.js)
function drop(ctx, from, to) {
  if (from.drag !== "hand" || to.drop !== "trick") return;
  const cards = [...new Set([...ctx.ui.selected, Number(from.card)])];
  ctx.act({ kind: "play", cards }, `play ${playText(cards)}`);
}

export default {
  name: "go-wild",
  drop,
  title: "Go Wild!",
  render,
  status,
  describe,
};
