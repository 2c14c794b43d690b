// Seats by their players' names (text, never markup).

// "ann", "you", or "seat 3 (free)" for a seat nobody has taken (a replay says no "you")
export function seatName(ctx, seat) {
  if (seat === null || seat === undefined) return "nobody";
  if (seat === ctx.seat && !ctx.replay) return "you";
  const p = (ctx.players || []).find((x) => x.seat === seat);
  if (p && p.name) return p.name;
  return p ? `seat ${seat} (free)` : `seat ${seat}`;
}

export function seatList(ctx, seats) {
  return (seats || []).map((s) => seatName(ctx, s)).join(", ");
}
