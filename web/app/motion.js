// A card travels from where it was to where it goes (issue #26): every card on the table is
// measured where the player sees it before a drawing; after the drawing, in the next
// animation frame (so it costs nothing to applying the update itself, which bench/web.py
// times), the cards whose element is new are measured; such a card (it moved: from the hand
// to a meld or a trick, from a meld to the hand) slides in from its old place, or from its
// player's seat (data-from) when it was not on screen. Places are in page coordinates, so a
// scroll between the two measures does not count as a move.
// The places before a drawing are those measured in the frame after the last drawing (every
// card, once that frame's layout is done), and are measured again before the drawing only
// if the page may have moved its cards since without a drawing: the window resized, fonts
// loaded, the page's size changed (a line above the table wrapped), or a new table. A card
// then flies from where the player saw it (not from where a drawing left it, when the page
// has settled since), and an update does not measure every card again (this measuring was
// a quarter of the script an update runs: bench/README.md "The page's own CPU time"). While a
// card slides or lifts (an animation or transition runs), the places are read again before
// the next drawing, as before.
// Short (200 ms), by the Web Animations API (no style attribute: the page's CSP), and off
// under prefers-reduced-motion.

const DURATION = 200;
const reduced = matchMedia("(prefers-reduced-motion: reduce)");
let last = new Map();           // card -> {el, x, y} as last measured
let pending = false;
let stale = true;               // the cards may have moved since ``last``: measure before drawing
let size = "";                  // the page's size when ``last`` was measured
addEventListener("resize", () => { stale = true; });
if (document.fonts) document.fonts.addEventListener("loadingdone", () => { stale = true; });

// the table's size (a read of a clean layout: nothing is laid out for it)
const sizeOf = (root) => `${root.offsetWidth}x${root.offsetHeight}`;
export const moves = [];        // the last moves animated: {card, from: {x, y}, to: {x, y}} (tests read it)

// ``sx``, ``sy``: the page's scroll, read once per measuring (each read is a call into the page)
function centre(el, sx = scrollX, sy = scrollY) {
  const r = el.getBoundingClientRect();
  return { x: r.left + sx + r.width / 2, y: r.top + sy + r.height / 2 };
}

// Every card's place, measured before each drawing: the cheapest reads that give it (this
// runs in every update bench/web.py times: bench/README.md "Fewer elements per face").
function places(root) {
  const at = new Map();
  const sx = scrollX, sy = scrollY;
  const replay = root.querySelector(".replay-board") !== null;     // only then is an element's asked
  for (const el of root.querySelectorAll("[data-card]")) {
    if (replay && el.closest(".replay-board")) continue;
    const c = centre(el, sx, sy);
    if (c.x === sx && c.y === sy) continue;       // not laid out (hidden)
    c.el = el;
    at.set(el.getAttribute("data-card"), c);
  }
  return at;
}

// the places before a drawing; a later drawing in the same frame keeps the first's (the
// player saw nothing in between)
export function beforeDraw(root) {
  if (pending) return;
  if (!stale && sizeOf(root) === size) return;      // measured after the last drawing, unmoved since
  last = places(root);
  stale = false;
  size = sizeOf(root);
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
  stale = true;
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
  // every card's place for the next drawing, read now that the layout is done (before any
  // animation starts: they are read where they come to rest)
  const before = last;
  last = places(root);
  stale = false;
  size = sizeOf(root);
  fresh.forEach((el, i) => {
    const card = el.dataset.card, at = spots[i];
    if (at.x === scrollX && at.y === scrollY) return;       // not laid out (hidden)
    const was = before.get(card);
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
  // a card sliding (or lifting: a transition) was read mid-way: read all again before the
  // next drawing, where they are then
  stale = document.getAnimations().length > 0;
}
