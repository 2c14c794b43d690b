// Card faces (issue #26; docs/PLAYING.md "In a browser"): each card drawn as inline SVG
// made by the page itself with createElementNS: nothing fetched, no data: URL, no style
// attribute (the page's CSP stays as it is, server/web.py). A face is a card-shaped rounded
// rectangle edged in its colour, its number or rank large in the middle, an index in the
// corner, and beside the colour a shape (or a suit's pip) and a letter, so colour is never
// the only cue (style.css's head note).
//
// A face is aria-hidden inside the card's element (a button, or a span in a role="img"
// group), whose aria-label names the card. Its texts are still the element's visible text
// for WCAG 2.5.3 (axe's label-content-name-mismatch): the name must hold them, word for
// word and in order. So a face has few texts, one space apart (a text node outside <text>
// is not drawn), in an order the name can read: the middle number first, then the corner
// index, so that "blue 7, B7" holds the face's "7 B7" (the game modules' names; each face
// below says what it reads). tests/web/test_web_card_faces.py checks every card shown.
// A face never changes for a given card and context (a wild's value, a symbol), so each is
// built once as a template and cloned (cloneNode): applying an update stays cheap. (Shapes
// and texts are the face's own elements: <use> of shared ones cost ten times more to clone
// and lay out in Chromium.) What a face's element is (selected, dimmed, trump, wild in Go
// Fish) is the element's class, drawn by style.css on the face's parts (.f-bg, .f-trump,
// .f-wild).

const NS = "http://www.w3.org/2000/svg";
const W = 50;
const H = 70;
const EDGE = 2.5;
const RX = 5.5;
// the edge's length, for a wild's edge drawn in five colours (dashes of a fifth each)
const PERIMETER = 2 * (W - EDGE + H - EDGE) - 8 * RX + 2 * Math.PI * RX;
const CACHE_MAX = 2000;     // templates; a game's cards make a few hundred at most

function el(tag, attrs, ...children) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) if (c) e.append(c);
  return e;
}

// ------------------------------------------------------------------ shapes and texts
// Shapes in a unit box (-1..1), filled with the colour of the group that draws them.
const SHAPES = {
  circle: () => el("circle", { r: 0.88 }),
  square: () => el("rect", { x: -0.78, y: -0.78, width: 1.56, height: 1.56 }),
  diamond: () => el("polygon", { points: "0,-1 0.72,0 0,1 -0.72,0" }),
  triangle: () => el("polygon", { points: "0,-0.92 0.95,0.72 -0.95,0.72" }),
  down: () => el("polygon", { points: "0,0.92 0.95,-0.72 -0.95,-0.72" }),
  star: () => el("polygon", { points: starPoints(5, 1, 0.42) }),
  // a wild's ✱: six spokes, drawn as strokes
  spokes: () => el("path", { d: "M0,-0.9V0.9M-0.78,-0.45L0.78,0.45M-0.78,0.45L0.78,-0.45", fill: "none",
    stroke: "currentColor", "stroke-width": 0.34, "stroke-linecap": "round" }),
  // playing cards' suits (Go Fish Wildcard)
  clubs: () => el("g", {}, el("circle", { cx: 0, cy: -0.48, r: 0.38 }), el("circle", { cx: -0.46, cy: 0.12, r: 0.38 }),
    el("circle", { cx: 0.46, cy: 0.12, r: 0.38 }), el("path", { d: "M-0.12,0 L-0.3,0.95 H0.3 L0.12,0Z" })),
  hearts: () => el("path", { d: "M0,0.92 C-0.15,0.7 -1,0.25 -1,-0.35 C-1,-0.8 -0.55,-1 -0.28,-0.88 C-0.12,-0.8 -0.03,-0.66 0,-0.55 "
    + "C0.03,-0.66 0.12,-0.8 0.28,-0.88 C0.55,-1 1,-0.8 1,-0.35 C1,0.25 0.15,0.7 0,0.92Z" }),
  diamonds: () => el("polygon", { points: "0,-1 0.72,0 0,1 -0.72,0" }),
  spades: () => el("path", { d: "M0,-1 C0.15,-0.75 1,-0.3 1,0.18 C1,0.62 0.5,0.72 0.1,0.42 L0.3,0.95 H-0.3 L-0.1,0.42 "
    + "C-0.5,0.72 -1,0.62 -1,0.18 C-1,-0.3 -0.15,-0.75 0,-1Z" }),
  // Wild Shots' symbols (docs/RULES.md "Wild Shots")
  revolver: () => el("path", { d: "M-1,-0.52 H0.42 V-0.62 H0.62 V-0.12 C0.72,0.2 0.86,0.5 0.92,0.82 H0.46 C0.4,0.52 0.3,0.3 0.16,0.12 "
    + "H0 C-0.02,0.36 -0.3,0.42 -0.36,0.12 V0.02 H-0.02 V-0.22 H-1Z" }),
  hat: () => el("g", {}, el("path", { d: "M-1,0.22 Q0,0.8 1,0.22 Q0.7,0.62 0,0.64 Q-0.7,0.62 -1,0.22Z" }),
    el("path", { d: "M-0.56,0.34 L-0.46,-0.42 Q-0.26,-0.72 0,-0.5 Q0.26,-0.72 0.46,-0.42 L0.56,0.34 Q0,0.5 -0.56,0.34Z" })),
  badge: () => el("g", {}, el("polygon", { points: starPoints(6, 1, 0.55) }),
    el("circle", { r: 0.3, fill: "#fffdf7" })),
  poster: () => el("g", {}, el("rect", { x: -0.72, y: -0.95, width: 1.44, height: 1.9, rx: 0.08 }),
    el("path", { d: "M-0.5,-0.68 H0.5 M-0.5,0.5 H0.5 M-0.36,0.72 H0.36", stroke: "#fffdf7", "stroke-width": 0.13 }),
    el("circle", { cx: 0, cy: -0.06, r: 0.3, fill: "#fffdf7" })),
};

function starPoints(n, outer, inner) {
  const pts = [];
  for (let i = 0; i < 2 * n; i++) {
    const r = i % 2 ? inner : outer;
    const a = (Math.PI * i) / n - Math.PI / 2;
    pts.push(`${(r * Math.cos(a)).toFixed(3)},${(r * Math.sin(a)).toFixed(3)}`);
  }
  return pts.join(" ");
}

// A shape placed on the face: its own element carries the placing (and ``attrs``), with no
// group around it (fewer elements per face: cheaper to clone, insert, lay out and remove,
// bench/README.md "Fewer elements per face"); ``turn``: turned half round the card's centre.
function shape(name, x, y, size, attrs = {}, turn = false) {
  const e = SHAPES[name]();
  const at = `${turn ? `rotate(180 ${W / 2} ${H / 2}) ` : ""}translate(${x} ${y}) scale(${size})`;
  for (const [k, v] of Object.entries({ transform: at, ...attrs })) e.setAttribute(k, String(v));
  return e;
}

// a text of the face, and the space that parts it from the next one in the element's text
function glyph(text, x, y, size, attrs = {}) {
  return [el("text", { x, y, "font-size": size, "text-anchor": "middle", "dominant-baseline": "central", ...attrs }, text), " "];
}

// ------------------------------------------------------------------ the parts of a face
function card(...parts) {
  return el("svg", { class: "face", viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", "aria-hidden": "true",
    focusable: "false", fill: "currentColor", "font-weight": 700 }, ...parts);
}

function background(extra = "") {
  return el("rect", { class: `f-bg${extra}`, x: EDGE / 2, y: EDGE / 2, width: W - EDGE, height: H - EDGE, rx: RX,
    "stroke-width": EDGE });
}

// a wild's edge: its game's colours in turn around the card
function rainbow(colours) {
  const dash = PERIMETER / colours.length;
  return el("g", { fill: "none", "stroke-width": EDGE }, colours.map((c, i) => el("rect", {
    x: EDGE / 2, y: EDGE / 2, width: W - EDGE, height: H - EDGE, rx: RX, stroke: c,
    "stroke-dasharray": `${dash.toFixed(2)} ${(PERIMETER - dash).toFixed(2)}`, "stroke-dashoffset": (-i * dash).toFixed(2),
  })));
}

// the index in the top left corner (a text, and a shape or pip under it); the bottom
// right corner has the shape alone, turned round (a second text would be read twice)
function corners(text, shapeName, size = 9.5) {
  return [text ? glyph(text, 4, 8.5, size, { "text-anchor": "start" }) : null,
    shapeName ? shape(shapeName, 8.5, text ? 18.5 : 8.5, 3.6) : null,
    shapeName ? shape(shapeName, 8.5, 8.5, 3.6, {}, true) : null];
}

// ------------------------------------------------------------------ the templates, cloned
const templates = new Map();

function face(key, build) {
  let t = templates.get(key);
  if (!t) {
    if (templates.size >= CACHE_MAX) templates.clear();
    t = build();
    templates.set(key, t);
  }
  return t.cloneNode(true);
}

// Run Wild (docs/RULES.md "Run Wild"): ids 0..59 numbers (colour id // 12, number id % 12 + 1),
// 60..68 wilds, 69.. Draw-3s. ``value``: what a wild in a meld stands for. A number: its
// number large, "B7" and its colour's shape in the corner (it reads "7 B7"); a wild: an
// edge of all the colours and ✱, "W" (in a meld its value large: "5 W=5"); a Draw-3:
// dark, "+3 D3".
const RW_LETTERS = "BGYRP";
const RW_SHAPES = ["circle", "triangle", "square", "diamond", "star"];
const RW_RAINBOW = ["#1f5fbf", "#1e7a34", "#7a6000", "#b3261e", "#6b3fa0"];

export function runWildFace(c, value) {
  if (c >= 69) {
    return face("rw:d3", () => card(background(),
      [0, 1, 2].map((i) => el("rect", { x: 13 + 4 * i, y: 20 + 4 * i, width: 16, height: 22, rx: 2.5, fill: "none",
        stroke: "currentColor", "stroke-opacity": 0.35, "stroke-width": 1.2 })),
      glyph("+3", W / 2, 36, 22), corners("D3", null)));
  }
  if (c >= 60) {
    return face(`rw:w:${value || ""}`, () => card(background(" f-plain"), rainbow(RW_RAINBOW),
      shape("spokes", W / 2, H / 2, 15, { "stroke-opacity": value ? 0.2 : 1 }),
      value ? glyph(String(value), W / 2, 36, 26) : null, corners(value ? `W=${value}` : "W", "spokes")));
  }
  const k = Math.floor(c / 12);
  const n = (c % 12) + 1;
  return face(`rw:${c}`, () => card(background(), shape(RW_SHAPES[k], W / 2, H / 2, 15, { "fill-opacity": 0.16 }),
    glyph(String(n), W / 2, 36, 26), corners(`${RW_LETTERS[k]}${n}`, RW_SHAPES[k])));
}

// Go Wild! (docs/RULES.md "Go Wild!"): ids 0..89 colours (id // 18), 90.. wilds; no numbers:
// the colour's shape large in the middle, its letter in the corner ("R", a wild "W").
const GW_LETTERS = "RYOBGW";
const GW_SHAPES = ["diamond", "square", "down", "circle", "triangle", "spokes"];
const GW_RAINBOW = ["#b3261e", "#7a6000", "#a84c00", "#1f5fbf", "#1e7a34"];

export function goWildFace(c) {
  const k = Math.min(Math.floor(c / 18), 5);
  return face(`gw:${k}`, () => (k === 5
    ? card(background(" f-plain"), rainbow(GW_RAINBOW), shape("spokes", W / 2, H / 2, 13), corners("W", "spokes", 11))
    : card(background(), shape(GW_SHAPES[k], W / 2, H / 2, 13), corners(GW_LETTERS[k], GW_SHAPES[k], 11))));
}

// Wild Shots (docs/RULES.md "Wild Shots"): suit id // 10 (black, red, green, blue), value
// id % 10 + 1, and the card's symbol (the table's symbols setting), drawn under the value
// with its name; the trump symbol's cards are underlined (.trump .f-trump, style.css).
// It reads "5 R5" or "5 R5 revolver".
const WS_LETTERS = "KRGB";
const WS_SHAPES = ["square", "diamond", "triangle", "circle"];
const WS_SYMBOLS = { revolver: "revolver", hat: "hat", star: "badge", poster: "poster" };
const WS_SYMBOL_COLOUR = "#6b4423";

const wsKnown = (symbol) => (Object.hasOwn(WS_SYMBOLS, symbol || "") ? symbol : null);

export function wildShotsFace(c, symbol) {
  const s = Math.floor(c / 10);
  const v = (c % 10) + 1;
  const known = wsKnown(symbol);
  return face(`ws:${c}:${known || (symbol ? "?" : "")}`, () => {
    const underline = el("rect", { class: "f-trump", x: 13, y: 43, width: 24, height: 2.4, rx: 1.2 });
    if (!symbol) {
      return card(background(), shape(WS_SHAPES[s], W / 2, 33, 13, { "fill-opacity": 0.14 }),
        glyph(String(v), W / 2, 32, 24), corners(`${WS_LETTERS[s]}${v}`, WS_SHAPES[s]), underline);
    }
    const [index, pip] = corners(`${WS_LETTERS[s]}${v}`, WS_SHAPES[s]);
    return card(background(), glyph(String(v), W / 2, 28, 22), index, pip, underline,
      known ? shape(WS_SYMBOLS[known], W / 2, 53.5, 7, { fill: WS_SYMBOL_COLOUR }) : null,
      glyph(known || "?", W / 2, known ? 64.5 : 55, known ? 6.4 : 14, { fill: WS_SYMBOL_COLOUR }));
  });
}

// a Wild Shots symbol or suit shape alone, small, for the legend beside its name
export function wildShotsIcon(what) {
  const name = Object.hasOwn(WS_SYMBOLS, what) ? WS_SYMBOLS[what] : null;
  const suit = ["black", "red", "green", "blue"].indexOf(what);
  if (!name && suit < 0) return null;
  return face(`wsi:${what}`, () => el("svg", { class: `icon ws-${what}`, viewBox: "-1.1 -1.1 2.2 2.2", "aria-hidden": "true",
    focusable: "false", fill: name ? WS_SYMBOL_COLOUR : "currentColor" }, SHAPES[name || WS_SHAPES[suit]]()));
}

// Go Fish Wildcard (docs/RULES.md "Go Fish Wildcard"): rank id // 4 (A, 2..10, J, Q, K),
// suit id % 4 (clubs, diamonds, hearts, spades): the rank large with its suit's pip under
// it, the pip in the corners; it reads its rank ("10"). A card of a wild rank gets a dashed
// edge and a ✱ in its top right corner (.wild, style.css).
const GF_RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const GF_SUITS = ["clubs", "diamonds", "hearts", "spades"];

export function goFishFace(c) {
  const rank = GF_RANKS[Math.floor(c / 4)];
  const suit = GF_SUITS[c % 4];
  return face(`gf:${c}`, () => card(background(), glyph(rank, W / 2, 29, rank.length > 1 ? 22 : 26),
    shape(suit, W / 2, 50, 9), corners(null, suit), shape("spokes", 41, 9, 4.2, { class: "f-wild" })));
}

// ------------------------------------------------------------------ templates made ahead
// A card's first face builds its template (a few dozen DOM calls), and a game shows its
// cards for the first time one by one, in the updates bench/web.py times: so when a table
// opens, every template of its deck is made ahead, a few at a time while the page is idle.
const DECK = {
  "run-wild": () => [...Array.from({ length: 70 }, (_, c) => () => runWildFace(c)),
    ...Array.from({ length: 12 }, (_, v) => () => runWildFace(60, v + 1))],
  "go-wild": () => Array.from({ length: 6 }, (_, k) => () => goWildFace(k * 18)),
  "wild-shots": (symbols) => Array.from({ length: 40 }, (_, c) => () => wildShotsFace(c, symbols ? symbols[c] : null)),
  "go-fish-wildcard": () => Array.from({ length: 52 }, (_, c) => () => goFishFace(c)),
};
const prepared = new Set();
const idle = globalThis.requestIdleCallback || ((f) => setTimeout(() => f({ timeRemaining: () => 5 }), 50));

// ``symbols``: Wild Shots' (card -> symbol), the view's
export function prepareFaces(game, symbols) {
  if (prepared.has(game) || !DECK[game]) return;
  prepared.add(game);
  const todo = DECK[game](symbols);
  const step = (deadline) => {
    while (todo.length && deadline.timeRemaining() > 1) todo.pop()();
    if (todo.length) idle(step);
  };
  idle(step);
}
