"""When `wildtable serve` runs Python's cyclic garbage collector (issue #25,
docs/ARCHITECTURE.md "The cyclic collector"): a whole pass only once the heap has grown
since the last one, never a young pass in play.

Why: at 4,000 players a young-generation pass cost 190-310 ms of CPU and found nothing
to collect (bench/README.md, "The tail at 4,000 players"). What is young and alive at a
pass is every suspended task's fresh frames (each reader and writer re-makes its chain
of coroutines at every wake): a pass costs what has woken since the last one, whatever
the threshold, and while it runs no player hears anything. The server's play makes no
cyclic garbage (measured: 11 objects in 30 s at 4,000 players, closing included), so
those passes bought nothing. Reference counting frees everything else at once.

The bound (what a peer could make us hold in cycles, should some path make them): a full
pass as soon as the GC-tracked objects allocated (net) since the last pass exceed the
live objects after it, or the resident set has grown by more than it was then: at most
as much again as what is alive, with floors (MIN_OBJECTS, MIN_BYTES) above what 4,000
players hold at play (about 670,000 objects, 185 MB), so that a steady server makes no
pass at all. Pure: counts in, a decision out; the Trio loop below only waits and calls.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from typing import Callable

import attrs

log = logging.getLogger("wildtable.server")

#: seconds between two looks at the counts
CHECK_EVERY = 1.0
#: net allocations of GC-tracked objects since the last pass that call for one, at least
MIN_OBJECTS = 1_000_000
#: growth of the resident set (bytes) since the last pass that calls for one, at least
MIN_BYTES = 256 << 20


@attrs.frozen
class Baseline:
    """What was alive after the last full pass: GC-tracked objects, and the resident set
    in bytes (None: not known on this platform)."""
    live: int
    rss: int | None


def due(allocated: int, rss: int | None, base: Baseline) -> bool:
    """A full pass is due: ``allocated`` (net GC-tracked allocations since the last pass)
    exceeds the live objects then, or the resident set ``rss`` has grown by more than it
    was then (each with its floor)."""
    if allocated > max(MIN_OBJECTS, base.live):
        return True
    return rss is not None and base.rss is not None and rss - base.rss > max(MIN_BYTES, base.rss)


def resident_bytes() -> int | None:
    """This process's resident set (Linux: /proc/self/statm); None elsewhere."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):     # not a Unix
    _PAGE = 4096


def start() -> Baseline:
    """Before serving: collect what starting made, freeze it (never looked at again: the
    modules, the config; recovery runs after) and turn the automatic passes off."""
    gc.collect()
    gc.freeze()
    gc.disable()
    return Baseline(0, resident_bytes())


def full_pass() -> tuple[Baseline, int, float]:
    """One full pass now: the new baseline, what it collected, its CPU time (s)."""
    began = time.thread_time()
    found = gc.collect()
    took = time.thread_time() - began
    return Baseline(len(gc.get_objects()), resident_bytes()), found, took


def allocated() -> int:
    """Net allocations of GC-tracked objects since the last pass (with the automatic
    passes off, the young generation's count only grows with them)."""
    return gc.get_count()[0]


async def run(base: Baseline, sleep: Callable, *, every: float = CHECK_EVERY, count: Callable[[], int] = allocated,
              rss: Callable[[], int | None] = resident_bytes,
              collect: Callable[[], tuple[Baseline, int, float]] = full_pass) -> None:
    """Look every ``every`` seconds; a full pass when ``due``. ``sleep``: the world's; the
    rest are the real process's unless a test gives its own."""
    while True:
        await sleep(every)
        if due(count(), rss(), base):
            base, found, took = collect()
            log.info("cyclic GC: a full pass, %d collected, %.0f ms CPU; %d objects alive", found, took * 1e3,
                     base.live)
