"""A scripted Run Wild player for server tests: plays only from its own view.

Meld three of a number when it can, else draw, else play a Draw-3, else declare stuck
(``quick_candidates`` of the client's Run Wild module). Deliberately simple: the bots
(headless/bots.py) are the sensible players.
"""

from __future__ import annotations

import trio

from wildtable.headless.games.run_wild import quick_candidates
from wildtable.headless.net import Connection, Mirror
from wildtable.protocol import messages as m


def simple_choice(view: dict) -> dict | None:
    """The client's cheap Run Wild strategy, first choice."""
    options = quick_candidates(view)
    return options[0] if options else None


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


async def play_all_to_end(conns: list[Connection], joined: list[m.Joined], *, timeout: float = 60) -> list[Mirror]:
    """Every seat plays ``play_to_end`` at once; their mirrors, in the order they finished."""
    results = []

    async def one(i):
        results.append(await play_to_end(conns[i], joined[i], timeout=timeout))
    async with trio.open_nursery() as players:
        for i in range(len(conns)):
            players.start_soon(one, i)
    return results
