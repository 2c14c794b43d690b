"""A simulated node: the real Server (server/app.py) in a simulated world
(server/world.py): the simulated network, a disk where only what was synced survives a
crash, a wall clock that follows Trio's mock clock, no threads, waits that stop while it
is paused (pause.py). Kill it (a crash: its connections cut, every byte not synced lost),
restart it on the same data dir; pause it and resume it (SIGSTOP, SIGCONT).
"""

from __future__ import annotations

import errno
import os
import random
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio

from wildtable.server.app import Server
from wildtable.server.config import ServerConfig
from wildtable.server.interfaces import LogSink, Store
from wildtable.server.world import Clock, Disk

from .pause import NodeClock

EPOCH = 1_800_000_000.0      # the simulated wall clock: this Unix time at Trio's time 0


def sim_wall() -> float:
    """The simulated wall clock (SimWorld.wall); EPOCH outside a run."""
    try:
        return EPOCH + trio.current_time()
    except RuntimeError:
        return EPOCH


class SimDisk:
    """The log writer's disk (server/world.py, Disk). Bytes go to real files (in memory
    on tmpfs, where there is one), but the disk counts, per file, how much was synced.
    An fsync takes time: what it covers is durable once the worker call that made it
    has returned (``settle``, after a seeded latency). ``crash`` cuts every file back to
    what was durable plus some of the rest (a torn tail: the OS may have written part of
    it), as a power cut would, and fails every call after it.

    The disk fills (``fill``): a write takes what room is left, then every write fails
    with ENOSPC until ``free``, as a full file system's does. An fsync does not fail for
    room: ext4 and XFS reserve a write's blocks when it is written (an fsync that fails
    stops the real server whatever its errno: server/logwriter.py)."""

    def __init__(self, rng: random.Random, wall=None, times: dict[str, float] | None = None):
        self.rng = rng
        # when each file was last written or stamped, on the simulated wall clock (``wall``):
        # the real files' mtimes are real time, weeks from the simulated one, and every
        # table recovered after a crash looked older than its expiry (kept by the node
        # across its lives in ``times``)
        self.wall = wall or sim_wall
        self.times: dict[str, float] = {} if times is None else times
        self.paths: dict[int, str] = {}
        self.size: dict[str, int] = {}
        self.synced: dict[str, int] = {}
        self.pending: dict[str, int] = {}    # fsyncs under way: path -> size they cover
        self.dead = False
        self.fsyncs = 0
        self.room: int | None = None         # bytes left while the disk is full (None: room enough)
        self.refused = 0                     # writes that failed with ENOSPC

    async def settle(self) -> None:
        """The fsyncs of the call that just ran take their time, then are durable."""
        if self.pending:
            await trio.sleep(self.rng.choice((0.0002, 0.001, 0.004, 0.02)))
            if not self.dead:
                for p, size in self.pending.items():
                    self.synced[p] = max(self.synced[p], size)
            self.pending.clear()

    def _alive(self) -> None:
        if self.dead:
            raise OSError(errno.EIO, "the node crashed")

    def open_append(self, path) -> int:
        self._alive()
        p = str(path)
        fd = os.open(p, os.O_WRONLY | os.O_APPEND)
        self.paths[fd] = p
        if p not in self.synced:         # made durably (LogFile.create, reopen) or synced before
            self.synced[p] = self.size[p] = os.fstat(fd).st_size
        return fd

    def fill(self, room: int) -> None:
        """The disk is full but for ``room`` bytes."""
        self.room = room

    def free(self) -> None:
        self.room = None

    def write(self, fd: int, data) -> int:
        self._alive()
        if self.room is not None:
            if self.room <= 0 or not len(data):
                self.refused += 1
                raise OSError(errno.ENOSPC, "No space left on device")
            data = data[:self.room]
        n = os.write(fd, data)
        self.times[self.paths[fd]] = self.wall()
        if self.room is not None:
            self.room -= n
        # the file's end as the OS has it (the writer cuts a group the disk had no room
        # for back with ftruncate, which this disk does not see)
        self.size[self.paths[fd]] = os.lseek(fd, 0, os.SEEK_CUR)
        return n

    def durable(self, path) -> int | None:
        """How many bytes of ``path`` a crash now would keep for sure (None: all of it,
        the disk never wrote to it)."""
        return self.synced.get(str(path))

    def fsync(self, fd: int) -> None:
        self._alive()
        p = self.paths[fd]
        self.pending[p] = self.size[p] = min(self.size[p], os.fstat(fd).st_size)
        self.fsyncs += 1

    def sync_all(self, fds: list[int]) -> int:
        for fd in fds:
            self.fsync(fd)
        return len(fds)

    def close(self, fd: int) -> None:
        if self.paths.pop(fd, None) is not None:    # (a crash closed them all already)
            os.close(fd)

    def probe(self, path, size: int) -> None:
        """The health probe's file (server/health.py), written, fsynced and removed: it
        fails as a write to this disk would (ENOSPC while full, EIO once crashed); no
        file is made, its bytes never reach a log."""
        self._alive()
        if self.room is not None and self.room < size:
            raise OSError(errno.ENOSPC, "No space left on device")

    def mtime(self, path) -> float:
        """When ``path`` was last written or stamped, simulated; a file this node never
        wrote through its disk (a log made with its header only, LogFile.create) counts as
        written now: it is never taken for older than it is."""
        os.stat(path)           # (FileNotFoundError as the OS's)
        return self.times.get(str(path), self.wall())

    def stamp(self, path, when: float) -> None:
        self._alive()
        os.stat(path)
        self.times[str(path)] = when

    def crash(self) -> dict[str, int]:
        """Lose what was not synced; returns the bytes lost per file."""
        self.dead = True
        lost = {}
        for p, synced in sorted(self.synced.items()):
            if os.path.exists(p):
                self.size[p] = min(self.size[p], os.path.getsize(p))    # a group cut back since its write
            if self.size[p] > synced and os.path.exists(p):
                keep = synced + self.rng.randint(0, self.size[p] - synced)
                os.truncate(p, keep)
                lost[p] = self.size[p] - keep
        for fd in list(self.paths):
            self.close(fd)
        return lost


class SimWorld:
    """server/world.py's World for one incarnation of a node."""

    disk: Disk
    clock: Clock

    def __init__(self, net, name: str, disk: SimDisk, on_bug, clock: NodeClock):
        self.net, self.name, self.disk, self.on_bug = net, name, disk, on_bug
        self.clock = self.gated = clock

    def wall(self) -> float:
        return sim_wall()

    async def run_sync(self, fn, *args):
        await trio.lowlevel.checkpoint()
        result = fn(*args)
        await self.disk.settle()
        await self.gated.gate()          # (its return reaches a paused process once it runs)
        return result

    @asynccontextmanager
    async def own_thread(self):
        yield self.run_sync              # no threads here: inline as every other job

    async def listen(self, handler, host, port, *, limits, http, task_status=trio.TASK_STATUS_IGNORED):
        async def one(peer):
            try:
                await self.gated.gate()  # accepted by the kernel; the process takes it once it runs
                await handler(peer)
            except Exception as e:       # as wire.serve: it ends that connection only, but it is our bug
                self.on_bug(f"node {self.name}: a connection's handler raised {type(e).__name__}: {e}")
        async with trio.open_nursery() as nursery:
            self.net.listening[self.name] = (one, nursery)
            try:
                task_status.started(port or 8765)
                await trio.sleep_forever()
            finally:
                self.net.listening.pop(self.name, None)


class Node:
    """One server process, started, killed and restarted on one data dir."""

    def __init__(self, net, name: str, config: ServerConfig, rng: random.Random, on_bug,
                 store: Callable[[str, NodeClock], tuple[Store, LogSink[Any]]] | None = None):
        self.net, self.name, self.data_dir, self.rng = net, name, config.data_dir, rng
        self.make_store = store          # a node of a cluster: its store handle and log sink, made anew each start
        self.store: Store | None = None
        self.on_bug = on_bug
        self.config = config             # the server's settings (its data dir too)
        self.server: Server | None = None
        self.disk: SimDisk | None = None
        self.mtimes: dict[str, float] = {}     # its disk's record of when each file was written (SimDisk.times)
        self._scope: trio.CancelScope | None = None
        self._done = trio.Event()
        self.clock = NodeClock(name)     # this incarnation's (a new one each start)
        self.lives = 0
        self.lost_bytes = 0

    def _chance(self, size: int) -> tuple[int, ...]:
        p = list(range(size))
        self.rng.shuffle(p)
        return tuple(p)

    def _table_id(self) -> str:
        return "t%08x" % self.rng.getrandbits(32)

    async def start(self, nursery: trio.Nursery) -> None:
        self.disk = SimDisk(random.Random(self.rng.getrandbits(64)), times=self.mtimes)
        self.lives += 1
        self.clock = self.net.clocks[self.name] = NodeClock(self.name)
        sink: LogSink[Any] | None = None
        if self.make_store is not None:
            # the store knows this node by its name; its calls' answers wait while it is paused
            self.store, sink = self.make_store(self.name, self.clock)
        # the node's own random choices (its cluster's adoption order) from the run's seed
        config = attrs.evolve(self.config, seed=self.rng.getrandbits(64))
        self.server = Server(config, chance=self._chance, table_ids=self._table_id,
                             world=SimWorld(self.net, self.name, self.disk, self.on_bug, self.clock),
                             kernel_delay=_kernel_delay, store=self.store, store_sink=sink)
        try:
            await nursery.start(self._run, self.server)
        except RuntimeError:
            if self.server is not None:
                raise
            # killed as it started (cluster.py restarts a node in a task of its own)

    async def _run(self, server: Server, task_status=trio.TASK_STATUS_IGNORED) -> None:
        self._done = trio.Event()
        if self.server is not server:       # killed before it ran
            self._done.set()
            return
        self.clock.root = trio.lowlevel.current_task()
        try:
            with trio.CancelScope() as scope:
                self._scope = scope
                try:
                    await server.run(self.name, 0, task_status=task_status)
                except Exception as e:
                    if self.disk is not None and not self.disk.dead:
                        self.on_bug(f"node {self.name}: the server stopped with {type(e).__name__}: {e}")
        finally:
            self._done.set()

    async def stopped(self) -> None:
        """Once the killed process is gone (its data dir's lock with it)."""
        await self._done.wait()

    def kill(self) -> None:
        """SIGKILL: its connections are cut, what it did not sync is lost, it runs no more."""
        self.net.cut_node(self.name)
        self.net.listening.pop(self.name, None)
        if self.disk is not None:
            self.lost_bytes += sum(self.disk.crash().values())
        self.clock.kill()
        if self._scope is not None:
            self._scope.cancel()
        self.server = None

    @property
    def up(self) -> bool:
        return self.server is not None


def _kernel_delay(peer) -> float | None:
    """What the kernel's TCP_INFO would say of a link (server/fairorder.py's kernel
    bound): its smallest one-way delay, the base without jitter, whatever the client does
    with its pings."""
    link = getattr(peer, "link", None)
    return None if link is None else link.base
