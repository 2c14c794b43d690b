"""A table's thin Trio shell: it runs the table's pure core (server/arbiter.py) and does
its I/O (docs/ARCHITECTURE.md, "The arbiter: pure core, thin shell").

Everything that concerns the table (intents, joins, rejoins, spectating, leaving,
disconnects) arrives on one bounded channel, so the order of arrival is the order of
the log. The shell takes what waits as one group, lets the core decide (with trio's
clock as its ``now``), hands the group's records to the log writer, waits until they are
durable, and only then delivers the core's outputs (server/table_send.py): the acting
client its acceptance, every seat its update. It sleeps until the core's next deadline
(a timer, a fair-order release, the end of a finished table's hold). It never awaits a
socket: a frame is written at once when the socket is free, else waits in the
connection's bounded backlog, and a connection with too much waiting is closed.
"""

from __future__ import annotations

import logging
import math
import weakref
from types import ModuleType
from typing import Any

import attrs
import trio

from wildtable.protocol.engine import TableConfig
from wildtable.protocol.logfmt import FORMAT_VERSION, Header, encode_record

from . import diskfull
from .arbiter import Arbiter, fair_cap
from .arbiter_seats import Seat, token_hash
from .arbiter_io import (
    EVICT, EXPIRE, Attach, Facts, Group, IntentReq, JoinReq, LeaveReq, Link, RejoinReq, ReplyReq, SendTo, SpectateReq,
    WakeReq, Whereabouts,
)
from .interfaces import LogSink
from .logwriter import OVER, LogFile
from .metrics import Metrics
from .oplog import about
from .refusals import REFUSALS_LOGGED_BURST, REFUSALS_LOGGED_RATE, RefusalBudget
from .shuffle import secure_permutation
from .store_pg import LeaseLost
from .table_send import Sender
from .timers import FAR, Timers
from .world import TRIO_CLOCK, Clock

log = logging.getLogger("wildtable.server")

INBOX = 1024          # pending requests per table
GROUP = 256           # requests handled per durable group at most

# What other modules and the tests know by these names here.
__all__ = ["INBOX", "GROUP", "Table", "Seat", "RefusalBudget", "secure_permutation", "token_hash", "fair_cap",
           "IntentReq", "JoinReq", "RejoinReq", "SpectateReq", "ReplyReq", "LeaveReq", "WakeReq",
           "REFUSALS_LOGGED_BURST", "REFUSALS_LOGGED_RATE"]


class _InboxClosed(Exception):
    """The table's inbox closed (shutdown) while a commit waited out a full disk."""


@attrs.frozen
class SeatView:
    """A seat as the server's other parts see it: the core's seat with the connection
    that holds it now (or None)."""
    name: str
    token_hash: bytes
    conn: Any


_SEATING = (JoinReq, RejoinReq, SpectateReq)
# what the timers task puts in the inbox at a far deadline (server/timers.py): the arbiter
# looks at its deadline again (handled as a WakeReq where it is taken as a request)
_TICK = (None, WakeReq())
# the facts of a call that reads nothing of the connections: by (paused, failed)
_PLAIN = {(p, f): Facts(p, f) for p in (False, True) for f in (False, True)}


class Table:
    # how it waits: its server's world's (Server.start_table sets it; server/world.py)
    clock: Clock = TRIO_CLOCK
    # who wakes it at a far deadline (Server.start_table sets it; server/timers.py); None:
    # every wait has a cancel scope of its own
    timers: Timers | None = None

    def __init__(self, table_id: str, game: ModuleType, seats: int, settings: dict, state: Any,
                 logfile: Any, writer: LogSink[Any], *, seq: int = 0, name: str = "",
                 seat_records: list | None = None, on_finished=None, chance=secure_permutation,
                 keep_finished: float = math.inf, finished_ago: float = 0.0,
                 on_evict=None, waiting_expiry: float = math.inf, abandoned_expiry: float = math.inf,
                 empty_for: float = 0.0,
                 owner: str | None = None, refusals: RefusalBudget | None = None, on_lobby=None,
                 on_lease_lost=None, metrics: Metrics | None = None, log_format: int = FORMAT_VERSION):
        self.id = table_id
        self.game = game
        self.name = name
        self.settings = settings
        self.owner = owner                     # the address that created it (None: loaded at start)
        self.metrics = metrics if metrics is not None else Metrics()     # the server's counters
        self.logfile = logfile
        self.writer = writer
        self.core = Arbiter(table_id, game, seats, settings, state, seq=seq, name=name,
                            seat_records=seat_records, chance=chance, keep_finished=keep_finished,
                            waiting_expiry=waiting_expiry, abandoned_expiry=abandoned_expiry, refusals=refusals,
                            log_format=log_format)
        # The connection each link the core may name stands for (server/arbiter_io.py Link):
        # those at the table, and those whose requests it holds or answers; the rest are
        # let go after a delivery once it holds twice what is in use (``_prune``).
        self.conns: dict[Link, Any] = {}
        self._prune_at = 64
        self._facts_last = _PLAIN[False, False]
        self._delays: tuple[float, ...] = ()     # each seat's delay bound, as read for the seats ...
        self._delays_of: tuple = ()              # ... of ``_delays_of`` (fair order's facts)
        self._sender = Sender(self.core, logfile, self.conns)
        # (connection, request) pairs: the core gets the request, the shell keeps the connection
        self.inbox_send, self.inbox = trio.open_memory_channel(INBOX)
        self.on_finished = on_finished
        # A finished table is held for keep_finished, a waiting one nobody is at expires
        # after waiting_expiry, a game in play nobody is at after abandoned_expiry (the
        # core's deadlines); then the arbiter ends and
        # on_evict lets the server forget it (and archive its log), so a long-running
        # server neither grows nor lists every game it ever hosted.
        self.on_evict = on_evict
        self._finished_ago = finished_ago      # a table loaded finished: how long ago (log's mtime)
        self._empty_for = empty_for            # a table loaded unfinished: how long nobody was at it (log's mtime)
        # A full disk (docs/ARCHITECTURE.md "Disk full"): when the pause began here
        self._paused_at: float | None = None
        if isinstance(logfile, LogFile):
            logfile.while_paused = weakref.WeakMethod(self._serve_paused)   # the file must not hold the table
        self._released = self.core.finished   # a finished table's log file is closed (or closing), and stays so
        self._closed = self.core.finished     # ... and that close has returned (``readonly``)
        # on_lobby(table) tells the server when what list_tables shows of it changed (not for seq alone)
        self.on_lobby = on_lobby
        # On a store (server/store_pg.py) this node may lose the table's lease: a commit
        # fenced out (LeaseLost) or the renewal not returning it. The arbiter then stops at
        # once, acknowledging nothing more, and on_lease_lost(table) lets the server forget
        # it and send its connections where it went.
        self.on_lease_lost = on_lease_lost
        self.lease_lost = False
        self._run_scope = trio.CancelScope()
        self._remind_at = math.inf             # the earliest wake-up asked of the timers task
        # what a connection keeps of the table it last sent a request to (its route,
        # server/connection.py): made once, so each request only assigns it
        self.ref = weakref.ref(self)

    # ------------------------------------------------------------ creation / recovery
    @classmethod
    def create(cls, table_id: str, game: ModuleType, seats: int, settings: dict, new_log, writer: LogSink[Any],
               created: str, name: str = "", **kw) -> "Table":
        """A new table; ``new_log(header_record)`` makes its log durably and returns the
        writer's handle (a LogFile, or the store's PgLog)."""
        state = game.new_table(TableConfig(game.NAME, seats, settings))   # may raise IllegalAction
        header = Header(FORMAT_VERSION, game.NAME, table_id, seats, settings, rules=game.RULES_VERSION,
                        created=created)
        logfile = new_log(encode_record(header))
        return cls(table_id, game, seats, settings, state, logfile, writer, name=name, **kw)

    # ------------------------------------------------------------ the core's facts
    @property
    def state(self) -> Any:
        return self.core.state

    @property
    def seq(self) -> int:
        return self.core.seq

    @property
    def seats(self) -> list[SeatView]:
        conns = self.conns
        return [SeatView(s.name, s.token_hash, None if s.link is None else conns.get(s.link)) for s in self.core.seats]

    @property
    def spectators(self) -> set:
        """The connections watching it."""
        return {self.conns[link] for link in self.core.spectators}

    @property
    def finished(self) -> bool:
        return self.core.finished

    @property
    def started(self) -> bool:
        return self.core.started

    @property
    def counts_against_owner(self) -> bool:
        """Whether it counts against its creator's --max-waiting-per-address: waiting for
        players, or a game in play that nobody is at (one address must not hold many
        tables by leaving the games it started: docs/ARCHITECTURE.md "Bounded resources")."""
        core = self.core
        return not core.finished and (not core.started or not core.at)

    @property
    def fair(self) -> float:
        return self.core.fair

    @property
    def accepted(self) -> int:
        return self.core.accepted

    @property
    def rejected(self) -> int:
        return self.core.rejected

    @property
    def readonly(self) -> bool:
        """A finished table whose log is closed for good (loaded finished at start, or
        released when its game ended): it answers spectate, rejoin and list_tables."""
        return self.core.finished and self._closed

    def info(self) -> dict:
        return self.core.info()

    def list_entry(self) -> tuple[int, bytes]:
        return self.core.list_entry()

    def players(self) -> tuple[dict, ...]:
        return self.core.players()

    def empty_since(self) -> float | None:
        """Since when (trio's clock) nobody is at this table; None while someone is."""
        return self.core.empty_since(trio.current_time())

    # ------------------------------------------------------------ the arbiter
    async def submit(self, conn, req) -> None:
        """Called by connection reader tasks with the connection and its request (the
        request names it by its ``link``). Waits if the table's inbox is full (bounded);
        otherwise does not yield (the reader yields at its next receive anyway)."""
        try:
            self.inbox_send.send_nowait((conn, req))
        except trio.WouldBlock:
            await self.inbox_send.send((conn, req))

    def submit_nowait(self, conn, req) -> bool:
        try:
            self.inbox_send.send_nowait((conn, req))
            return True
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            return False

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        with self._run_scope:
            try:
                await self._arbiter()
            except _InboxClosed:
                pass        # stopping while the disk is full: its last group was never acknowledged
        if self.lease_lost and self.on_lease_lost is not None:
            self.on_lease_lost(self)

    def lose_lease(self) -> None:
        """This node no longer holds the table's lease (server/store_pg.py): the arbiter
        stops where it is; nothing after the last committed group is acknowledged."""
        if not self.lease_lost:
            self.lease_lost = True
            self._run_scope.cancel()

    async def _arbiter(self) -> None:
        core = self.core
        await self._commit(self._took(core.start(trio.current_time(), self._finished_ago, self._empty_for)))
        # trio.current_time() is four calls deep; its run's clock is the same for the run
        clock = trio.lowlevel.current_clock().current_time
        async with self.inbox:
            while True:
                now = clock()       # read again after every wait below, and only then
                wake, timeout = core.wake(now, self._facts())
                item = None
                # Requests that wait are taken first even when the deadline has passed: an
                # intent that arrived before it goes before the timer's move (the arbiter may
                # have been busy committing at the deadline), one that came after, after it
                # (the core); and a table is never forgotten with a request waiting for it.
                if core.fair and len(core.hold) >= INBOX:
                    # as many held as the inbox holds: take no more until some are
                    # released (senders wait on the full inbox, as at any table)
                    await self.clock.sleep_until(wake)
                    now = clock()
                elif now < wake or self._waiting():
                    try:
                        # under load a request is usually waiting (it came during the
                        # last commit): take it without a cancel scope or a trip through
                        # the scheduler (the arbiter yields at every commit of records,
                        # and whenever its inbox is empty)
                        item = self.inbox.receive_nowait()
                    except trio.WouldBlock:
                        timers = self.timers
                        if timers is not None and wake - now >= FAR:
                            # a far deadline (the idle timeout, during play): no cancel
                            # scope of its own; the server's timers task wakes it then
                            # (server/timers.py)
                            if wake < self._remind_at:
                                self._remind_at = wake
                                timers.remind(self, wake)
                            try:
                                item = await self.inbox.receive()
                            except trio.EndOfChannel:
                                return
                            now = clock()
                            if item is _TICK:
                                if now < wake:
                                    continue        # a reminder for a deadline since moved
                                item = None
                        else:
                            with self.clock.move_on_at(wake):
                                try:
                                    item = await self.inbox.receive()
                                except trio.EndOfChannel:
                                    return
                            now = clock()
                    except trio.EndOfChannel:
                        return
                    if item is _TICK:
                        continue            # (taken at once: its deadline is looked at again)
                if item is None and (timeout is EVICT or timeout is EXPIRE) and not core.hold:
                    if not core.audience():
                        # the last records may still wait in the log writer's queue, or be
                        # unsynced (durability off or batch; refusals): they are written and
                        # fsynced and the file closed before the log is moved
                        await self.writer.release(self.logfile)
                        if self._waiting():
                            continue    # requests came meanwhile: them first, then look again
                        if timeout is EXPIRE and core.started:
                            log.info("table %s given up: nobody was at its game in play for %g s",
                                     self.id, core.abandoned_expiry, extra=about(table=self.id))
                        elif timeout is EXPIRE:
                            log.info("table %s expired: nobody was at it for %g s while it waited for players",
                                     self.id, core.waiting_expiry, extra=about(table=self.id))
                        if self.on_evict is not None:
                            self.on_evict(self)
                        return          # the inbox closes: later requests get no_such_table
                    # someone is still at it: look again a little later
                    core.hold_again(clock())
                    continue
                if item is None:
                    g = core.tick(now, self._facts())
                else:
                    batch = self._batch(item)
                    g = core.receive(batch, now, self._facts(batch))
                await self._commit(self._took(g))

    def remind_due(self, at: float) -> None:
        """The timers task's call (server/timers.py): the deadline this table asked to be
        woken at has come; unless it asked for an earlier one since, it is woken."""
        if at == self._remind_at:
            self._remind_at = math.inf
            try:
                self.inbox_send.send_nowait(_TICK)
            except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
                pass        # a full inbox: the arbiter looks at its deadline after it anyway; closed: it ends

    def _batch(self, item) -> list:
        """The request of ``item`` and those waiting after it: one group (at most GROUP);
        their connections are kept for what the core says to their links."""
        conns = self.conns
        conn, req = item
        if conn is not None:
            conns[req.link] = conn
        batch = [req]
        while len(batch) < GROUP:
            try:
                conn, req = self.inbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            if conn is not None:
                conns[req.link] = conn
            batch.append(req)
        return batch

    def _waiting(self) -> int:
        return self.inbox.statistics().current_buffer_used

    # ------------------------------------------------------------ the core's inputs and moves
    def _facts(self, batch: list = ()) -> Facts:  # type: ignore[assignment]
        """What the core reads of the world outside, read now (server/arbiter_io.py Facts):
        the log's state, each seat's delay bound (fair order), and where the connections
        are whose join, rejoin or spectate this call may handle."""
        w = self.writer
        paused, failed = bool(w.paused), w.failed is not None
        core = self.core
        asking = [r.link for r in batch if type(r) in _SEATING]
        if core.kept or core.hold:
            asking += core.asking()
        if not core.fair and not asking:
            return _PLAIN[paused, failed]
        conns = self.conns
        if core.fair:
            # read again only when a seat changed hands or a connection's delay moved (at a
            # pong, every few seconds: ``delays_moved``); asked twice an intent
            seats = tuple(core.seats)
            if seats != self._delays_of:
                self._delays = tuple([0.0 if s.link is None else conns[s.link].delay for s in seats])
                self._delays_of = seats
            delays = self._delays
        else:
            delays = ()
        if not asking:
            # the delays change at a pong (every few seconds): the last facts, most calls
            last = self._facts_last
            if last.delays == delays and last.paused is paused and last.failed is failed:
                return last
            last = self._facts_last = Facts(paused, failed, delays)
            return last
        return Facts(paused, failed, delays, {link: self._whereabouts(conns[link]) for link in asking})

    def delays_moved(self) -> None:
        """A connection at this table has a new delay bound (server/connection.py): the
        next facts read the seats' delays again."""
        self._delays_of = ()

    def _whereabouts(self, conn) -> Whereabouts:
        t = conn.table
        return Whereabouts(conn.closed, t.id if t is not None and t is not self else None)

    def _took(self, g: Group) -> Group:
        """Do at once what the core decided of where connections are (before the group is
        durable: server/arbiter_io.py Attach), and add to the server's counters."""
        conns = self.conns
        for move in g.moves:
            conn = conns[move.link]
            if type(move) is Attach:
                conn.attach(self, move.seat)
            else:
                conn.detach(self)
        metrics = self.metrics
        for code in g.refused:
            metrics.refused(code)
        metrics.intents_accepted += g.accepted
        return g

    def forget(self, conn) -> None:
        """Last resort, when the table's inbox stayed full for 5 s after ``conn`` closed
        (server/connection.py): the table forgets it without a request."""
        self.core.forget(conn.link)
        conn.detach(self)

    def _prune(self) -> None:
        """Let go of the connections the core can no longer name (after a delivery: nothing
        is owed to them), once there are twice as many as it may."""
        conns = self.conns
        if len(conns) <= self._prune_at:
            return
        core = self.core
        keep = set(core.at)
        keep.update(r.link for r in core.hold.waiting() + core.kept)
        for link in [k for k in conns if k not in keep]:
            del conns[link]
        self._prune_at = max(64, 2 * len(conns))

    async def _commit(self, g: Group) -> None:
        """Make the group durable, then deliver what it produced, in order."""
        if g.ended and self.on_finished is not None:
            self.on_finished(self)
        records = g.records
        if records:
            if len(records) > g.lazy:
                try:
                    await self.writer.commit(self.logfile, b"".join(records))
                except LeaseLost:
                    # fenced out: nothing of this group was written, so nobody hears of it
                    self.metrics.fenced_commits += 1
                    self.lose_lease()
                    await trio.lowlevel.checkpoint()     # the cancelled scope ends the arbiter here
            else:
                # only refusals: nobody is told anything that depends on them, so they
                # need no fsync of their own (they are durable with the file's next one)
                await self.writer.append(self.logfile, b"".join(records))
        self._sender.send(g.out, trio.current_time())
        self._prune()
        if self.core.take_lobby_change() and self.on_lobby is not None:
            self.on_lobby(self)
        if self.core.finished and not self._released:
            # nothing more is written to a finished game's log: its file is closed now
            self._released = True
            await self.writer.release(self.logfile, OVER)
            # only now is it closed for good: on a store, its row is marked finished (the
            # replays listing reads that), not merely asked to be
            self._closed = True
        while self.core.kept and not self.writer.paused:
            # what came while the disk was full and waited for play to resume
            await self._commit(self._took(self.core.handle_kept(trio.current_time(), self._facts())))

    # ------------------------------------------------------------ a full disk
    # docs/ARCHITECTURE.md "Disk full": the writer waits out a group it had no room for;
    # meanwhile the table writes nothing and answers what comes (server/diskfull.py).
    async def _serve_paused(self) -> None:
        """While a commit of this table waits for room: answer the inbox (the log writer
        cancels this when the commit is written or the pause ends)."""
        self.storage_paused()
        while True:
            try:
                conn, req = await self.inbox.receive()
            except trio.EndOfChannel:
                raise _InboxClosed() from None
            if conn is not None:
                self.conns[req.link] = conn
            g = Group()
            if self.writer.paused or self.writer.failed is not None:
                self.core.answer_paused(req, g, self._facts())
            else:
                self.core.kept.append(req)      # taken as the pause ended: handled right after it
            self._sender.send(g.out, trio.current_time())

    def storage_paused(self) -> None:
        """The disk is full: timers stop, and everyone at the table is told (once a pause)."""
        if self._paused_at is None:
            self._paused_at = trio.current_time()
            if not self.core.finished:
                self._notify(diskfull.paused_notice(self.id))

    def storage_resumed(self) -> None:
        """The disk has room again: timers go on with the time they had left, everyone is
        told, and the arbiter looks at its deadline again."""
        if self._paused_at is not None:
            self.core.resume_timers(trio.current_time() - self._paused_at)
            self._paused_at = None
            if not self.core.finished:
                self._notify(diskfull.resumed_notice(self.id))
        elif not self.core.kept:
            return
        self.submit_nowait(None, WakeReq())       # a full inbox wakes it anyway

    def _notify(self, message) -> None:
        self._sender.send([SendTo(c, message) for c in self.core.audience()], trio.current_time())
