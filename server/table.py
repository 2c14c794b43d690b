"""A table: its arbiter task is the only code that touches the table's state.

Everything that concerns the table (intents, joins, rejoins, spectating, leaving,
disconnects) arrives on one bounded channel, so the order of arrival is the order of
the log. The arbiter validates with the pure engine, hands the records of a whole group
to the log writer, waits until they are durable, and only then tells anyone: the
acting client its acceptance, every seat its update. It never awaits a socket: a frame
is written at once when the socket is free, else waits in the connection's bounded
backlog, and a connection with too much waiting is closed.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import logging
import math
import os
import secrets
import weakref
from types import ModuleType
from typing import Any

import attrs
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.codec import packb, MAX_STR, to_data
from wildtable.protocol.engine import ChanceOutcome, ChanceRequest, TableConfig, state_hash
from wildtable.protocol.errors import IllegalAction, ProtocolError
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, HASH_EVERY, ActionAccepted, ChanceRecorded, Header, IntentRejected,
    SeatClaimed, StateHashed, encode_record,
)

from . import diskfull, fairorder
from .delivery import UpdateFrames
from .interfaces import LogSink
from .logwriter import OVER, LogFile
from .metrics import Metrics
from .store_pg import LeaseLost

log = logging.getLogger("wildtable.server")

MAX_LOGGED_REJECTED = 512   # bytes of a refused action kept in the log; a bigger one is summarised
INBOX = 1024          # pending requests per table
GROUP = 256           # requests handled per durable group at most
REFUSALS_LOGGED_BURST = 10    # refused intents one connection may have logged at once ...
REFUSALS_LOGGED_RATE = 1.0    # ... and then per second; the rest are answered and counted, not logged


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def secure_permutation(size: int) -> tuple[int, ...]:
    """A uniformly random permutation from the operating system's secure source.

    Fisher-Yates over 32-bit draws taken from one ``os.urandom`` read (SystemRandom's
    shuffle makes a syscall per card, 1.5% of the flat-out profile). Each choice among
    ``n`` is a draw below the largest multiple of ``n`` under 2**32, modulo ``n``: draws
    above it are thrown away, so every choice is exactly uniform."""
    p = list(range(size))
    draws = _draws(size)
    for i in range(size - 1, 0, -1):
        n = i + 1
        limit = _SPAN - _SPAN % n
        v = next(draws)
        while v >= limit:
            v = next(draws)
        j = v % n
        p[i], p[j] = p[j], p[i]
    return tuple(p)


_SPAN = 1 << 32


def _draws(size: int):
    """Uniform 32-bit draws from the OS's secure source, read in blocks."""
    while True:
        yield from memoryview(os.urandom(4 * size + 64)).cast("I")


class RefusalBudget:
    """How many refused intents each connection may have written to the logs: a token
    bucket per connection (``burst`` at once, then ``rate`` a second), shared by every
    table, so that a connection cannot grow the logs faster than that however it hops
    between tables. A refusal over the budget is answered as usual; it is only counted."""

    def __init__(self, rate: float = REFUSALS_LOGGED_RATE, burst: int = REFUSALS_LOGGED_BURST):
        self.rate, self.burst = rate, burst
        self._buckets: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.logged = 0
        self.unlogged = 0

    def take(self, conn) -> bool:
        """True if a refusal of ``conn``'s may be logged now (and count it)."""
        now = trio.current_time()
        b = self._buckets.get(conn)
        if b is None:
            b = self._buckets[conn] = [float(self.burst), now, False]
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
            peer = getattr(conn, "peer", None)
            log.info("refused intents from %s (%s) beyond %d at once and %g a second are counted, not logged",
                     getattr(peer, "remote", "?"), getattr(conn, "name", None), self.burst, self.rate)
        return False


@attrs.define(eq=False)
class Seat:
    name: str = ""
    token_hash: bytes = b""      # empty: free (never claimed, or released by leave)
    conn: Any = None             # the Connection holding it now, if any


# Requests the arbiter handles, in arrival order.
@attrs.frozen
class IntentReq:
    conn: Any
    intent: m.Intent
    recv: float                  # wall clock, logged as information only
    at: float                    # trio's clock when read: ordered against the table's timer
    reach: fairorder.Reach = fairorder.Reach()   # the connection's delay bounds when it was read


@attrs.frozen
class JoinReq:
    conn: Any
    seat: int | None
    name: str


@attrs.frozen
class RejoinReq:
    conn: Any
    seat: int
    token: str


@attrs.frozen
class SpectateReq:
    conn: Any


@attrs.frozen
class ReplyReq:
    """An answer the connection made itself (an intent dropped by the rate limit, or sent
    with no seat), sent through the table the connection last wrote to so that it reaches
    the client after the answers to that connection's earlier intents."""
    conn: Any
    message: Any


@attrs.frozen
class LeaveReq:
    conn: Any
    notify: bool = True          # False when the connection is already gone


@attrs.frozen
class WakeReq:
    """No request: the arbiter looks at its deadline again (a pause of the disk ended)."""
    conn: Any = None


class _InboxClosed(Exception):
    """The table's inbox closed (shutdown) while a commit waited out a full disk."""


# the kind of each request, as server/diskfull.py answers it while the disk is full
_KINDS = {IntentReq: "intent", JoinReq: "join", RejoinReq: "rejoin", SpectateReq: "spectate",
          ReplyReq: "reply", LeaveReq: "leave", WakeReq: "wake"}


_EVICT = object()      # the deadline of a finished table: time to forget it
_EXPIRE = object()     # the deadline of a waiting table nobody is at: time to forget it
_STATUS_RANK = {"waiting": 0, "playing": 1, "over": 2}    # list_tables keeps waiting tables first


def fair_cap(game: ModuleType, settings: dict) -> float:
    """The most delay (s) a table makes up for: setting ``fair_ms`` of a game that has it
    (Run Wild), else 0 (arrival order)."""
    defaults = game.default_settings()
    if "fair_ms" not in defaults:
        return 0.0
    ms = settings.get("fair_ms", defaults["fair_ms"])
    return ms / 1000.0 if type(ms) in (int, float) and ms > 0 else 0.0


def _put(frames: dict, conn, data: bytes) -> None:
    got = frames.get(conn)
    if got is None:
        frames[conn] = [data]
    else:
        got.append(data)


class Table:
    def __init__(self, table_id: str, game: ModuleType, seats: int, settings: dict, state: Any,
                 logfile: Any, writer: LogSink[Any], *, seq: int = 0, name: str = "",
                 seat_records: list | None = None, on_finished=None, chance=secure_permutation,
                 keep_finished: float = math.inf, finished_ago: float = 0.0,
                 on_evict=None, waiting_expiry: float = math.inf, empty_for: float = 0.0,
                 owner: str | None = None, refusals: RefusalBudget | None = None, on_lobby=None,
                 on_lease_lost=None, metrics: Metrics | None = None):
        self.id = table_id
        self.metrics = metrics if metrics is not None else Metrics()     # the server's counters
        self.game = game
        self.name = name
        self.settings = settings
        self.state = state
        self.seq = seq
        self.logfile = logfile
        self.writer = writer
        self.seats = [Seat() for _ in range(seats)]
        for r in seat_records or ():
            self.seats[r.seat] = Seat(r.name, r.token_hash)
        self.spectators: set = set()
        self.inbox_send, self.inbox = trio.open_memory_channel(INBOX)
        self.finished = game.outcome(state).over
        self.on_finished = on_finished
        # A finished table is held (listed, watchable) for keep_finished seconds, then for
        # as long as anyone is still at it; then its arbiter ends and on_evict lets the
        # server forget it (and archive its log), so a long-running server neither grows
        # nor lists every game it ever hosted.
        self.keep_finished = keep_finished
        self._finished_ago = finished_ago      # a table loaded finished: how long ago (log's mtime)
        self._evict_at = math.inf
        self.on_evict = on_evict
        # A table still waiting for players that nobody is at (no seat holder connected,
        # no spectator) for waiting_expiry seconds is forgotten the same way (its log goes
        # to expired/): tables cannot be squatted for ever.
        self.waiting_expiry = waiting_expiry
        self._empty_for = empty_for            # a table loaded waiting: how long nobody was at it (log's mtime)
        self._empty_since: float | None = None
        self.owner = owner                     # the address that created it (None: loaded at start)
        self.refusals = refusals               # the budget of refused intents logged per connection
        # A full disk (docs/ARCHITECTURE.md "Disk full"): requests that came meanwhile and
        # wait for play to resume (server/diskfull.py), and when the pause began here
        self._kept: list = []
        self._paused_at: float | None = None
        if isinstance(logfile, LogFile):
            logfile.while_paused = weakref.WeakMethod(self._serve_paused)   # the file must not hold the table
        self._lazy = 0                         # records in this group that need no fsync (refusals)
        self._released = self.finished        # a finished table's log file is closed, and stays so
        # list_tables: this table's entry, encoded once per change; on_lobby(table) tells
        # the server when what list_tables shows of it changed (not for seq alone)
        self.on_lobby = on_lobby
        self._lobby_changed = False
        self._entry: tuple | None = None
        # delivery: patches against what each connection received last (server/delivery.py)
        self._updates = UpdateFrames(game)
        self.chance = chance           # size -> permutation; the OS's secure source unless a test injects one
        # On a store (server/store_pg.py) this node may lose the table's lease: a commit
        # fenced out (LeaseLost) or the renewal not returning it. The arbiter then stops at
        # once, acknowledging nothing more, and on_lease_lost(table) lets the server forget
        # it and send its connections where it went.
        self.on_lease_lost = on_lease_lost
        self.lease_lost = False
        self._run_scope = trio.CancelScope()
        self.accepted = 0
        self.rejected = 0
        self._last_activity: float | None = None
        self._since_hash = 0
        # Fair order (setting fair_ms > 0): requests wait in a heap by estimated send time,
        # (key, n, request, timing), until key + the table's hold (see _release)
        self.fair = fair_cap(game, settings)
        self._held: list = []
        self._held_n = 0
        self._held_max = -math.inf             # the largest key held
        self._last_key: dict = {}              # connection -> key of its latest held request
        self._touched = fairorder.Touched()    # since which seq what an intent needs is there (causality)

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

    @property
    def readonly(self) -> bool:
        """A finished table whose log is closed for good (loaded finished at start, or
        released when its game ended): it answers spectate, rejoin and list_tables."""
        return self.finished and self._released

    # ------------------------------------------------------------ lobby facts
    @property
    def started(self) -> bool:
        """Play (dealing included) begins once every seat has been claimed. A seat released
        by `leave` is not claimed (its token is void), even if it keeps its player's name."""
        return self.seq > 0 or all(s.token_hash for s in self.seats)

    def _shown(self, s: Seat) -> str | None:
        """The name list_tables and `players` show for a seat: a seat released before the
        deal is simply free; one released mid-game keeps its name (and its cards)."""
        return s.name if s.name and (s.token_hash or self.seq > 0) else None

    def info(self) -> dict:
        out = self.game.outcome(self.state)
        status = "over" if out.over else ("playing" if self.started else "waiting")
        return {"table": self.id, "game": self.game.NAME, "name": self.name, "seats": len(self.seats),
                "players": [self._shown(s) for s in self.seats],
                "connected": [s.conn is not None for s in self.seats],
                "spectators": len(self.spectators), "status": status, "seq": self.seq,
                "settings": self.settings}

    def empty_since(self) -> float | None:
        """Since when (trio's clock) nobody is at this table; None while someone is."""
        if self.spectators or any(s.conn is not None for s in self.seats):
            return None
        return self._empty_since if self._empty_since is not None else trio.current_time()

    def list_entry(self) -> tuple[int, bytes]:
        """(rank of its status, its list_tables entry encoded): built again only after a
        lobby change or a new seq."""
        e = self._entry
        if e is None or e[0] != self.seq:
            info = self.info()
            e = self._entry = (self.seq, _STATUS_RANK.get(info["status"], 2), packb(info))
        return e[1], e[2]

    def players(self) -> tuple[dict, ...]:
        return tuple({"seat": i, "name": self._shown(s), "connected": s.conn is not None}
                     for i, s in enumerate(self.seats))

    # ------------------------------------------------------------ the arbiter
    async def submit(self, req) -> None:
        """Called by connection reader tasks. Waits if the table's inbox is full (bounded);
        otherwise does not yield (the reader yields at its next receive anyway)."""
        try:
            self.inbox_send.send_nowait(req)
        except trio.WouldBlock:
            await self.inbox_send.send(req)

    def submit_nowait(self, req) -> bool:
        try:
            self.inbox_send.send_nowait(req)
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
        self._last_activity = trio.current_time()
        if self.finished:
            self._evict_at = self._last_activity - self._finished_ago + self.keep_finished
        self._empty_since = self._last_activity - self._empty_for
        # A table recovered mid-game may owe chance or table actions (none are lost: they
        # are derived from the state), so settle them first.
        records, out = [], []  # type: ignore[var-annotated]  # (typed values are issue #23's pure core)
        if not self.finished:
            self._settle(records, out)
        await self._commit(records, out)
        async with self.inbox:
            while True:
                deadline, timeout = self._deadline()
                wake = self._fair_wake(deadline, timeout) if self.fair else deadline
                req = None
                # Requests that wait are taken first even when the deadline has passed: an
                # intent that arrived before it goes before the timer's move (the arbiter may
                # have been busy committing at the deadline), one that came after, after it
                # (below); and a table is never forgotten with a request waiting for it.
                if self.fair and len(self._held) >= INBOX:
                    # as many held as the inbox holds: take no more until some are
                    # released (senders wait on the full inbox, as at any table)
                    await trio.sleep_until(wake)
                elif trio.current_time() < wake or self._waiting():
                    try:
                        # under load a request is usually waiting (it came during the
                        # last commit): take it without a cancel scope or a trip through
                        # the scheduler (the arbiter yields at every commit of records,
                        # and whenever its inbox is empty)
                        req = self.inbox.receive_nowait()
                    except trio.WouldBlock:
                        with trio.move_on_at(wake):
                            try:
                                req = await self.inbox.receive()
                            except trio.EndOfChannel:
                                return
                    except trio.EndOfChannel:
                        return
                records, out = [], []
                if req is None and (timeout is _EVICT or timeout is _EXPIRE) and not self._held:
                    if not self._audience():
                        # the last records may still wait in the log writer's queue, or be
                        # unsynced (durability off or batch; refusals): they are written and
                        # fsynced and the file closed before the log is moved
                        await self.writer.release(self.logfile)
                        if self._waiting():
                            continue    # requests came meanwhile: them first, then look again
                        if timeout is _EXPIRE:
                            log.info("table %s expired: nobody was at it for %g s while it waited for players",
                                     self.id, self.waiting_expiry)
                        if self.on_evict is not None:
                            self.on_evict(self)
                        return          # the inbox closes: later requests get no_such_table
                    # someone is still at it: look again a little later
                    self._evict_at = trio.current_time() + min(max(self.keep_finished, 1.0), 60.0)
                    continue
                if self.fair:
                    # ordered by send time: held until no earlier one can still arrive
                    if req is not None:
                        for r in self._batch(req):
                            self._hold(r, records, out)
                    self._release(records, out)
                elif req is None:
                    self._apply_timeout(timeout, records, out)
                else:
                    for r in self._batch(req):
                        # (a deadline only moves later while a batch is handled: the first
                        # one bounds them all, and the common case costs one comparison)
                        if type(r) is IntentReq and r.at >= deadline:
                            self._timer_first(r.at, records, out)
                        self._handle_guarded(r, records, out)
                await self._commit(records, out)

    def _batch(self, req) -> list:
        """``req`` and the requests waiting after it: one group (at most GROUP)."""
        batch = [req]
        while len(batch) < GROUP:
            try:
                batch.append(self.inbox.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                break
        return batch

    # ------------------------------------------------------------ fair order
    # A table with fair_ms > 0 (Run Wild) applies intents in the order players acted, as
    # far as the server can tell. Each intent is credited c, the smallest of bounds the
    # server observes itself (server/fairorder.py: half the ping round trip, half the
    # kernel's TCP round trip, half the time since the state it acts on was written to its
    # connection, fair_ms). An intent was sent at arrival - c (arrival: trio's clock when
    # its connection read it), in answer to a state its player saw c after the server sent
    # it; its key is arrival - LEGS * c. It is applied once no intent with an earlier key
    # can still arrive: at key + its hold, LEGS times the largest reach (c's bound
    # before causality) among the other seats connected now (an intent of seat j with an earlier
    # key arrives before key + LEGS * c_j; the seat's own later intents never have an
    # earlier key). So the hold is the difference in delay: the farthest player's intents
    # wait for nobody, and seats all as near (or as slowed by load, which inflates every
    # estimate alike) wait for almost nothing. What the table holds, waits in a heap;
    # the order it leaves the heap in is the log's order, so replay and recovery know
    # nothing of it. A connection's own requests never overtake each other (a key is at
    # least the key of the connection's previous held request), and a request that is not
    # an intent (join, leave, an answer the connection made itself) waits behind every
    # intent held when it came, as in arrival order.

    def _hold_now(self, seat: int | None = None) -> float:
        """The hold (s) of an intent of ``seat``: LEGS times the largest capped reach of
        another connected seat (None: of any, for the timer's move)."""
        return fairorder.hold((s.conn.delay for i, s in enumerate(self.seats) if s.conn is not None and i != seat),
                              self.fair)

    def _entry_hold(self, seat) -> float:
        """The hold of a held request: an intent's (of ``seat``), or none (-1: a request
        that is not an intent only keeps its place behind the intents held before it)."""
        return 0.0 if seat == -1 else self._hold_now(seat)

    def _fair_wake(self, deadline: float, timeout) -> float:
        """When the arbiter must look again: the first held request's release, or the
        timer's (its move counts as sent at its deadline, so it is held like an intent).
        A finished or waiting table is forgotten only once nothing is held."""
        held = self._held
        first = held[0][0] + self._entry_hold(held[0][3]) if held else math.inf
        if timeout is None or timeout is _EVICT or timeout is _EXPIRE:
            return first if held else deadline
        timer = deadline + self._hold_now()
        return first if first < timer else timer

    def _hold(self, r, records: list, out: list) -> None:
        """Put request ``r`` in the heap under its key; with nothing held, a request that is
        not an intent is handled at once."""
        conn = r.conn
        credit = None
        if type(r) is IntentReq:
            # the causality bound: when what the intent needs (a card in a meld) was
            # first written to this connection (server/fairorder.py)
            seen = conn.written.seen_at(self._touched.last(r.intent.action), r.at)
            placed = fairorder.place(r.reach, self.fair, r.at, seen, self._last_key.get(conn))
            key, credit = placed.key, placed.credit
            seat = conn.seat if conn.table is self else None
        elif not self._held:
            self._handle_guarded(r, records, out)
            return
        else:
            key, seat = self._held_max, -1       # -1: no hold of its own (it only keeps its place)
        self._last_key[conn] = key
        if key > self._held_max:
            self._held_max = key
        self._held_n += 1
        heapq.heappush(self._held, (key, self._held_n, r, seat, credit))

    def _release(self, records: list, out: list) -> None:
        """Apply, in key order, what no earlier-sent intent can overtake any more; then the
        timer's move if it is due (its key is its deadline)."""
        held = self._held
        now = trio.current_time()
        while held:
            hold = self._entry_hold(held[0][3])
            if held[0][0] + hold > now:
                break
            key, _, r, _, credit = heapq.heappop(held)
            if type(r) is IntentReq:
                self._timer_first(key, records, out)
                # logged: the smallest of its delay bounds, its send time (Unix time:
                # arrival - c, or later if it came right behind its connection's previous
                # request), the hold
                sent = r.recv - (r.at - key) + (fairorder.LEGS - 1) * credit.value
                self._handle_guarded(r, records, out, (credit.bound, sent, hold))
            else:
                self._handle_guarded(r, records, out)
        if not held:
            self._last_key.clear()
            self._held_max = -math.inf
        deadline, timeout = self._deadline()
        if (timeout is not None and timeout is not _EVICT and timeout is not _EXPIRE
                and deadline + self._hold_now() <= now and (not held or held[0][0] >= deadline)):
            self._apply_timeout(timeout, records, out)

    def _timer_first(self, at: float, records: list, out: list) -> None:
        """The timer's move, if it fell due before ``at`` (when the next intent arrived)
        and is still due: the order of the log is the order things happened."""
        deadline, timeout = self._deadline()
        if timeout is not None and timeout is not _EVICT and timeout is not _EXPIRE and deadline <= at:
            self._apply_timeout(timeout, records, out)

    def _waiting(self) -> int:
        return self.inbox.statistics().current_buffer_used

    def _handle_guarded(self, req, records: list, out: list, timing: tuple | None = None) -> None:
        """Our own bug in one request (an engine or view that raises) must not take the
        table, or any other table, down: the request is answered as our fault and logged;
        the state is unchanged by it (engines are pure; the state moves only on success)."""
        w = self.writer
        if (w.paused or w.failed is not None) and not self.finished:
            self._answer_paused(req, out)
            return
        try:
            if timing is not None:
                self._handle_intent(req, records, out, timing)
            else:
                self._handle(req, records, out)
        except Exception:
            log.exception("table %s: internal error handling %s (our bug)", self.id, type(req).__name__)
            why = "the server failed on this request (our bug, it is logged); the table goes on"
            if type(req) is IntentReq:
                self.metrics.refused("internal_error")
                out.append(("to", req.conn, m.Rejected(req.intent.id, "internal_error", why)))
            elif getattr(req, "conn", None) is not None:
                out.append(("to", req.conn, m.Error("internal_error", why)))

    def _deadline(self):
        if self.finished:
            return self._evict_at, _EVICT
        if not self.started:
            if self.waiting_expiry == math.inf:
                return math.inf, None
            if self.spectators or any(s.conn is not None for s in self.seats):
                self._empty_since = None
                return math.inf, None
            if self._empty_since is None:       # nobody is at it from now on
                self._empty_since = trio.current_time()
            return self._empty_since + self.waiting_expiry, _EXPIRE
        w = self.writer
        if w.paused or w.failed is not None:
            return math.inf, None       # timers stop while the disk is full (storage_resumed), or for good
        t = self.game.timeout_action(self.state)
        if t is None:
            return math.inf, None
        return self._last_activity + t.seconds, t

    async def _commit(self, records: list, out: list) -> None:
        """Make the group durable, then deliver what it produced, in order."""
        if records:
            lazy, self._lazy = self._lazy, 0
            if len(records) > lazy:
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
        self._send_out(out)
        if self._lobby_changed:
            self._lobby_changed = False
            self._entry = None
            if self.on_lobby is not None:
                self.on_lobby(self)
        if self.finished and not self._released:
            # nothing more is written to a finished game's log: its file is closed now
            self._released = True
            await self.writer.release(self.logfile, OVER)
        while self._kept and not self.writer.paused:
            # what came while the disk was full and waited for play to resume
            kept, self._kept = self._kept, []
            records, out = [], []
            for r in kept:
                self._handle_guarded(r, records, out)
            await self._commit(records, out)

    def _send_out(self, out: list) -> None:
        # The frames of the whole group are gathered per connection and written with one
        # send each, not one per frame (the sends were a seventh of the flat-out profile).
        frames: dict = {}
        for item in out:
            try:
                self._deliver(item, frames)
            except Exception:        # a view that raises: our bug; the others still hear
                log.exception("table %s: internal error delivering %s (our bug)", self.id, item[0])
        for conn, data in frames.items():
            conn.send_frames(data)
        if self.fair:
            self._wrote(out)        # when each seq went to each socket (causality, server/fairorder.py)

    # ------------------------------------------------------------ a full disk
    # docs/ARCHITECTURE.md "Disk full": the writer waits out a group it had no room for;
    # meanwhile the table writes nothing and answers what comes (server/diskfull.py).
    def _answer_paused(self, req, out: list) -> None:
        a = diskfull.answer(_KINDS[type(req)], req, self.id, failed=self.writer.failed is not None,
                            kept=len(self._kept))
        if type(req) is IntentReq:
            self.rejected += 1
        if a.send is not None:
            out.append(("to", req.conn, a.send))
        if a.keep:
            self._kept.append(req)

    async def _serve_paused(self) -> None:
        """While a commit of this table waits for room: answer the inbox (the log writer
        cancels this when the commit is written or the pause ends)."""
        self.storage_paused()
        while True:
            try:
                req = await self.inbox.receive()
            except trio.EndOfChannel:
                raise _InboxClosed() from None
            out: list = []
            if self.writer.paused or self.writer.failed is not None:
                self._answer_paused(req, out)
            else:
                self._kept.append(req)      # taken as the pause ended: handled right after it
            self._send_out(out)

    def storage_paused(self) -> None:
        """The disk is full: timers stop, and everyone at the table is told (once a pause)."""
        if self._paused_at is None:
            self._paused_at = trio.current_time()
            if not self.finished:
                self._send_out([("to", c, diskfull.paused_notice(self.id)) for c in self._audience()])

    def storage_resumed(self) -> None:
        """The disk has room again: timers go on with the time they had left, everyone is
        told, and the arbiter looks at its deadline again."""
        if self._paused_at is not None:
            paused_for = trio.current_time() - self._paused_at
            self._paused_at = None
            if self._last_activity is not None:
                self._last_activity += paused_for
            if not self.finished:
                self._send_out([("to", c, diskfull.resumed_notice(self.id)) for c in self._audience()])
        elif not self._kept:
            return
        self.submit_nowait(WakeReq())       # a full inbox wakes it anyway

    # Each item of ``out`` is delivered after the group is durable:
    #   ("to", conn, message)                       one message to one connection
    #   ("update", seq, events, state, seats, specs) an update to every seat and spectator
    #   ("players", audience)                       seat/connection facts to everyone
    #   ("over", audience)                          game over to everyone
    #   ("close", conn, code, reason)               close one connection after what it was sent
    # A broadcast goes to those at the table when it happened (``_now``), not when it is
    # delivered: one who joins, rejoins or spectates later in the same group has it in
    # its snapshot already, and must get nothing of the table before that snapshot.
    def _deliver(self, item, frames: dict) -> None:
        """Encode one item of ``out`` into ``frames`` (connection -> encoded messages)."""
        kind = item[0]
        if kind == "to":
            conn = item[1]
            _put(frames, conn, conn.encode(item[2]))
        elif kind == "update":
            # a patch against what each connection received last, or a whole view
            # (server/delivery.py; docs/PROTOCOL.md, "update")
            for c, data in self._updates.frames(*item[1:]):
                _put(frames, c, data)
        elif kind == "close":
            conn = item[1]
            pending = frames.pop(conn, None)
            if pending:             # what it is owed goes out before its close frame
                conn.send_frames(pending)
            conn.close_soon(item[2], item[3])
        elif kind == "players":
            data = m.encode(m.Players(self.id, self.players()))
            for c in item[1]:
                _put(frames, c, data)
        elif kind == "over":
            o = self.game.outcome(self.state)
            data = m.encode(m.GameOver(self.id, self.seq, tuple(o.scores), tuple(o.winners),
                                       self.logfile.name))
            for c in item[1]:
                _put(frames, c, data)

    def _wrote(self, out: list) -> None:
        """Fair order's causality bound: when each seq (an update, a snapshot) was handed
        to each connection's socket (server/fairorder.py WriteTimes)."""
        now = trio.current_time()
        for item in out:
            kind = item[0]
            if kind == "update":
                seq = item[1]
                for c in item[4]:
                    if c is not None:
                        c.written.wrote(seq, now)
            elif kind == "to" and type(item[2]) is m.Joined:
                item[1].written.wrote(item[2].seq, now)

    def _now(self) -> tuple:
        """Who is at the table now: (the connection of each seat or None, the spectators)."""
        return tuple(s.conn for s in self.seats), tuple(self.spectators)

    def _audience(self) -> list:
        return [s.conn for s in self.seats if s.conn is not None] + list(self.spectators)

    # ------------------------------------------------------------ request handling
    def _handle(self, req, records: list, out: list) -> None:
        t = type(req)
        if t is IntentReq:
            self._handle_intent(req, records, out)
        elif t is ReplyReq:
            out.append(("to", req.conn, req.message))
        elif t is LeaveReq:
            self._handle_leave(req, records, out)
        elif t is WakeReq:
            return
        elif req.conn.closed:
            # The connection closed while this join/rejoin/spectate waited here: seating
            # it now would leave a ghost shown as connected for ever.
            return
        elif t is JoinReq:
            self._handle_join(req, records, out)
        elif t is RejoinReq:
            self._handle_rejoin(req, out)
        elif t is SpectateReq:
            conn = req.conn
            if conn.table is not None and (conn.table is not self or conn not in self.spectators):
                # also a player at this very table: as a spectator too it would get every update twice
                out.append(("to", conn, m.Error("already_at_table", f"you are already at table {conn.table.id}; send leave first", ref="spectate")))
                return
            self.spectators.add(req.conn)
            self._lobby_changed = True
            req.conn.attach(self, None)
            out.append(("to", req.conn, m.Spectating(self.id, self.game.NAME, self.seq,
                                                     self.game.view(self.state, None), self.players())))
            self._over_to(req.conn, out)

    def _over_to(self, conn, out: list) -> None:
        """After the snapshot of a finished table, that connection alone also gets the
        `game_over` the players got when it ended: one who arrives late learns the result
        the usual way."""
        if self.finished:
            out.append(("over", (conn,)))

    def _refuse(self, req: IntentReq, seat, code: str, reason: str, records: list, out: list,
                timing: tuple | None = None) -> None:
        self.rejected += 1
        self.metrics.refused(code)
        if len(reason) > MAX_STR:       # the log's reader caps it: a longer one would make the log unreadable
            reason = reason[:MAX_STR - 3] + "..."
        out.append(("to", req.conn, m.Rejected(req.intent.id, code, reason)))
        if self.refusals is not None and not self.refusals.take(req.conn):
            return          # over its connection's budget: answered and counted, not logged
        action = req.intent.action
        size = len(packb(action))
        if size > MAX_LOGGED_REJECTED:    # a refused intent must not grow the log by 64 KB at a time
            kind = action.get("kind")
            action = {"kind": kind if isinstance(kind, str) and len(kind) <= 40 else None, "truncated_bytes": size}
        delay, sent, hold = timing or (None, None, None)
        records.append(encode_record(IntentRejected(self.seq, seat, action, code, reason, req.intent.id,
                                                    req.recv, delay, sent, hold)))
        self._lazy += 1

    def _handle_intent(self, req: IntentReq, records: list, out: list, timing: tuple | None = None) -> None:
        conn = req.conn
        seat = conn.seat if conn.table is self else None
        if seat is None or self.seats[seat].conn is not conn:
            self.metrics.refused("not_seated")
            out.append(("to", conn, m.Rejected(req.intent.id, "not_seated",
                                               "you do not hold a seat at this table; join or rejoin first")))
            return
        if self.finished:
            # one answer for every finished table, loaded at start or ended during the run:
            # nothing more is written to a finished game's log (the engines' own game_over
            # refusal would have logged each of these)
            self.metrics.refused("game_over")
            out.append(("to", conn, m.Rejected(req.intent.id, "game_over",
                                               "this game is over; nothing more can be played")))
            return
        if not self.started:
            missing = sum(1 for s in self.seats if not s.token_hash)
            self._refuse(req, seat, "not_started", f"the game starts when every seat is taken; waiting for {missing} more player(s)", records, out, timing)
            return
        try:
            action = self.game.ACTIONS.decode(req.intent.action, "$.action")
            state, events = self.game.apply(self.state, seat, action)
        except ProtocolError as e:
            self._refuse(req, seat, e.code, f"{e.path}: {e.message}" if e.path else e.message, records, out, timing)
            return
        except IllegalAction as e:
            self._refuse(req, seat, e.code, e.reason, records, out, timing)
            return
        # the map as received is logged: it decoded strictly into ``action`` (no unknown
        # fields, right types), so replay decodes it to the same value
        self._accept(state, events, seat, req.intent.action, req.intent.id, "player", req.recv, records, out, timing)
        out.insert(len(out) - 1, ("to", conn, m.Accepted(req.intent.id, self.seq)))
        self.metrics.intents_accepted += 1
        self._settle(records, out)

    def _accept(self, state, events, seat, action_data, intent_id, by, recv, records, out, timing=None) -> None:
        self.seq += 1
        self.state = state
        self.accepted += 1
        self._last_activity = trio.current_time()
        if timing is None:
            records.append(encode_record(ActionAccepted(self.seq, seat, action_data, intent_id, by, recv)))
        else:
            records.append(encode_record(ActionAccepted(self.seq, seat, action_data, intent_id, by, recv, *timing)))
        out.append(("update", self.seq, events, state, *self._now()))
        if self.fair:
            self._touched.changed(self.seq, events)
        self._maybe_hash(records)

    def _maybe_hash(self, records: list) -> None:
        self._since_hash += 1
        if self._since_hash >= HASH_EVERY:
            self._since_hash = 0
            records.append(encode_record(StateHashed(self.seq, state_hash(self.game, self.state))))

    def _settle(self, records: list, out: list) -> None:
        """Apply what the table itself owes now: chance outcomes (shuffles from the OS's
        secure source) and table actions such as Run Wild's "Go!"."""
        if not self.started:
            return
        for _ in range(1000):
            req: ChanceRequest | None = self.game.pending_chance(self.state)
            if req is not None:
                perm = tuple(self.chance(req.size))
                state, events = self.game.apply(self.state, None, ChanceOutcome(req.purpose, perm))
                self.seq += 1
                self.state = state
                records.append(encode_record(ChanceRecorded(self.seq, req.purpose, perm)))
                out.append(("update", self.seq, events, state, *self._now()))
                self._maybe_hash(records)
                continue
            action = self.game.auto_action(self.state)
            if action is None:
                break
            state, events = self.game.apply(self.state, None, action)
            self._accept(state, events, None, to_data(action), None, "table", None, records, out)
        if not self.finished and self.game.outcome(self.state).over:
            self.finished = True
            self._lobby_changed = True
            self._evict_at = trio.current_time() + self.keep_finished
            records.append(encode_record(StateHashed(self.seq, state_hash(self.game, self.state))))
            out.append(("over", self._audience()))
            if self.on_finished is not None:
                self.on_finished(self)

    def _apply_timeout(self, t, records: list, out: list) -> None:
        w = self.writer
        if w.paused or w.failed is not None:
            return      # it fell due as the disk filled: it is made when play resumes (with its remaining time)
        try:
            state, events = self.game.apply(self.state, t.seat, t.action)
        except IllegalAction as e:   # the engine offered a timeout it then refused: our bug
            log.error("table %s: timeout action refused (%s); timer disabled until the next action", self.id, e)
            self._last_activity = math.inf
            return
        self._accept(state, events, t.seat, to_data(t.action), None, "timer", None, records, out)
        self._settle(records, out)

    # ------------------------------------------------------------ seats
    def _claim(self, seat: int, name: str, conn, records: list, out: list) -> str:
        token = secrets.token_urlsafe(24)
        th = token_hash(token)
        self.seats[seat] = Seat(name, th, conn)
        records.append(encode_record(SeatClaimed(seat, name, th)))
        self._lobby_changed = True
        conn.attach(self, seat)
        return token

    def _handle_join(self, req: JoinReq, records: list, out: list) -> None:
        conn = req.conn
        if conn.table is not None:
            out.append(("to", conn, m.Error("already_at_table", f"you are already at table {conn.table.id}; send leave first", ref="join")))
            return
        if self.finished:
            out.append(("to", conn, m.Error("game_over", "this game is over; spectate it or create a new table", ref="join")))
            return
        free = [i for i, s in enumerate(self.seats) if not s.token_hash]
        if req.seat is not None:
            if req.seat >= len(self.seats):
                out.append(("to", conn, m.Error("no_such_seat", f"this table has seats 0..{len(self.seats) - 1}", path="$.seat", ref="join")))
                return
            if req.seat not in free:
                out.append(("to", conn, m.Error("seat_taken", f"seat {req.seat} is taken; free seats: {free or 'none'}", path="$.seat", ref="join")))
                return
            seat = req.seat
        elif not free:
            out.append(("to", conn, m.Error("table_full", f"table {self.id} is full; spectate it or create another table", ref="join")))
            return
        else:
            seat = free[0]
        was_started = self.started
        token = self._claim(seat, req.name, conn, records, out)
        out.append(("to", conn, m.Joined(self.id, self.game.NAME, seat, token, self.seq,
                                          self.game.view(self.state, seat), self.players())))
        out.append(("players", self._audience()))
        if not was_started and self.started:
            self._last_activity = trio.current_time()
            self._settle(records, out)

    def _handle_rejoin(self, req: RejoinReq, out: list) -> None:
        conn = req.conn
        if conn.table is not None:
            out.append(("to", conn, m.Error("already_at_table", f"you are already at table {conn.table.id}; send leave first", ref="rejoin")))
            return
        if req.seat >= len(self.seats):
            out.append(("to", conn, m.Error("no_such_seat", f"this table has seats 0..{len(self.seats) - 1}", path="$.seat", ref="rejoin")))
            return
        s = self.seats[req.seat]
        if not s.token_hash or not hmac.compare_digest(s.token_hash, token_hash(req.token)):
            # at a finished table no seat can be joined: point to what does work
            todo = "the game is over: spectate it to see the result" if self.finished else "join a free seat instead"
            out.append(("to", conn, m.Error("bad_token", f"that token does not hold seat {req.seat} at table {self.id}; {todo}", path="$.token", ref="rejoin")))
            return
        old = s.conn
        if old is not None and old is not conn:
            # told (and closed) in turn, after what this group already owes it, such as
            # the answer to an intent it sent just before
            old.detach(self)
            out.append(("to", old, m.Error("seat_taken_over", "your seat was resumed from another connection", ref="rejoin")))
            out.append(("close", old, 1000, "seat resumed elsewhere"))
        s.conn = conn
        self._lobby_changed = True
        conn.attach(self, req.seat)
        out.append(("to", conn, m.Joined(self.id, self.game.NAME, req.seat, req.token, self.seq,
                                          self.game.view(self.state, req.seat), self.players())))
        self._over_to(conn, out)
        out.append(("players", self._audience()))

    def _handle_leave(self, req: LeaveReq, records: list, out: list) -> None:
        conn = req.conn
        self._lobby_changed = True
        if conn in self.spectators:
            self.spectators.discard(conn)
        for i, s in enumerate(self.seats):
            if s.conn is conn:
                s.conn = None
                if req.notify and not self.finished:
                    # An explicit leave releases the seat: its token stops working and
                    # anyone may join it (the seat keeps its cards, docs/DECISIONS.md "All games").
                    # Not once the game is over: nobody can join it then, and voiding the
                    # token only shut its player out of the final view (and wrote to a
                    # finished game's log), unlike the same table after a restart.
                    self.seats[i] = Seat(s.name, b"", None)
                    records.append(encode_record(SeatClaimed(i, s.name, b"")))
        conn.detach(self)
        if req.notify:
            out.append(("to", conn, m.Left(self.id)))
        out.append(("players", self._audience()))
