"""The server's processes for CPU-bound searches: the ``hint`` answers (server/hints.py)
and its expert bots' moves (server/botseats.py), never in a thread of the server's process.

A thread that searches holds Python's GIL for its whole switch interval (5 ms) each time
it takes it, and the server's thread, which gives the GIL up at every socket call, waits
that long to take it back each time: every table of the server slowed. Two clients asking
hint after hint took 1,000 players' last-update p50 from 2 to 97-135 ms (bench/README.md,
"Hints in processes of their own"); 24 expert bots the server ran, from 1.5 to 48-57 ms
(2.2-2.6 ms with their searches here; bench/README.md, "The server's bots think in
processes of their own").

One pool of PROCESSES processes a server, started at its first search and ended with it.
Each kind of search comes with a limiter of its own (hints: 2 at once, bots: 1), which a
call holds from before its search is handed to a process until that process is done with
it, so a kind never has more searches in the pool than its limit, and a call given up
while it waits for its limiter leaves nothing queued. The processes are spawned, not
forked (the server has threads); as multiprocessing asks, a program that runs a Server
itself guards its main module (``wildtable`` and ``python -m wildtable`` need nothing:
multiprocessing does not import a ``__main__`` package module again).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import weakref
from typing import Any, Callable

import trio

from concurrent.futures.process import BrokenProcessPool

PROCESSES = 2       # searches under way at once, server-wide (each takes tens of ms of one core)

__all__ = ["PROCESSES", "BrokenProcessPool", "CpuPool", "pool_of"]


class CpuPool:
    """One server's search processes."""

    def __init__(self, processes: int = PROCESSES) -> None:
        self.processes = processes
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    async def run(self, limiter: trio.CapacityLimiter, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` (picklable, as its answer) in one of the processes (started at the
        first call; "spawn": nothing of the server's state or threads is copied into them),
        waited for by a worker thread that holds no GIL meanwhile and holds ``limiter``
        until the process is done with it. A call cancelled meanwhile is abandoned: its
        process finishes it (its limiter's token comes back then) and takes the next. A
        process that died (killed, out of memory) breaks the pool: the calls under way
        raise BrokenProcessPool, and the next call starts a new pool."""
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.processes, mp_context=multiprocessing.get_context("spawn"))
        pool = self._pool
        try:
            # submitted by the thread, once it holds the limiter: a call cancelled while it
            # waits for one leaves no search queued in the pool
            return await trio.to_thread.run_sync(_search, pool, fn, args, limiter=limiter, abandon_on_cancel=True)
        except BrokenProcessPool:
            if self._pool is pool:
                self.close()
            raise

    def close(self) -> None:
        """The server stopped: its search processes end (a search under way is not waited for)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _search(pool: concurrent.futures.ProcessPoolExecutor, fn: Callable[..., Any], args: tuple) -> Any:
    """In a worker thread: ``fn(*args)`` in one of ``pool``'s processes, waited for. A
    pool closed meanwhile (another call found it broken; the server stopped) is as broken."""
    try:
        future = pool.submit(fn, *args)
    except RuntimeError:            # (submit's "cannot schedule new futures after shutdown")
        raise BrokenProcessPool("the pool was closed") from None
    try:
        return future.result()
    except concurrent.futures.CancelledError:       # (shutdown's cancel_futures)
        raise BrokenProcessPool("the pool was closed") from None


_POOLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pool_of(server: Any) -> CpuPool:
    """``server``'s pool (made at the first call; closed once the server has stopped)."""
    got = _POOLS.get(server)
    if got is None:
        got = _POOLS[server] = CpuPool()
        server.closers.append(got.close)        # (server/app.py: once it has stopped)
    return got
