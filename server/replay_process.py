"""The replay viewer's process: where finished games' logs are folded into timelines, kept,
and each step's answer is made into JSON (server/replays.py decides what may be served).

Not a thread of the server: a thread that folds a log holds Python's GIL for its whole
switch interval (5 ms) each time it takes it, and the server's thread, which gives the
GIL up at every socket call, waits that long each time to take it back, so two clients
asking replay step after step slowed every table (bench/replay_flood.py; bench/README.md,
"Replays in a process of their own"). One process, spawned at the first request (not
forked: the server has threads), serves one request at a time and keeps the timelines
it built (``KEPT``, bounded by the bytes of their logs), each under its log's identity:
a file's device, inode, size, modification and change times, from the descriptor it
opened, so a log changed or replaced since is read again, never answered from a stale
timeline; a store's or a given log's stamp (server/replays.py ``Found``).

The server's side (``ReplayProcess``) bounds the waiting (REPLAY_WAITING, of them
REPLAY_PER_ADDRESS for one address, then 503), cuts
an answer off after REPLAY_TIMEOUT (503; the process is ended with the work it was doing,
so the next request starts a new one), and a process that died costs the answer it was
working on, not the next: a dead one is seen before a request is sent, and replaced. One
that dies while idle (the OOM killer, an operator's ``kill``) is reaped at once, not left
a zombie until the next request: a task waits for its end (``_reap_when_ended``).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import OrderedDict
from typing import Any, Callable

import attrs
import trio

from . import collector, replay_find
from .forwarded import AddressCounts
from .replay_fold import MAX_LOG_BYTES, ReplayLog, ReplayRefused, json_bytes, names_in_head, query_int, open_log, refuse_too_big

REPLAY_TIMEOUT = 8.0        # seconds an answer may take, waiting included (the listener cuts the request off at 10)
REPLAY_WAITING = 16         # requests in line for the process (the one under way included); more: 503
REPLAY_PER_ADDRESS = 4      # of those, for one IP address (a quarter: four addresses cannot fill the line)
CACHE_BYTES = 16 * 1024 * 1024      # logs whose timelines are kept, in bytes of log (a timeline is ~1.4x)


@attrs.frozen
class FromFile:
    """A log the replay process opens itself, as server/replay_fold.py's ``open_regular`` does:
    ``held``: of a table the server still holds (410 if it is not there, else 404)."""
    path: str
    held: bool = False


@attrs.frozen
class Given:
    """A log whose bytes the server passes over when the process holds no timeline of it
    under ``stamp`` (a store's records: its size and count; `replay --web`'s file)."""
    stamp: tuple


@attrs.frozen
class Ask:
    """One step of one finished game, as the viewer asked for it (its query, parsed)."""
    table: str
    log: FromFile | Given
    query: dict
    lobby: bool
    finished_only: bool


# ------------------------------------------------------------------ in the replay process

class Kept:
    """The timelines built, each under its log's identity; the least recently asked for go
    first once their logs are over ``limit`` bytes."""

    def __init__(self, limit: int = CACHE_BYTES):
        self.limit = limit
        self.logs: OrderedDict[str, tuple[tuple, ReplayLog]] = OrderedDict()

    def get(self, table: str, key: tuple) -> ReplayLog | None:
        kept = self.logs.get(table)
        if kept is None or kept[0] != key:
            return None
        self.logs.move_to_end(table)
        return kept[1]

    def put(self, table: str, key: tuple, log: ReplayLog) -> None:
        self.logs[table] = (key, log)
        self.logs.move_to_end(table)
        total = sum(v[1].size for v in self.logs.values())
        while total > self.limit and len(self.logs) > 1:
            _, (_, old) = self.logs.popitem(last=False)
            total -= old.size


KEPT = Kept()           # the replay process's own (the server's process never fills it)


def _from_file(ask: Ask, ref: FromFile) -> ReplayLog:
    tid = ask.table
    with open_log(tid, ref.path, ref.held) as (f, st):
        key = ("file", ref.path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        log = KEPT.get(tid, key)
        if log is not None:
            return log
        refuse_too_big(tid, st.st_size, "`wildtable replay` reads it from the data dir")
        data = f.read(MAX_LOG_BYTES)
    log = ReplayLog(tid, data, finished_only=ask.finished_only)
    KEPT.put(tid, key, log)
    return log


def step_json(ask: Ask, data: bytes | None = None) -> bytes | None:
    """The JSON of the step ``ask`` wants; None if its log is Given and not kept: ask again
    with its bytes."""
    if isinstance(ask.log, FromFile):
        log = _from_file(ask, ask.log)
    else:
        key = ("given",) + tuple(ask.log.stamp)
        found = KEPT.get(ask.table, key)
        if found is None:
            if data is None:
                return None
            found = ReplayLog(ask.table, data, finished_only=ask.finished_only)
            KEPT.put(ask.table, key, found)
        log = found
    q = ask.query
    perspective = log.perspective((q.get("view") or [None])[-1])
    seq = query_int(q, "seq")
    step = log.step_of_seq(seq) if seq is not None else (query_int(q, "step") or 0)
    if q.get("find") or q.get("only"):        # search and filters (docs/PROTOCOL.md)
        return json_bytes(replay_find.answer(log, step, perspective, ask.lobby, q))
    return json_bytes(log.answer(step, perspective, ask.lobby))


def listing_json(found: list[tuple[str, bytes, bool, float]], omitted: int, lobby: bool) -> bytes:
    """/replays.json from (table id, the first bytes of its log, held, when written) of each
    game listed."""
    games = []
    for tid, head, held, written in found:
        facts = names_in_head(head)
        if facts is None:
            continue
        game, seats, names = facts
        games.append({"table": tid, "game": game, "seats": seats, "players": names, "held": held,
                      "finished": round(written) if written else None})
    return json_bytes({"replays": games, "omitted": omitted, "lobby": lobby})


def child_main(conn: Any) -> None:
    """The replay process: ``(fn, args)`` in, ``("ok", fn(*args))`` or ``("raised", error)``
    out, one at a time, until the server's end of the pipe closes. Its cyclic collector
    runs as the server's does (server/collector.py): a full pass only once the heap has
    grown by as much as was alive after the last, between two requests; its young passes
    over the kept timelines made each answer cost 44 ms of CPU against 26 (a Run Wild
    game of 40 rounds, bench/README.md "Replays in a process of their own")."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # Ctrl-C is the server's, which ends this process
    base = collector.start()
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple = ("ok", fn(*args))
        except Exception as e:
            reply = ("raised", e)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as e:      # an error that does not pickle: said in words
            conn.send(("raised", RuntimeError(f"{type(reply[1]).__name__}: {reply[1]} ({e})")))
        del reply
        if collector.due(collector.allocated(), collector.resident_bytes(), base):
            base = collector.full_pass()[0]


# ------------------------------------------------------------------ in the server's process

def _exchange(conn: Any, fn: Callable, args: tuple) -> tuple:
    """In a worker thread, which holds no GIL while it waits: one call of the process."""
    conn.send((fn, args))
    return conn.recv()


@attrs.frozen
class _Child:
    process: Any
    conn: Any


class ReplayProcess:
    """The server's handle on its replay process: started at the first call, one call at a
    time (``serve``: a request's turn, bounded and timed), ended by ``close``."""

    def __init__(self, *, timeout: float = REPLAY_TIMEOUT, waiting: int = REPLAY_WAITING,
                 per_address: int = REPLAY_PER_ADDRESS):
        self.timeout = timeout
        self.max_waiting = waiting
        self.per_address = per_address
        self.held = AddressCounts()                 # requests in line, by the address that asked
        self.turn = trio.CapacityLimiter(1)         # one request in the process at a time
        self.threads = trio.CapacityLimiter(4)      # its lookups and calls (a cut-off one ends soon)
        self._child: _Child | None = None

    @property
    def pid(self) -> int | None:
        """The replay process's, while there is one."""
        return None if self._child is None else self._child.process.pid

    async def serve(self, work: Callable[[], Any], address: str | None = None) -> Any:
        """``await work()`` in a turn of its own (it may call the process, ``call``, and do
        lookups, ``in_thread``): 503 if REPLAY_WAITING wait already, or REPLAY_PER_ADDRESS
        of ``address``'s (the asker's, as the per-address caps key it; None: none known),
        or if it is not done within ``timeout`` (a call under way is given up with the
        process)."""
        if self.held.total >= self.max_waiting:
            raise ReplayRefused(503, "this server is working out many replay steps just now; try again in a moment")
        if self.held.of(address) >= self.per_address:         # (no address known: none counted)
            raise ReplayRefused(503, f"{self.per_address} replay requests from your address are being worked out "
                                     "already, the most one address may have at once; ask again once one is answered")
        self.held.take(address)
        try:
            with trio.move_on_after(self.timeout):
                async with self.turn:
                    return await work()
            raise ReplayRefused(503, f"this replay step took over {self.timeout:g} s to work out (the server is busy, "
                                     "or the log is long), so it was given up; try again in a moment")
        finally:
            self.held.give(address)

    async def in_thread(self, fn: Callable, *args: Any) -> Any:
        """``fn(*args)`` in a worker thread: a lookup (a file's status, the store), no work."""
        return await trio.to_thread.run_sync(fn, *args, limiter=self.threads, abandon_on_cancel=True)

    async def call(self, fn: Callable, *args: Any) -> Any:
        """``fn(*args)`` in the replay process (``fn`` a module-level function: it is
        pickled by name); its value, or what it raised. A process that ends meanwhile
        costs this call (503); the next starts a new one."""
        child = self._started()
        try:
            tag, value = await trio.to_thread.run_sync(_exchange, child.conn, fn, args, limiter=self.threads,
                                                       abandon_on_cancel=True)
        except (EOFError, OSError):
            self._end(child)
            raise ReplayRefused(503, "the replay process ended while it worked this out (it is started again); "
                                     "try again") from None
        except BaseException:       # cut off (the timeout): its work is dropped with the process
            self._end(child)
            raise
        if tag == "raised":
            raise value
        return value

    def _started(self) -> _Child:
        child = self._child
        if child is not None and not child.process.is_alive():     # ended since its last call
            self._end(child)
            child = None
        if child is None:
            ctx = multiprocessing.get_context("spawn")
            mine, theirs = ctx.Pipe()
            process = ctx.Process(target=child_main, args=(theirs,), name="wildtable-replays", daemon=True)
            process.start()
            theirs.close()
            child = self._child = _Child(process, mine)
            trio.lowlevel.spawn_system_task(self._reap_when_ended, child, name="wildtable-replays reaper")
        return child

    async def _reap_when_ended(self, child: _Child) -> None:
        """Reap ``child`` as soon as it ends, however it ends: killed while idle (the OOM
        killer, an operator's ``kill``) it would be a zombie until the next request, which
        starts a new one. The process's sentinel (a pipe only it holds the writing end of)
        reads as soon as it exits. One such task a process, ended with it (or with the
        server's run): a system task of Trio's, as the handle has no nursery and the task
        outlives the request that started the process."""
        await trio.lowlevel.wait_readable(child.process.sentinel)
        self._end(child)

    def _end(self, child: _Child) -> None:
        """Kill ``child`` and reap it (in a thread of Trio's: SIGKILL ends it at once); its
        pipe closes once nothing uses it."""
        if self._child is child:
            self._child = None
        if child.process.is_alive():
            child.process.kill()
        trio.lowlevel.start_thread_soon(child.process.join, lambda _: None)

    def close(self) -> None:
        """The server stopped: its replay process ends (work under way is not waited for)."""
        child, self._child = self._child, None
        if child is not None:
            child.process.kill()
            child.process.join(5)
