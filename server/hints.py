"""The ``hint`` request: the expert's choice for the sender's own seat, for the browser
client, which cannot run the search itself (docs/PROTOCOL.md "hint").

Only the sender's seat is ever read, and only as the wire carries it to that seat: the
answer is computed from ``game.view(state, seat)`` (packed and unpacked), never from
another seat's view or the table's state. The search is CPU-bound: it runs in a worker
process of its own (a pool of HINT_THREADS, started at the first hint), at most
HINT_THREADS at once server-wide, at most one per connection, each cut off after
HINT_TIMEOUT; at most HINT_WAITING wait, and more are refused (``busy``). The table's own
loop never waits for it: the view is copied out first.

A process, not a worker thread: a thread that searches holds Python's GIL for its whole
switch interval (5 ms) each time it takes it, and the server's thread, which gives the
GIL up at every socket call, waits that long to take it back each time. Two clients
asking hint after hint (each one at a time, as allowed) made every other table's updates
wait: 1,000 players' last-update p50 went from 2 to 97-135 ms, p99 from 4-6 to 199-303 ms
(bench/hint_flood.py; bench/README.md, "Hints in processes of their own"). The processes
are spawned, not forked (the server has threads); as multiprocessing asks, a program that
runs a Server itself guards its main module (``wildtable`` and ``python -m wildtable``
need nothing: multiprocessing does not import a ``__main__`` package module again).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import random
import weakref
from typing import Any, Callable

import trio

from wildtable.headless.appraise import appraise, hint_text, wire
from wildtable.protocol import messages as m
from wildtable.protocol.errors import IllegalAction

HINT_THREADS = 2            # searches (processes) at once, server-wide (each takes tens of ms of one core)
HINT_WAITING = 32           # requests waiting for a thread; more are refused
HINT_TIMEOUT = 5.0          # seconds one hint may take, waiting included
MOVES = 3                   # the best few moves sent


class Hints:
    """One server's hint searches: their processes, the limiter and who is waiting."""

    def __init__(self) -> None:
        self.limiter = trio.CapacityLimiter(HINT_THREADS)
        self.waiting = 0
        self.asking: weakref.WeakSet = weakref.WeakSet()     # connections with a hint under way
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in one of the hint processes (started at the first call; "spawn":
        nothing of the server's state or threads is copied into them), waited for by a
        worker thread that holds no GIL meanwhile; at most HINT_THREADS at once. A call
        cancelled meanwhile is abandoned: its process finishes it and takes the next. A
        process that died (killed, out of memory) breaks the pool: the call is refused
        (``busy``) and the next one starts a new pool."""
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                HINT_THREADS, mp_context=multiprocessing.get_context("spawn"))
        pool = self._pool
        try:
            # submitted by the thread, once it holds the limiter: a call cancelled while it
            # waits for one (its 5 s are over) leaves no search queued in the pool
            return await trio.to_thread.run_sync(_search, pool, fn, args, limiter=self.limiter,
                                                 abandon_on_cancel=True)
        except concurrent.futures.process.BrokenProcessPool:
            if self._pool is pool:
                self.close()
            raise IllegalAction("busy", "the hint could not be worked out (its process ended); ask again") from None

    def close(self) -> None:
        """The server stopped: its hint processes end (a search under way is not waited for)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _search(pool: concurrent.futures.ProcessPoolExecutor, fn: Callable[..., Any], args: tuple) -> Any:
    """In a worker thread: ``fn(*args)`` in one of ``pool``'s processes, waited for."""
    return pool.submit(fn, *args).result()


_HINTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def hints_of(server: Any) -> Hints:
    got = _HINTS.get(server)
    if got is None:
        got = _HINTS[server] = Hints()
        server.closers.append(got.close)        # (server/app.py: once it has stopped)
    return got


def advise(game: str, view: dict, seq: int, seed: str) -> m.HintGiven:
    """The answer from one seat's view alone (pure; a worker thread runs it). ``seed``: the
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
    if hints.waiting >= HINT_WAITING:
        raise IllegalAction("busy", "the server is working out many hints now; ask again in a moment")
    # the seat's view as the wire carries it to that seat, copied out of the table now
    game, seq = table.game.NAME, table.seq
    view = wire(table.game.view(table.state, seat))
    hints.asking.add(conn)
    hints.waiting += 1
    try:
        with trio.move_on_after(HINT_TIMEOUT):
            return await hints.run(advise, game, view, seq, f"{table.id}:{seat}:{seq}")
        raise IllegalAction("busy", f"the hint took over {HINT_TIMEOUT:g} s; ask again in a moment")
    finally:
        hints.waiting -= 1
        hints.asking.discard(conn)
