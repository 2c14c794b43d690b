"""Waiting for a condition instead of for time (README.md, "Install and run the tests":
a test waits for a condition, never for time).

A bare ``sleep(0.3)`` standing in for "the server has done X by now" holds on an idle
machine and fails on a loaded one; ``wait_until`` waits for X itself, as long as it
takes up to a generous deadline, and a wait that runs out fails saying what never
happened (with the last value seen, if ``show`` is given)."""

from __future__ import annotations

import inspect
import os
import time
from typing import Awaitable, Callable, TypeVar

import trio

T = TypeVar("T")

STEP = 0.01     # how often a condition is looked at again, in seconds


async def wait_until(predicate: Callable[[], T | Awaitable[T]], *, what: str, timeout: float = 15.0,
                     step: float = STEP, show: Callable[[], object] | None = None) -> T:
    """Poll ``predicate`` until it is truthy (in this Trio task); its value. It may be
    async (a question to the server: then pass a ``step`` that spares it). After
    ``timeout`` seconds, AssertionError "``what``: not within N s" (and ``show()``)."""
    with trio.move_on_after(timeout):
        while True:
            value = predicate()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value  # type: ignore[return-value]
            await trio.sleep(step)
    raise AssertionError(f"{what}: not within {timeout:g} s" + (f"; {show()!r}" if show else ""))


def wait_until_sync(predicate: Callable[[], T], *, what: str, timeout: float = 15.0,
                    step: float = STEP, show: Callable[[], object] | None = None) -> T:
    """``wait_until`` for a test that runs in a plain thread (no Trio run)."""
    end = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {timeout:g} s" + (f"; {show()!r}" if show else ""))
        time.sleep(step)
    return value


def busy_until(path: str, limit: float = 60.0) -> None:
    """A job for a worker process (a hint's or the replay's): hold it until ``path``
    exists, so a test decides when it is free again (at most ``limit`` s, so a test that
    failed leaves no process waiting for ever)."""
    end = time.monotonic() + limit
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.01)
