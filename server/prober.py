"""Fair order's pings, for every connection at once (docs/ARCHITECTURE.md, "Fair order",
the ping bound): one task pings each connection seated at a fair table every few
seconds, where each connection's heartbeat task used to sleep and wake for it. A task
woken by its own deadline costs a cancel scope, a deadline and a Cancelled exception
(about 20 us); at 4,000 players that was 800 wake-ups a second. Here a wake-up serves
every connection due within ``SLACK`` of it.

What is due when: a heap of (time, number, entry), at most one live entry per
connection (``watch`` again replaces it; the replaced one is skipped when it comes up,
and it comes up within one probe interval), so the heap is bounded by the connections
and the seats they took in the last interval.
"""

from __future__ import annotations

import heapq
import logging
import math
from typing import Protocol

import trio

from .world import TRIO_CLOCK, Clock

log = logging.getLogger("wildtable.server")

SLACK = 0.02        # s: a wake-up serves what is due this soon after it too (a probe 20 ms early is as good)
#: entries one task step takes from the heap at most (~1 ms of pings): a wake late by a
#: second at 4,000 players has ~800 due, 45 ms of CPU in one step while every table
#: waited (bench/README.md, "The tail at 4,000 players"); the rest go after a schedule point
PINGS_PER_STEP = 64


class Probed(Protocol):
    """What the prober asks of a connection (server/connection.py)."""

    def probe_due(self, now: float) -> float | None:
        """Ping now if it is still seated at a fair table; when the next ping is due, or
        None: no more (it left, its table finished, it is closing)."""
        ...


class _Entry:
    __slots__ = ("conn", "live")

    def __init__(self, conn: Probed):
        self.conn = conn
        self.live = True


class Prober:
    """The pings of every connection seated at a fair table (one task: ``run``)."""

    def __init__(self, clock=trio.current_time, waits: Clock = TRIO_CLOCK) -> None:
        self._clock = clock
        self._waits = waits         # how it waits: its server's world's (server/world.py Clock)
        self._heap: list[tuple[float, int, _Entry]] = []
        self._n = 0
        self._entries: dict[Probed, _Entry] = {}
        self._bell = trio.Event()
        self._next = math.inf           # when the task wakes next

    def __len__(self) -> int:
        return len(self._entries)

    def watch(self, conn: Probed, at: float) -> None:
        """Ping ``conn`` at ``at`` (trio's clock), then as long as ``probe_due`` says."""
        old = self._entries.get(conn)
        if old is not None:
            old.live = False
        entry = self._entries[conn] = _Entry(conn)
        self._push(at, entry)
        if at < self._next:
            self._bell.set()

    def next_due(self) -> float:
        """When the next ping is due (inf: none)."""
        return self._heap[0][0] if self._heap else math.inf

    def forget(self, conn: Probed) -> None:
        """No more pings for ``conn`` (its entry is dropped when it comes up)."""
        old = self._entries.pop(conn, None)
        if old is not None:
            old.live = False

    def _push(self, at: float, entry: _Entry) -> None:
        self._n += 1
        heapq.heappush(self._heap, (at, self._n, entry))

    def run_due(self, now: float, most: int = PINGS_PER_STEP) -> bool:
        """Ping the connections due by ``now + SLACK``, taking at most ``most`` entries
        from the heap; True if some are still due (call again after a schedule point)."""
        heap = self._heap
        horizon = now + SLACK
        while heap and heap[0][0] <= horizon:
            if most <= 0:
                return True
            most -= 1
            at, _, entry = heapq.heappop(heap)
            if not entry.live:
                continue
            conn = entry.conn
            try:
                nxt = conn.probe_due(now)
            except Exception:
                # our bug: that connection is not pinged any more, the others still are
                log.exception("pinging a connection failed (our bug)")
                nxt = None
            if nxt is None:
                entry.live = False
                if self._entries.get(conn) is entry:
                    del self._entries[conn]
            else:
                # The interval it asks for counts from when it was due, not from this
                # wake: a wake serves every ping due within SLACK of it, and later ones
                # when it is late; counted from the wake, all of those would be due at
                # one instant from then on, and each late wake would merge more, until
                # every connection's ping came in one burst (bench/README.md, "Pings
                # that stay spread"). Only one so late its next would be due already
                # counts from now.
                kept = at + (nxt - now)
                self._push(kept if kept > now else nxt, entry)
        return False

    async def run(self) -> None:
        """Ping what is due, then sleep until the next is, or until ``watch`` wants sooner."""
        while True:
            if self.run_due(self._clock()):
                await self._waits.sleep(0)      # more are due: the others' turn first
                continue
            self._bell = trio.Event()
            self._next = self.next_due()
            with self._waits.move_on_at(self._next):
                await self._bell.wait()
