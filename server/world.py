"""The world a server runs in: its network, its disk, its wall clock and its worker
threads, behind small interfaces (docs/ARCHITECTURE.md, "Simulation").

The real world is sockets (server/wire.py), ``os`` calls, ``time.time()`` and Trio's
worker threads; the simulator (wildtable.sim) gives the same server code a simulated
one: a network with seeded delays and cuts, a disk where only what was synced survives
a crash, a wall clock that follows Trio's (mock) clock, no threads, and waits that stop
while the node is paused (``Clock``). Trio's own clock is the only other time the server
reads, so a ``trio.testing.MockClock`` drives all of it.

These seams are thin on purpose: each says only what the server already did.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, Awaitable, Callable, Protocol

import trio

from . import affinity
from .framebudget import FrameRules
from .own_thread import RunSync, own_thread


class Transport(Protocol):
    """What a Connection needs of its peer: one accepted WebSocket (server/wire.py's Peer
    is the real one). Outgoing messages never wait: ``write`` returns how many frames
    wait in the backlog afterwards, and ``flush`` (the writer task) writes them."""

    remote: str
    host: str
    wake: Callable[[], None] | None
    on_rtt: Callable[[float], None] | None
    cut: str | None     # why it was closed at once for breaking its frame budget or caps (None: it was not)

    def budget(self, rules: FrameRules) -> None: ...
    def tcp_info(self) -> bytes: ...

    async def receive(self) -> bytes | str: ...
    async def send(self, data: bytes) -> None: ...
    def write(self, data: bytes) -> int: ...
    def write_many(self, messages: list[bytes]) -> int: ...
    @property
    def backlog(self) -> int: ...
    @property
    def backlog_bytes(self) -> int: ...
    def drop_backlog(self) -> None: ...
    async def flush(self, stall_timeout: float | None = None) -> None: ...
    async def ping(self) -> float: ...
    def probe(self) -> float | None: ...
    async def close(self, code: int = 1000, reason: str = "") -> None: ...


class Disk(Protocol):
    """The calls the log writer (server/logwriter.py) makes on log files. Durability is
    the contract: after ``fsync(fd)`` (or ``sync_all``) returns, what was written to that
    file survives a crash; what was written after it may not."""

    def open_append(self, path: os.PathLike) -> int: ...
    def write(self, fd: int, data: memoryview) -> int: ...
    def fsync(self, fd: int) -> None: ...
    def sync_all(self, fds: list[int]) -> int: ...
    def close(self, fd: int) -> None: ...
    def probe(self, path: os.PathLike, size: int) -> None: ...
    # when a log was last written, on the world's wall clock (World.wall), and setting it:
    # recovery takes a table's age from it, the shutdown stamps it (server/local_tables.py)
    def mtime(self, path: os.PathLike) -> float: ...
    def stamp(self, path: os.PathLike, when: float) -> None: ...


class Clock(Protocol):
    """How the server waits: every sleep and every deadline of the code a node runs goes
    through its world's clock (the time it reads is ``trio.current_time()``, one clock for
    every node of a simulated run). The real one is Trio's own functions; the simulator's
    stops one node's waits while that node is paused, as SIGSTOP or a long GC pause would,
    while the other nodes' go on (docs/ARCHITECTURE.md, "Simulation")."""

    def sleep(self, seconds: float) -> Awaitable[None]: ...
    def sleep_until(self, deadline: float) -> Awaitable[None]: ...
    def move_on_after(self, seconds: float) -> AbstractContextManager[trio.CancelScope]: ...
    def move_on_at(self, deadline: float) -> AbstractContextManager[trio.CancelScope]: ...
    def fail_after(self, seconds: float) -> AbstractContextManager[trio.CancelScope]: ...


class TrioClock:
    """The real clock: Trio's functions themselves (``clock.sleep`` IS ``trio.sleep``), so
    a wait costs one attribute lookup more than a direct call (bench/clock.py)."""

    sleep = staticmethod(trio.sleep)
    sleep_until = staticmethod(trio.sleep_until)
    move_on_after = staticmethod(trio.move_on_after)
    move_on_at = staticmethod(trio.move_on_at)
    fail_after = staticmethod(trio.fail_after)


TRIO_CLOCK: Clock = TrioClock()


class World(Protocol):
    """Everything outside the process a server touches, besides Trio's clock's reading."""

    disk: Disk
    clock: Clock

    def wall(self) -> float: ...
    async def run_sync(self, fn: Callable[..., Any], *args: Any) -> Any: ...
    def own_thread(self) -> AbstractAsyncContextManager[RunSync]: ...
    async def listen(self, handler: Callable[[Any], Awaitable[None]], host: str, port: int, *, limits: Any,
                     http: Any, task_status: Any = trio.TASK_STATUS_IGNORED) -> None: ...


class OsDisk:
    """The real disk: ``os`` calls; ``sync_all`` is one syncfs(2) where there is one
    (server/logwriter.py says why), else parallel fsyncs."""

    def __init__(self, syncfs=None):
        self._syncfs = syncfs

    def open_append(self, path) -> int:
        return os.open(path, os.O_WRONLY | os.O_APPEND)

    def write(self, fd: int, data) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def sync_all(self, fds: list[int]) -> int:
        """Make every file of ``fds`` durable; returns the sync calls made."""
        if self._syncfs is not None and self._syncfs(fds[0]) == 0:
            return 1
        with ThreadPoolExecutor(min(16, len(fds))) as pool:
            list(pool.map(os.fsync, fds))
        return len(fds)

    def close(self, fd: int) -> None:
        os.close(fd)

    def probe(self, path, size: int) -> None:
        """Write ``size`` bytes to a new file at ``path``, fsync it and remove it (the
        health probe: server/health.py); OSError as the data dir's writes would fail."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, bytes(size))
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(path)

    def mtime(self, path) -> float:
        return os.stat(path).st_mtime

    def stamp(self, path, when: float) -> None:
        os.utime(path, (when, when))


class RealWorld:
    """Sockets, the OS's disk, the wall clock, Trio's waits and its worker threads."""

    clock: Clock = TRIO_CLOCK

    def __init__(self, disk: Disk | None = None):
        if disk is None:
            from .logwriter import syncfs
            disk = OsDisk(syncfs)
        self.disk = disk

    def wall(self) -> float:
        return time.time()

    async def run_sync(self, fn, *args):
        # a worker thread beside this one (server/affinity.py says why)
        return await affinity.to_thread(fn, *args)

    def own_thread(self) -> AbstractAsyncContextManager[RunSync]:
        # the log writer's, for its life: a cheaper hand-over (server/own_thread.py)
        return own_thread()

    async def listen(self, handler, host, port, *, limits, http, task_status=trio.TASK_STATUS_IGNORED):
        from . import listener
        await listener.serve(handler, host, port, limits=limits, http=http, task_status=task_status)
