// The table on screen (issue #26): the seats around a felt, this tab's player at the
// bottom and the others clockwise from their left, as at a real table; the shared cards
// (melds, a trick, the asks) in the middle. A game's render gives its players as a list
// (ul.players, one li per seat) followed by what lies on the table; the list's items are
// placed around the middle by CSS grid areas (style.css ".felt"), so every game module
// keeps drawing a plain, readable list, and a screen reader reads it as one.

import { attr, h, put } from "./dom.js";

// clockwise from the bottom (you), for each count of seats
const PLACES = [
  [],
  ["bottom"],
  ["bottom", "top"],
  ["bottom", "tl", "tr"],
  ["bottom", "left", "top", "right"],
  ["bottom", "left", "tl", "tr", "right"],
  ["bottom", "left", "tl", "top", "tr", "right"],
  ["bottom", "bl", "left", "tl", "top", "tr", "right"],
  ["bottom", "bl", "left", "tl", "top", "tr", "right", "br"],
];

const isSeats = (el) => el instanceof Element && el.classList.contains("players");

// Each seat's place, whether it is yours and whether it is to play; written only when
// changed (an update of a busy table rewrites nothing here).
export function placeSeats(ul, mySeat, view) {
  const items = [...ul.children];
  const n = items.length;
  const places = PLACES[Math.min(n, 8)];
  const mine = Math.max(0, items.findIndex((li) => Number(li.dataset.seat) === mySeat));
  items.forEach((li, i) => {
    const seat = Number(li.dataset.seat);
    attr(li, "data-place", places[(i - mine + n) % n] || "top");
    attr(li, "data-me", seat === mySeat ? "yes" : null);
    attr(li, "data-turn", view.turn === seat && view.phase !== "over" ? "yes" : null);
  });
}

// The board's parts put on a felt: ``kept`` holds the felt and its middle to reuse (the
// table screen keeps them while it shows one table); a board without a seat list (a game
// this page has no module for) is given back as it is.
export function onFelt(parts, mySeat, view, kept = {}) {
  const [seats, ...middle] = parts;
  if (!isSeats(seats)) return parts;
  kept.felt = kept.felt || h("div", { class: "felt" });
  kept.mid = kept.mid || h("div", { class: "mid" });
  placeSeats(seats, mySeat, view);
  put(kept.mid, middle);
  return put(kept.felt, seats, kept.mid);
}
