"""The far deadlines of every table, in one task (docs/ARCHITECTURE.md, "The arbiter:
pure core, thin shell", its waits). A table's arbiter waits on its inbox until its next
deadline; during play that is the engine's idle timeout, minutes away, and moved by every
action. Waiting with a deadline of its own costs the arbiter a cancel scope and an entry
in Trio's deadline heap at every wait: one wait an intent, 2-3% of the server's CPU at
4,000 players (bench/README.md, "Cheaper intents at 4,000 players"). So a table whose
deadline is at least ``FAR`` away waits on its inbox alone and asks this task to wake it
then (``remind``); the task puts a wake-up request in its inbox when that time comes.
Nearer deadlines (fair order's holds, a timer about to fire) keep the cancel scope.

What is due when: a heap of (time, number, table), the table held weakly (a forgotten
table is not kept alive by a reminder). A table asks again only for a deadline earlier
than the one it was promised, so at most a few entries a table wait in the heap; a
reminder that comes up for a deadline the table has since moved later wakes it once,
and it asks again (once per idle timeout, not once an action).
"""

from __future__ import annotations

import heapq
import math
import weakref
from typing import Any, Protocol

import trio

from .world import TRIO_CLOCK, Clock

#: a table whose next deadline is this far away (s) or more waits without a cancel scope
FAR = 1.0


class Reminded(Protocol):
    """What the task asks of a table (server/table.py)."""

    def remind_due(self, at: float) -> None:
        """The reminder for ``at`` is due: wake up (unless it asked for an earlier one since)."""
        ...


class Timers:
    """The reminders of every table of a server (one task: ``run``)."""

    def __init__(self, clock=trio.current_time, waits: Clock = TRIO_CLOCK) -> None:
        self._clock = clock
        self._waits = waits         # how it waits: its server's world's (server/world.py Clock)
        self._heap: list[tuple[float, int, Any]] = []
        self._n = 0
        self._bell = trio.Event()
        self._next = math.inf       # when the task wakes next
        self._scope = trio.CancelScope()

    def __len__(self) -> int:
        return len(self._heap)

    def remind(self, who: Reminded, at: float) -> None:
        """Call ``who.remind_due(at)`` at ``at`` (trio's clock)."""
        self._n += 1
        heapq.heappush(self._heap, (at, self._n, weakref.ref(who)))
        if at < self._next:
            self._bell.set()

    def run_due(self, now: float) -> None:
        """Tell every table whose reminder is due by ``now``."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, _, ref = heapq.heappop(heap)
            who = ref()
            if who is not None:
                who.remind_due(at)

    async def run(self) -> None:
        """Remind what is due, then sleep until the next is, or until ``remind`` wants
        sooner; until ``stop``."""
        with self._scope:
            while True:
                self.run_due(self._clock())
                self._bell = trio.Event()
                self._next = self._heap[0][0] if self._heap else math.inf
                with self._waits.move_on_at(self._next):
                    await self._bell.wait()

    def stop(self) -> None:
        self._scope.cancel()
