"""A real server on trio's mock clock (pytest-trio's ``autojump_clock``): the clock jumps
to the next deadline whenever every task waits, so a test runs a server's timers at the
defaults a user gets (minutes) in a second of wall time. Real sockets are fine (the
kernel hands loopback and socketpair data over as it is sent, before the clock can
jump); a worker thread is not (a task waiting for one waits, and the clock jumps past
what the thread was to do in time): these worlds run the server's blocking calls in
the task."""

from __future__ import annotations

from contextlib import asynccontextmanager

import trio

from wildtable.server.world import RealWorld


class InlineWorld(RealWorld):
    """The real world, but its blocking calls (the log's fsyncs, the data dir's probe) run
    in the task, not in a worker thread."""

    async def run_sync(self, fn, *args):
        await trio.lowlevel.checkpoint()
        return fn(*args)


class OneThreadWorld(InlineWorld):
    """InlineWorld whose log writer has no thread of its own either (as the simulator's)."""

    @asynccontextmanager
    async def own_thread(self):
        yield self.run_sync
