"""A scripted Run Wild player for server tests: plays only from its own view.

Meld three of a number when it can, else draw, else play a Draw-3, else declare stuck.
It is deliberately simple: the bots (client/bots) are the sensible players.
"""

from __future__ import annotations

from collections import defaultdict

import trio

from wildtable.client.net import Connection, Mirror
from wildtable.protocol import messages as m


def number_of(card: int) -> int | None:
    return card % 12 + 1 if card < 60 else None


def simple_choice(view: dict) -> dict | None:
    seat = view.get("seat")
    if seat is None:
        return None
    me = view["players"][seat]
    if not me.get("in_round", True):
        return None
    phase = view["phase"]
    if phase == "ready":
        return None if me["ready"] else {"kind": "ready"}
    if phase != "playing" or me["stuck"]:
        return None
    by_number = defaultdict(list)
    for c in view["hand"]:
        n = number_of(c)
        if n is not None:
            by_number[n].append(c)
    for n, cards in sorted(by_number.items()):
        if len(cards) >= 3:
            return {"kind": "meld", "cards": cards[:3], "values": []}
    if view["pile"] > 0:
        return {"kind": "draw"}
    for c in view["hand"]:
        if c >= 69:
            return {"kind": "draw3", "card": c}
    return {"kind": "stuck"}


async def play_to_end(conn: Connection, joined: m.Joined, choose=simple_choice, *, timeout: float = 60,
                      log: list | None = None) -> Mirror:
    """Play from the seat's view until game over; every message received goes to ``log``."""
    mirror = Mirror()
    mirror.absorb(joined)
    next_id = 1
    inflight = None
    need_seq = 0        # after an acceptance, decide again only from the view that includes it
    with trio.fail_after(timeout):
        while mirror.over is None:
            if inflight is None and mirror.seq >= need_seq:
                action = choose(mirror.view)
                if action is not None:
                    inflight = next_id
                    next_id += 1
                    await conn.send(m.Intent(inflight, action))
            msg = await conn.receive()
            if log is not None:
                log.append(msg)
            mirror.absorb(msg)
            if isinstance(msg, (m.Accepted, m.Rejected)) and msg.intent == inflight:
                inflight = None
                if isinstance(msg, m.Accepted):
                    need_seq = msg.seq
    return mirror
