// A card travels from where it was to where it goes (issue #26): just before the first
// drawing of a frame, every card on the table is measured where the player sees it then
// (not where the last drawing left it: the page may have scrolled or settled since, and a
// card then flew in from a place it no longer was); after the drawing, in the next animation
// frame (so it costs nothing to applying the update itself, which bench/web.py times), the
// cards whose element is new are measured; such a card (it moved: from the hand to a meld
// or a trick, from a meld to the hand) slides in from its old place, or from its player's
// seat (data-from) when it was not on screen. Places are in page coordinates, so a scroll
// between the two measures does not count as a move.
// Short (200 ms), by the Web Animations API (no style attribute: the page's CSP), and off
// under prefers-reduced-motion.

const DURATION = 200;
const reduced = matchMedia("(prefers-reduced-motion: reduce)");
let last = new Map();           // card -> {el, x, y} as last measured
let pending = false;
export const moves = [];        // the last moves animated: {card, from: {x, y}, to: {x, y}} (tests read it)

function centre(el) {
  const r = el.getBoundingClientRect();
  return { x: r.left + scrollX + r.width / 2, y: r.top + scrollY + r.height / 2 };
}

function places(root) {
  const at = new Map();
  for (const el of root.querySelectorAll("[data-card]")) {
    if (el.closest(".replay-board")) continue;
    const c = centre(el);
    if (c.x === scrollX && c.y === scrollY) continue;       // not laid out (hidden)
    at.set(el.dataset.card, { el, ...c });
  }
  return at;
}

// the places before a drawing; a later drawing in the same frame keeps the first's (the
// player saw nothing in between)
export function beforeDraw(root) {
  if (pending) return;
  last = places(root);
}

export function afterDraw(root) {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    measure(root);
  });
}

// a new table (or screen): nothing on it came from anywhere
export function forgetPlaces() {
  last = new Map();
}

function measure(root) {
  // only a card whose element is new since the places before the drawing can have moved:
  // the others are not measured again (this measuring was the page's largest cost of
  // script per update); all are read before any animation starts
  const fresh = [];
  for (const el of root.querySelectorAll("[data-card]")) {
    const was = last.get(el.dataset.card);
    if ((was && was.el === el) || el.closest(".replay-board")) continue;
    fresh.push(el);
  }
  const spots = fresh.map((el) => centre(el));
  fresh.forEach((el, i) => {
    const card = el.dataset.card, at = spots[i];
    if (at.x === scrollX && at.y === scrollY) return;       // not laid out (hidden)
    const was = last.get(card);
    last.set(card, { el, ...at });
    let from = was ? { x: was.x, y: was.y } : null;
    if (!from && el.dataset.from !== undefined) {
      const seat = root.querySelector(`.players [data-seat="${CSS.escape(el.dataset.from)}"]`);
      if (seat) from = centre(seat);
    }
    if (!from) return;
    const dx = from.x - at.x, dy = from.y - at.y;
    if (Math.abs(dx) < 2 && Math.abs(dy) < 2) return;
    if (reduced.matches) return;
    el.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "translate(0, 0)" }],
      { duration: DURATION, easing: "ease-out" });
    moves.push({ card: Number(card), from, to: at });
    if (moves.length > 50) moves.splice(0, 25);
  });
}
