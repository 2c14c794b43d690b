"""One task commits the log records of every table, in groups: one write and at most
one fsync per file per group, so durability does not cap throughput.

Durability settings:
  always  a record is written and fsynced before its commit() returns (the default);
  batch   written before commit() returns, fsynced at most every BATCH_FSYNC seconds;
  off     commit() returns once the record is queued; written in groups, fsynced at close.

Whatever the setting, ``append()`` queues records that need no fsync of their own (a
refused intent's): they are written with the next group and made durable by the next
fsync of their file (the next commit that asks for one, or the file's close).

Open files are bounded: only the writer opens and closes log files (in its thread, one
group at a time), at most ``max_open`` at once. A file is opened when something is to be
written to it; it is closed when nothing was written to it for ``LOG_IDLE`` seconds, when
its table asks (``release``: a finished game, a table about to be forgotten), or when
more files are wanted than ``max_open`` (the least recently written goes first). A file
with unsynced records is fsynced before it is closed, so closing never weakens
durability; and a torn tail was cut at recovery, so appending to a reopened file is
appending to its last whole record.

A full disk is waited out, not fatal (docs/ARCHITECTURE.md "Disk full"): a write that
fails for lack of room (``ROOM_ERRNOS``) is cut back to the last whole record of each
file, nothing of its group is acknowledged, and the same group is tried again with a
backoff while ``paused`` is set (tables answer intents with ``storage_full``); once it is
written and fsynced the waiting commits return and the tables play on by themselves.
Any other failure (an fsync that fails, an I/O error, a read-only file system) stops the
server: after a failed fsync the page cache cannot be trusted.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import weakref
import time
from collections import OrderedDict
from pathlib import Path
from contextlib import AbstractAsyncContextManager
from typing import Callable

import attrs
import trio

from .groupcommit import QUEUE, fill_group, group_commit_phrase, hand_over, next_commit
from .interfaces import LogSink, TableLog
from .metrics import Metrics
from .own_thread import RunSync, own_thread
from .world import TRIO_CLOCK, Clock, Disk, OsDisk

logger = logging.getLogger("wildtable.server")

DURABILITIES = ("always", "batch", "off")
BATCH_FSYNC = 0.5
SYNCFS_FROM = 4       # dirty files from which one syncfs beats one fsync each
MAX_OPEN_LOGS = 256   # log files open at once at most (serve --max-open-logs)
LOG_IDLE = 60.0       # seconds without a write after which a log file is closed
LOG_MODE = 0o600      # the logs hold every shuffle: as secret as the hands
# A write that fails with these leaves what was written before it sound: it is cut back
# and waited out (a full disk, a user's quota). EIO, EROFS, EFBIG and every fsync failure
# are not: the server stops (docs/ARCHITECTURE.md "Disk full").
ROOM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
RETRY_FIRST = 0.05    # seconds before the first retry of a group the disk had no room for ...
RETRY_MAX = 1.0       # ... doubling up to this: play resumes within about a second of room made
PAUSE_LOG_EVERY = 10.0   # seconds between the "still full" lines in the server's log
# how a table ended, for a writer's release(log, ended): its game is over, or it expired
# waiting for players (only the store's writer keeps it: files go to finished/ or expired/)
OVER = "over"
EXPIRED = "expired"


@attrs.define(eq=False)
class LogFile:
    """An append-only log file owned by one table. ``fd`` is -1 while it is closed; only
    the LogWriter opens and closes it once the table runs (see the module's doc)."""
    path: Path
    fd: int = -1
    size: int = 0
    last_write: float = 0.0      # trio's clock at its last write (the writer's idle close)
    # its table's answering of requests while the disk is full (server/table.py): awaited
    # by a commit of its that waits out a pause, until the writer cancels it. Held weakly
    # (weakref.WeakMethod of Table._serve_paused): a file the writer keeps open must not
    # keep a forgotten table alive
    while_paused: "weakref.WeakMethod | None" = None

    @classmethod
    def create(cls, path: Path, first: bytes) -> "LogFile":
        """Create the file (mode 0600) holding ``first``, durably; it is left closed (the
        writer opens it for the next record)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, LOG_MODE)
        try:
            os.write(fd, first)
            os.fsync(fd)
            fsync_dir(path.parent)
        except OSError:
            # a full disk, say: no fd leaked per attempt, no headless log left for recovery to refuse
            os.close(fd)
            try:
                path.unlink()
            except OSError:
                pass
            raise
        os.close(fd)
        return cls(path, -1, len(first))

    @classmethod
    def reopen(cls, path: Path, good_length: int) -> "LogFile":
        """A log to append to after recovery, its torn tail (if any) cut at ``good_length``
        durably; it is left closed (the writer opens it for the next record)."""
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            if os.fstat(fd).st_size != good_length:
                os.ftruncate(fd, good_length)
                os.fsync(fd)
        finally:
            os.close(fd)
        return cls(path, -1, good_length)

    @property
    def name(self) -> str:
        """What game_over calls the log: the file's name."""
        return self.path.name

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def fsync_dir(path: Path) -> None:
    """Make the entries of directory ``path`` durable (a file created or renamed in it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _load_syncfs():
    """Linux's syncfs(2): one call makes every file of a file system durable. With many
    tables dirty in one group it costs about one fsync instead of one per file (measured
    here: 200 files, 4 ms against 920 ms one by one). None where it is not available."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_syncfs = _load_syncfs()
syncfs = _syncfs     # for the real world's disk (server/world.py)


class StorageFailed(Exception):
    """The logs cannot be written (an I/O error, a failed fsync, a read-only file system,
    a file size limit). Nothing after the failed group was acknowledged, so the server
    must stop: it cannot keep its promise that what it tells of is durable."""


class DiskFull(Exception):
    """A group had no room (ROOM_ERRNOS): what it wrote was cut back, nothing of it holds."""

    def __init__(self, error: OSError):
        super().__init__(error.strerror or str(error))
        self.error = error


@attrs.define(eq=False)
class _Commit:
    log: LogFile | None
    data: bytes
    done: trio.Event | None
    sync: bool = False
    release: bool = False        # close the file afterwards (fsynced first if need be)
    acked: bool = False          # written (and fsynced as asked): ``done`` was set for this
    lost: bool = False           # given up: the writer closed while the disk was full
    serving: trio.CancelScope | None = None   # its table answering requests while the disk is full


class LogWriter:
    def __init__(self, durability: str = "always", *, max_open: int = MAX_OPEN_LOGS, idle: float = LOG_IDLE,
                 disk: Disk | None = None, run_sync=None, thread: Callable[[], AbstractAsyncContextManager[RunSync]] | None = None,
                 clock: Clock = TRIO_CLOCK):
        if durability not in DURABILITIES:
            raise ValueError(f"durability must be one of {', '.join(DURABILITIES)}")
        if max_open < 1:
            raise ValueError("max_open must be at least 1")
        self.durability = durability
        self.max_open = max_open
        self.idle = idle
        # the world's seams (server/world.py): the disk's calls, and where the group's
        # blocking work runs: a thread of the writer's own for run()'s life (``thread``,
        # server/own_thread.py; inline in the simulator), or else ``run_sync``
        self.disk: Disk = disk if disk is not None else OsDisk(_syncfs)
        if thread is None and run_sync is None:
            thread = own_thread
        self._thread = thread
        self._run_sync: RunSync = run_sync or trio.to_thread.run_sync     # (the thread's, while run() runs)
        self._clock = clock          # how it waits (the simulator's stops while the node is paused)
        self._send, self._recv = trio.open_memory_channel(QUEUE)
        self._unsynced: set[LogFile] = set()
        # the open log files, least recently written first (touched only in the writer's thread)
        self._open: OrderedDict[LogFile, None] = OrderedDict()
        self.opens = 0               # log files opened (a file closed while idle and written again counts again)
        self.most_open = 0           # the most log files open at once
        self.groups = 0
        self.fsyncs = 0
        self.syncs = 0               # sync rounds (each one fsync, or one syncfs, or a parallel batch)
        self.sync_seconds = 0.0
        self.sync_max = 0.0
        self.bytes_written = 0
        self.commit_seconds = 0.0    # groups that made commits durable: from handing them to the
        self.commits_timed = 0       # writer's thread to its return (the group-commit latency)
        self.commit_max = 0.0
        self.last_sync = 0.0         # seconds of the last sync round (read by run, after the thread)
        self.timings = Metrics()     # where run() reports each group commit and sync round (the server's)
        # a full disk: the group waits and is tried again (see the module's doc)
        self.paused = False
        self.failed: StorageFailed | None = None
        self.pauses = 0
        self.paused_seconds = 0.0    # the metric: seconds paused, over the server's life
        self.on_pause: Callable[[bool], None] | None = None    # called with True when a pause begins, False when it ends
        self._waiting: set[_Commit] = set()   # commits whose tables wait on them (done to be set)
        self._closed = trio.Event()

    async def commit(self, log: LogFile, data: bytes) -> None:
        """Append ``data`` to ``log``; return when it is as durable as the setting asks."""
        if self.durability == "off":
            await hand_over(self._send, _Commit(log, data, None))
            return
        await self._done(_Commit(log, data, trio.Event(), self.durability == "always"))

    async def append(self, log: LogFile, data: bytes) -> None:
        """Queue ``data`` for ``log`` with no fsync of its own and no wait for the disk:
        it is written in order with the next group, and durable after the next fsync of
        that file (a later commit that asks for one, its release, its idle close, or the
        writer's close). For records nobody is told depend on (refused intents)."""
        await hand_over(self._send, _Commit(log, data, None))

    async def release(self, log: LogFile, ended: str | None = None) -> None:
        """Return once everything committed to ``log`` so far is written and fsynced and
        the file is closed (whatever the durability setting). A later commit opens it again.
        ``ended`` (the table is done: OVER or EXPIRED) matters to the store's writer only
        (PgWriter); from files the server moves the log to finished/ or expired/."""
        await self._done(_Commit(log, b"", trio.Event(), False, True))

    async def _done(self, c: _Commit) -> None:
        assert c.done is not None
        """Wait until ``c`` is acknowledged. While the disk is full its table answers its
        requests meanwhile (``log.while_paused``: it returns only when cancelled, at the
        acknowledgment or when the pause ends)."""
        # queued without a schedule point of its own when there is room (the wait for the
        # acknowledgement below is one: a yield here cost a task switch a commit), yet
        # not once cancelled, as ``send`` would not
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self._send.send_nowait(c)
        except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            if not await hand_over(self._send, c):      # full: wait for room; gone: as hand_over says
                return
        ref = getattr(c.log, "while_paused", None)
        serve = ref() if ref is not None else None
        self._waiting.add(c)
        try:
            while not c.acked:
                if c.lost:
                    if c.data:
                        await trio.sleep_forever()    # never acknowledged: cancelled at the stop
                    return
                if self.paused and serve is not None:
                    with trio.CancelScope() as c.serving:
                        await serve()
                    c.serving = None
                else:
                    await c.done.wait()
                    if not (c.acked or c.lost):
                        c.done = trio.Event()     # woken by a pause: wait again after it
        finally:
            self._waiting.discard(c)

    def _ack(self, c: _Commit, written: bool = True) -> None:
        """``c`` is written (or, ``written`` False, given up: the writer closed while the
        disk was full): wake its waiter, ending its table's answering meanwhile."""
        if written:
            c.acked = True
        else:
            c.lost = True
        if c.done is not None:
            c.done.set()
        if c.serving is not None:
            c.serving.cancel()

    def _set_paused(self, paused: bool) -> None:
        """Begin or end a pause: wake the waiting tables (to serve, or to stop serving), and
        tell the server (on_pause: its tables' audiences, readiness)."""
        self.paused = paused
        for c in list(self._waiting):
            if paused:
                if c.done is not None:
                    c.done.set()
            elif c.serving is not None:
                c.serving.cancel()
        if self.on_pause is not None:
            self.on_pause(paused)

    def summary(self) -> str:
        mean = self.sync_seconds / self.syncs * 1000 if self.syncs else 0.0
        return (f"{self.groups} groups, {self.bytes_written} bytes, {self.syncs} sync rounds "
                f"(mean {mean:.1f} ms, max {self.sync_max * 1000:.1f} ms), {self.fsyncs} fsync calls, "
                f"{self.opens} log file opens (at most {self.most_open} open at once); "
                + (f"paused {self.pauses} time(s) for a full disk, {self.paused_seconds:.1f} s in all; "
                   if self.pauses else "")
                + group_commit_phrase(*self.group_commit_ms()))

    def group_commit_ms(self) -> tuple[float, float, int]:
        """(mean, max, count) of the groups that made commits durable, in ms (bench/load.py
        prints them beside PgWriter's)."""
        mean = self.commit_seconds / self.commits_timed * 1000 if self.commits_timed else 0.0
        return mean, self.commit_max * 1000, self.commits_timed

    def close(self) -> None:
        """No more commits: run() drains, fsyncs and returns (a group waiting for room is
        given up: nothing of it was acknowledged)."""
        self._send.close()
        self._closed.set()

    def _write_group(self, group: list[_Commit], sync: bool, now: float) -> None:
        by_file: dict[LogFile, list[bytes]] = {}
        releases = []
        for c in group:
            if c.log is not None:
                if c.data:
                    by_file.setdefault(c.log, []).append(c.data)
                if c.release:
                    releases.append(c.log)
        written: list[tuple[LogFile, int]] = []
        for log, chunks in by_file.items():
            data = b"".join(chunks)
            if log.fd < 0:
                self._open_file(log)
            written.append((log, log.size))
            view = memoryview(data)
            try:
                while view:
                    n = self.disk.write(log.fd, view)
                    view = view[n:]
            except OSError as e:
                if e.errno not in ROOM_ERRNOS:
                    raise
                self._cut_back(written)
                raise DiskFull(e) from e
            log.size += len(data)
            log.last_write = now
            self._open.move_to_end(log)
            self.bytes_written += len(data)
            self._unsynced.add(log)
        if sync:
            t0 = time.perf_counter()
            self._sync()
            took = time.perf_counter() - t0
            self.sync_seconds += took
            self.sync_max = max(self.sync_max, took)
            self.syncs += 1
            self.last_sync = took
        for log in releases:
            self._close_file(log)
        self._close_idle(now)

    def _cut_back(self, written: list[tuple[LogFile, int]]) -> None:
        """No room for the group: each file it wrote to is cut back to its size before the
        group (its last whole record), so that the retry appends whole records to whole
        records and none is in a file twice (docs/ARCHITECTURE.md "Disk full"). A cut that
        fails (it frees room, so it should not) leaves the file unsound: that is fatal."""
        for log, size in written:
            if log.size != size:         # written whole before another file had no room
                self.bytes_written -= log.size - size
                log.size = size
            os.ftruncate(log.fd, size)

    def _open_file(self, log: LogFile) -> None:
        """Open ``log`` for appending, closing the least recently written files first if
        ``max_open`` are open already (a file being opened was closed whole: fsynced
        if it had to be). If the process is out of file handles all the same, every other
        log file is closed and the open tried once more."""
        while len(self._open) >= self.max_open:
            self._close_file(next(iter(self._open)))
        try:
            fd = self.disk.open_append(log.path)
        except OSError as e:
            if e.errno not in (errno.EMFILE, errno.ENFILE) or not self._open:
                raise
            for other in list(self._open):
                self._close_file(other)
            fd = self.disk.open_append(log.path)
        log.fd = fd
        self._open[log] = None
        self.opens += 1
        self.most_open = max(self.most_open, len(self._open))

    def _close_file(self, log: LogFile) -> None:
        """Close ``log``, fsyncing it first if it holds records not yet durable."""
        if log.fd < 0:
            return
        if log in self._unsynced:
            self.disk.fsync(log.fd)
            self.fsyncs += 1
            self._unsynced.discard(log)
        self._open.pop(log, None)
        fd, log.fd = log.fd, -1
        self.disk.close(fd)

    def _close_idle(self, now: float) -> None:
        """Close the files nothing was written to for ``idle`` seconds (oldest first): due
        by the very sum ``_idle_deadline`` waits for. (``now - last_write < idle`` said
        "not yet" at that deadline when the sum rounded down, 0.7 + 0.1 for one, and the
        writer woke again at once for ever: on trio's mock clock, which cannot move while
        a task runs, it spun without end.)"""
        while self._open:
            log = next(iter(self._open))
            if now < log.last_write + self.idle:
                break
            self._close_file(log)

    def _idle_deadline(self) -> float:
        return next(iter(self._open)).last_write + self.idle if self._open else float("inf")

    def _sync(self) -> None:
        dirty = [log for log in self._unsynced if log.fd >= 0]
        self._unsynced.clear()
        if len(dirty) >= SYNCFS_FROM:
            # one syncfs, or without one fsyncs side by side (the disk merges concurrent flushes)
            self.fsyncs += self.disk.sync_all([log.fd for log in dirty])
            return
        for log in dirty:
            self.disk.fsync(log.fd)
            self.fsyncs += 1

    def _close_all(self) -> None:
        """Close every file as it is (no fsync: the writer is failing or cancelled)."""
        for log in list(self._open):
            fd, log.fd = log.fd, -1
            self.disk.close(fd)
        self._open.clear()
        self._unsynced.clear()

    def _finish(self) -> None:
        """At the end: fsync what is left and close every file."""
        self._sync()
        for log in list(self._open):
            self._close_file(log)

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Commit groups until the channel is closed, then fsync what is left and close
        every file. Between groups it wakes to fsync (durability batch) and to close files
        left idle."""
        if self._thread is None:
            await self._run(task_status)
            return
        async with self._thread() as self._run_sync:
            await self._run(task_status)

    async def _run(self, task_status) -> None:
        task_status.started()
        last_sync = trio.current_time()
        try:
            async with self._recv:
                while True:
                    periodic = self.durability == "batch" and bool(self._unsynced)
                    wake = min(last_sync + BATCH_FSYNC if periodic else float("inf"), self._idle_deadline())
                    try:
                        first = await next_commit(self._recv, self._clock, wake)
                    except trio.EndOfChannel:
                        break
                    group = fill_group(self._recv, [first] if first is not None else [])
                    now = trio.current_time()
                    # due by the very sum ``wake`` waited for (``_close_idle`` says why)
                    sync = any(c.sync for c in group) or (periodic and now >= last_sync + BATCH_FSYNC)
                    t0 = time.perf_counter()
                    if not await self._write(group, sync, now):
                        break          # closed while the disk was full: nothing more is written
                    if sync and any(c.data for c in group):
                        took = time.perf_counter() - t0
                        self.commit_seconds += took
                        self.commits_timed += 1
                        self.commit_max = max(self.commit_max, took)
                        self.timings.group_committed(took)
                    if sync:
                        last_sync = now
                        self.timings.synced(self.last_sync)
                    if group:
                        self.groups += 1
                    for c in group:
                        self._ack(c)
        except BaseException as e:
            # cancelled, or the disk failed: no file handle is left behind either way
            if isinstance(e, StorageFailed):
                self.failed = e        # tables answer storage_error until the stop (server/table.py)
            with trio.CancelScope(shield=True):
                await self._run_sync(self._close_all)
            raise
        with trio.CancelScope(shield=True):
            try:
                await self._run_sync(self._finish)
            except OSError as e:
                self.failed = StorageFailed(f"cannot fsync the table logs: {e.strerror or e}")
                raise self.failed from e

    async def _write(self, group: list[_Commit], sync: bool, now: float) -> bool:
        """Write ``group`` (and fsync it if ``sync``), waiting out a full disk: True once
        written, False if the writer was closed meanwhile (the group is given up, nothing
        of it acknowledged). StorageFailed for any other failure."""
        try:
            await self._write_once(group, sync, now)
            return True
        except DiskFull as e:
            full = e
        began = trio.current_time()
        said = began
        self.pauses += 1
        logger.warning("the disk of the table logs is full (%s): play is paused, nothing is acknowledged until there "
                    "is room; retrying, and play resumes by itself (nothing to do but make room)", full)
        self._set_paused(True)
        delay = RETRY_FIRST
        try:
            while True:
                with self._clock.move_on_after(delay):
                    await self._closed.wait()
                if self._closed.is_set():
                    # stopping with no room: what waits was never acknowledged, and nothing
                    # after it may be written (a table's later records would leave a gap)
                    left = len(group) + self._recv.statistics().current_buffer_used
                    logger.warning("stopping while the disk is full: %d commit(s) not written (none of them acknowledged)",
                                left)
                    for c in group:
                        self._ack(c, written=False)
                    while True:
                        try:
                            self._ack(self._recv.receive_nowait(), written=False)
                        except (trio.WouldBlock, trio.EndOfChannel):
                            break
                    return False
                delay = min(delay * 2, RETRY_MAX)
                try:
                    await self._write_once(group, sync, trio.current_time())
                    break
                except DiskFull as e:
                    now = trio.current_time()
                    if now - said >= PAUSE_LOG_EVERY:
                        said = now
                        logger.warning("the disk of the table logs is still full after %.0f s (%s): play stays paused",
                                    now - began, e)
        finally:
            took = trio.current_time() - began
            self.paused_seconds += took
        # (stopped or failed meanwhile, the tables stay paused: they answer storage_error
        # once the writer has failed, and nobody is told play resumes)
        self._set_paused(False)
        logger.warning("the disk of the table logs has room again after %.1f s: play resumes", took)
        return True

    async def _write_once(self, group: list[_Commit], sync: bool, now: float) -> None:
        with trio.CancelScope(shield=True):
            try:
                await self._run_sync(self._write_group, group, sync, now)
            except DiskFull:
                raise
            except OSError as e:
                raise StorageFailed(f"cannot write the table logs: {e.strerror or e}") from e


def _is_a_sink(writer: LogWriter, log: LogFile) -> tuple[LogSink[LogFile], TableLog]:
    """(For mypy: LogWriter and LogFile satisfy server/interfaces.py.)"""
    return writer, log
