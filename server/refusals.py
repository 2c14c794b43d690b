"""How many refused intents each connection may have written to the logs
(docs/ARCHITECTURE.md, "Bounded resources"). Pure: the time comes in."""

from __future__ import annotations

import logging
import weakref

from .oplog import about

log = logging.getLogger("wildtable.server")

REFUSALS_LOGGED_BURST = 10    # refused intents one connection may have logged at once ...
REFUSALS_LOGGED_RATE = 1.0    # ... and then per second; the rest are answered and counted, not logged


class RefusalBudget:
    """A token bucket per connection (``burst`` at once, then ``rate`` a second), shared
    by every table, so that a connection cannot grow the logs faster than that however it
    hops between tables. A refusal over the budget is answered as usual; it is only counted."""

    def __init__(self, rate: float = REFUSALS_LOGGED_RATE, burst: int = REFUSALS_LOGGED_BURST):
        self.rate, self.burst = rate, burst
        self._buckets: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.logged = 0
        self.unlogged = 0

    def take(self, link, now: float) -> bool:
        """True if a refusal of ``link``'s (a connection's) may be logged at ``now`` (and count it)."""
        b = self._buckets.get(link)
        if b is None:
            b = self._buckets[link] = [float(self.burst), now, False]
        tokens = min(float(self.burst), b[0] + (now - b[1]) * self.rate)
        b[1] = now
        if tokens >= 1:
            b[0] = tokens - 1
            self.logged += 1
            return True
        b[0] = tokens
        self.unlogged += 1
        if not b[2]:
            b[2] = True
            remote = getattr(link, "remote", "?")     # (server/arbiter_io.py Link)
            log.info("refused intents from %s (%s) beyond %d at once and %g a second are counted, not logged",
                     remote, getattr(link, "name", None), self.burst, self.rate, extra=about(peer=remote))
        return False
