"""The ``hint`` request: the expert's choice for the sender's own seat, for the browser
client, which cannot run the search itself (docs/PROTOCOL.md "hint").

Only the sender's seat is ever read, and only as the wire carries it to that seat: the
answer is computed from ``game.view(state, seat)`` (packed and unpacked), never from
another seat's view or the table's state. The search is CPU-bound: it runs in one of the
server's search processes (server/cpu_pool.py, started at the first search), at most
HINT_SEARCHES at once server-wide, at most one per connection, each cut off after
HINT_TIMEOUT; at most HINT_WAITING wait, and more are refused (``busy``), of them at most
HINT_PER_ADDRESS for one address (forwarded.peer_address, as the per-address caps count
it: behind a trusted proxy, the client it names), so one address with many connections
cannot keep every other player's hint refused. The table's own loop never waits for it:
the view is copied out first.

A process, not a worker thread: a thread that searches holds Python's GIL from every
table of the server (server/cpu_pool.py says how much). The processes are the server's
pool of server/cpu_pool.py, which its bots' searches share (one at a time at most: a
hint waits for one bot search at worst, never for all the bots').
"""

from __future__ import annotations

import random
import weakref
from typing import Any, Callable

import trio

from wildtable.headless.appraise import appraise, hint_text, wire
from wildtable.protocol import messages as m
from wildtable.protocol.errors import IllegalAction

from .cpu_pool import BrokenProcessPool, CpuPool, pool_of
from .forwarded import AddressCounts, peer_address

HINT_SEARCHES = 2           # searches at once, server-wide, in the pool's processes (each takes tens of ms of a core)
HINT_WAITING = 32           # requests waiting for a process; more are refused
HINT_PER_ADDRESS = 8        # of those, for one IP address (a quarter: four addresses cannot fill the line)
HINT_TIMEOUT = 5.0          # seconds one hint may take, waiting included
MOVES = 3                   # the best few moves sent


class Hints:
    """One server's hint searches: the limiter, who is waiting, and the pool they run in
    (the server's, server/cpu_pool.py, which closes it once the server has stopped)."""

    def __init__(self, pool: CpuPool) -> None:
        self.limiter = trio.CapacityLimiter(HINT_SEARCHES)
        self.held = AddressCounts()                          # hints under way or waiting, by address
        self.asking: weakref.WeakSet = weakref.WeakSet()     # connections with a hint under way
        self.pool = pool

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in one of the pool's processes, at most HINT_SEARCHES at once
        (CpuPool.run). A process that died costs this call (``busy``), not the next."""
        try:
            return await self.pool.run(self.limiter, fn, *args)
        except BrokenProcessPool:
            raise IllegalAction("busy", "the hint could not be worked out (its process ended); ask again") from None


_HINTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def hints_of(server: Any) -> Hints:
    got = _HINTS.get(server)
    if got is None:
        got = _HINTS[server] = Hints(pool_of(server))     # (the pool closes once the server has stopped)
    return got


def advise(game: str, view: dict, seq: int, seed: str) -> m.HintGiven:
    """The answer from one seat's view alone (pure; a search process runs it). ``seed``: the
    same table, seat and seq give the same hint."""
    advice = appraise(game, view, None, random.Random(seed))
    moves = tuple({"action": x.action, "label": x.label, "value": x.value} for x in advice.moves[:MOVES])
    return m.HintGiven(seq, hint_text(game, advice), advice.by, moves)


async def answer(conn: Any) -> m.HintGiven:
    """The hint for ``conn``'s own seat now; IllegalAction (an ``error``) when it has none
    to ask for, or when too many are waiting."""
    table, seat = conn.table, conn.seat
    if table is None:
        raise IllegalAction("not_at_table", "you are not at a table: join one, then ask for a hint at your turn")
    if seat is None:
        raise IllegalAction("not_seated", "a hint is for a player's own seat; spectators get none")
    hints = hints_of(conn.server)
    if conn in hints.asking:
        raise IllegalAction("busy", "your last hint is still being worked out; wait for its answer")
    if hints.held.total >= HINT_WAITING:
        raise IllegalAction("busy", "the server is working out many hints now; ask again in a moment")
    address = peer_address(conn)
    if hints.held.of(address) >= HINT_PER_ADDRESS:         # (no address known: none counted)
        raise IllegalAction("busy", f"{HINT_PER_ADDRESS} hints for your address are being worked out already, the "
                            "most one address may have at once; ask again once one of them is answered")
    # the seat's view as the wire carries it to that seat, copied out of the table now
    game, seq = table.game.NAME, table.seq
    view = wire(table.game.view(table.state, seat))
    hints.asking.add(conn)
    hints.held.take(address)
    try:
        with trio.move_on_after(HINT_TIMEOUT):
            return await hints.run(advise, game, view, seq, f"{table.id}:{seat}:{seq}")
        raise IllegalAction("busy", f"the hint took over {HINT_TIMEOUT:g} s; ask again in a moment")
    finally:
        hints.held.give(address)
        hints.asking.discard(conn)
