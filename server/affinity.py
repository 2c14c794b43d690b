"""Worker threads on the Trio thread's CPU (issue #25).

The server's Trio thread and a worker thread (a group of log records written and
fsynced, a store's transaction) hand Python's GIL to each other around every blocking
call the worker makes. Left to the kernel, the worker wakes on another core, the idle
one, and each hand-over then pulls the interpreter's hot cache lines (the reference
counts of the objects both threads touch) from one core to the other: flat out, 13%
more CPU an intent (the mean of four pairs) than with the worker beside the Trio thread (bench/README.md,
"Worker threads beside the Trio thread"). So a job first keeps its worker thread on the
CPU the Trio thread was on when it handed the job over: one ``sched_setaffinity`` when
that CPU changed since the thread's last job, none otherwise (the Trio thread moves a
few times a second at most). The Trio thread itself stays free to move; a worker stays
where its last job put it until its next job. Where the platform has no
``sched_getcpu`` or ``sched_setaffinity``, jobs run as they would without this module.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Callable

import trio


def _load_getcpu() -> Callable[[], int] | None:
    """libc's sched_getcpu(3) (the CPU the calling thread runs on), or None."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = []
    return fn


_getcpu = _load_getcpu()


class _Placed(threading.local):
    cpu = -1            # the CPU this worker thread was last kept on (-1: none)


_placed = _Placed()


def current_cpu() -> int:
    """The CPU the calling thread runs on now; -1 where the platform does not say."""
    return _getcpu() if _getcpu is not None else -1


def run_on(cpu: int, fn: Callable[..., Any], *args: Any) -> Any:
    """In a worker thread: keep this thread on ``cpu`` (-1: leave it as it is), then
    ``fn(*args)``. A CPU the thread may not use (a cpuset that changed) is not tried again
    until another one is asked for."""
    if cpu >= 0 and cpu != _placed.cpu:
        _placed.cpu = cpu
        try:
            os.sched_setaffinity(0, {cpu})
        except OSError:
            pass
    return fn(*args)


async def to_thread(fn: Callable[..., Any], *args: Any, limiter: trio.CapacityLimiter | None = None) -> Any:
    """``trio.to_thread.run_sync(fn, *args)`` with the worker on the caller's CPU."""
    return await trio.to_thread.run_sync(run_on, current_cpu(), fn, *args, limiter=limiter)
