// Seats by their players' names (text, never markup).

// "ann", "you", or "seat 3" for a seat with nobody in it
export function seatName(ctx, seat) {
  if (seat === null || seat === undefined) return "nobody";
  if (seat === ctx.seat) return "you";
  const p = (ctx.players || []).find((x) => x.seat === seat);
  return p && p.name ? p.name : `seat ${seat}`;
}

export function seatList(ctx, seats) {
  return (seats || []).map((s) => seatName(ctx, s)).join(", ");
}
