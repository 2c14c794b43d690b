// Seats by their players' names (text, never markup).

// "ann", "you", or "seat 3 (free)" for a seat nobody has taken (a replay says no "you")
export function seatName(ctx, seat) {
  if (seat === null || seat === undefined) return "nobody";
  if (seat === ctx.seat && !ctx.replay) return "you";
  const p = (ctx.players || []).find((x) => x.seat === seat);
  if (p && p.name) return p.name;
  return p ? `seat ${seat} (free)` : `seat ${seat}`;
}

// the verb that goes with seatName: "you deal", "bob deals"
export function verb(ctx, seat, you, others) {
  return seatName(ctx, seat) === "you" ? you : others;
}

export function seatList(ctx, seats) {
  return (seats || []).map((s) => seatName(ctx, s)).join(", ");
}

// The words a player reads for a game's phase (never its internal name: docs/PLAYING.md)
const PHASES = {
  choosing_first: "choosing who starts",
  dealing: "dealing",
  deal: "dealing",
  ready: "cards dealt: everyone presses Ready to start",
  playing: "playing",
  play: "playing",
  scored: "round over",
  last_asks: "last asks",
  over: "game over",
};

export function phaseWords(phase) {
  return PHASES[phase] || String(phase || "").replaceAll("_", " ");
}

// "ann 22, bob 21": a score for each seat, by name
export function byName(ctx, values) {
  return (values || []).map((x, seat) => `${seatName(ctx, seat)} ${x === null ? "-" : x}`).join(", ");
}

// the mark of a seat whose player's connection is gone (styled apart from a winner's)
export function offlineMark(ctx, seat, h) {
  return ctx.connected(seat) ? "" : h("span", { class: "offline" }, " (offline)");
}
