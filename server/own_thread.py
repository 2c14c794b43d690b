"""A worker thread kept for one user's whole life: the log writer's (issue #25).

The log writer hands every group of records (its write and fsync) to a worker thread:
about a thousand hand-overs a second at 4,000 players. ``trio.to_thread.run_sync`` makes
each one a fresh trip through Trio's thread cache (a capacity limiter, a copied context,
the cache's handshake with an idle thread); a py-spy profile of the server at 4,000
players put ~9% of its samples there. A thread of the writer's own, fed through a
queue (below) and answering through the Trio token (the public
``trio.lowlevel.reschedule``), does the same hand-over for less (bench/README.md, "The log
writer's own thread", has the figures). Each job still runs on the CPU the Trio thread
was on when it handed the job over (server/affinity.py says why).

The thread is woken through an eventfd where there is one (Linux), whose write runs
without the GIL: woken on the Trio thread's CPU, the thread takes its CPU at once and
finds the GIL free, and its group's write and fsync begin then. Woken by a queue's put,
made with the GIL held, it took the CPU only to wait for the GIL until the Trio thread's
next blocking call, then took the CPU from it again: a switch there and back more a job,
at every group (bench/README.md, "Less CPU per intent, the fourteenth session"). Elsewhere
a C-level queue wakes it.

A job cannot be cancelled once handed over (as ``trio.to_thread.run_sync``'s by
default): its caller waits for its end and gets its result, and is cancelled at its
next checkpoint. Jobs run one after another in the order given.
"""

from __future__ import annotations

import ctypes
import os
import queue
import threading
from collections import deque
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, AsyncIterator, Awaitable, Callable

import outcome
import trio

from . import affinity

RunSync = Callable[..., Awaitable[Any]]


PR_SET_NAME = 15           # prctl(2): the calling thread's name, 15 bytes at most


def name_this_thread(name: str) -> None:
    """Give the calling thread ``name`` where the OS shows it (``top -H``, ``ps -L``,
    /proc/PID/task/TID/comm: Linux's prctl, the first 15 bytes); elsewhere nothing."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


class _Bell:
    """What wakes the thread when a job waits: ``ring`` (the Trio thread), ``wait`` (the
    thread: returns once rung since its last return). An eventfd where the platform has
    one, its calls made without the GIL (see the module's doc); else a C-level queue."""

    def __init__(self) -> None:
        self.ring: Callable[[], Any]
        self.wait: Callable[[], Any]
        if hasattr(os, "eventfd"):
            self._fd = os.eventfd(0)
            self.ring = partial(os.eventfd_write, self._fd, 1)      # (partials: no Python frame a call)
            self.wait = partial(os.eventfd_read, self._fd)
        else:
            self._fd = -1
            rung: queue.SimpleQueue = queue.SimpleQueue()
            self.ring = partial(rung.put, None)
            self.wait = rung.get

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _cannot_abort(raise_cancel) -> trio.lowlevel.Abort:
    return trio.lowlevel.Abort.FAILED      # the job runs to its end; the cancel comes after


class OwnThread:
    """One worker thread and the queue of jobs it runs (see the module's doc)."""

    def __init__(self, name: str):
        self._jobs: deque = deque()    # unbounded, but each caller waits for its job
        self._bell = _Bell()
        self._token = trio.lowlevel.current_trio_token()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    async def run_sync(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the thread, on the CPU this (the Trio) thread is on now; its
        result, or what it raised."""
        await trio.lowlevel.checkpoint_if_cancelled()
        self._jobs.append((trio.lowlevel.current_task(), affinity.current_cpu(), fn, args))
        self._bell.ring()
        return await trio.lowlevel.wait_task_rescheduled(_cannot_abort)

    async def stop(self) -> None:
        """End the thread once the jobs handed over before are done (shielded)."""
        with trio.CancelScope(shield=True):
            self._jobs.append((trio.lowlevel.current_task(), -1, None, ()))
            self._bell.ring()
            await trio.lowlevel.wait_task_rescheduled(_cannot_abort)
        self._thread.join()         # it has answered its last job: it is returning now
        self._bell.close()

    def _serve(self) -> None:
        name_this_thread(self._thread.name)
        reschedule = trio.lowlevel.reschedule
        jobs, wait = self._jobs, self._bell.wait
        while True:
            while not jobs:
                wait()          # (a ring of a job taken already returns at once: looked at again)
            task, cpu, fn, args = jobs.popleft()
            if fn is None:
                self._token.run_sync_soon(reschedule, task, outcome.Value(None))
                return
            result = outcome.capture(affinity.run_on, cpu, fn, *args)
            self._token.run_sync_soon(reschedule, task, result)
            del task, fn, args, result      # nothing of a job outlives it here


@asynccontextmanager
async def own_thread(name: str = "wildtable-logs") -> AsyncIterator[RunSync]:
    """A thread of one's own for the ``async with`` block: its ``run_sync``."""
    thread = OwnThread(name)
    try:
        yield thread.run_sync
    finally:
        await thread.stop()
