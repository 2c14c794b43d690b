"""A table's decisions, apart from its I/O: the pure core of the arbiter (issue #23;
docs/ARCHITECTURE.md, "The arbiter: pure core, thin shell").

Requests (server/arbiter_io.py) and the time ``now`` (trio's clock, given by the shell)
go in; a ``Group`` comes out: the encoded log records and the typed outputs the shell
delivers once the records are durable. It validates with the pure engine, seats and
unseats, settles chance and table actions, runs the table's timers (the engine's
timeout, a finished table's hold, a waiting table's expiry) and the fair-order hold
(server/fairorder.py). It never awaits, sleeps or sends: server/table.py does that, and
a test drives this with values alone (tests/server/test_arbiter_core_*.py).
"""

from __future__ import annotations

import logging
import math
import secrets
from types import ModuleType
from typing import Any, Callable


from wildtable.protocol import messages as m
from wildtable.protocol.codec import packb, MAX_STR, to_data
from wildtable.protocol.engine import ChanceOutcome, ChanceRequest, log_hash
from wildtable.protocol.errors import IllegalAction, ProtocolError
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, HASH_EVERY, ActionAccepted, ChanceRecorded, IntentRejected, StateHashed, encode_record,
)

from . import arbiter_seats, diskfull
from .arbiter_seats import Seat
from .arbiter_io import (
    CLEAR, EVICT, EXPIRE, Facts, GameOver, Group, IntentReq, JoinReq, LeaveReq, Link,
    RejoinReq, ReplyReq, SendTo, SpectateReq, Timing, Update, WakeReq, is_timer,
)
from .fairhold import FairHold
from .refusals import RefusalBudget
from .shuffle import secure_permutation
from .oplog import about

log = logging.getLogger("wildtable.server")

MAX_LOGGED_REJECTED = 512   # bytes of a refused action kept in the log; a bigger one is summarised

# the kind of each request, as server/diskfull.py answers it while the disk is full
_KINDS = {IntentReq: "intent", JoinReq: "join", RejoinReq: "rejoin", SpectateReq: "spectate",
          ReplyReq: "reply", LeaveReq: "leave", WakeReq: "wake"}

_SEATING = (JoinReq, RejoinReq, SpectateReq)     # the requests whose whereabouts the core reads (Facts)

_STATUS_RANK = {"waiting": 0, "playing": 1, "over": 2}    # list_tables keeps waiting tables first
_NO_STATE = object()
_NO_DEADLINE = (math.inf, None)


def _new_token() -> str:
    return secrets.token_urlsafe(24)


def fair_cap(game: ModuleType, settings: dict) -> float:
    """The most delay (s) a table makes up for: setting ``fair_ms`` of a game that has it
    (Run Wild), else 0 (arrival order)."""
    defaults = game.default_settings()
    if "fair_ms" not in defaults:
        return 0.0
    ms = settings.get("fair_ms", defaults["fair_ms"])
    return ms / 1000.0 if type(ms) in (int, float) and ms > 0 else 0.0


class Arbiter:
    """One table's state and every decision about it. A connection is a ``Link`` here:
    the core holds no connection object, and what it reads of the world outside comes in
    as ``Facts`` (server/arbiter_io.py) with the call that needs it."""

    def __init__(self, table_id: str, game: ModuleType, seats: int, settings: dict, state: Any, *,
                 seq: int = 0, name: str = "", seat_records: list | None = None,
                 chance: Callable[[int], Any] = secure_permutation, keep_finished: float = math.inf,
                 waiting_expiry: float = math.inf, abandoned_expiry: float = math.inf,
                 refusals: RefusalBudget | None = None,
                 new_token: Callable[[], str] = _new_token, log_format: int = FORMAT_VERSION):
        self.id = table_id
        self.game = game
        # the format of the log this table appends to (its header's: a table recovered from an
        # older log goes on writing that log's hashes, engine.log_hash)
        self.log_format = log_format
        self.name = name
        self.settings = settings
        self.state = state
        self.seq = seq
        self.facts = CLEAR             # the world outside as the shell read it last (each call may bring new)
        self.seats = [Seat() for _ in range(seats)]
        for r in seat_records or ():
            self.seats[r.seat] = Seat(r.name, r.token_hash)
        # who is at the table: each link, its seat (None: watching); the spectators in the
        # order they came (a dict: the order of deliveries is the same run after run)
        self.at: dict[Link, int | None] = {}
        self.spectators: dict[Link, None] = {}
        self.finished = game.outcome(state).over
        self.chance = chance           # size -> permutation; the OS's secure source unless a test injects one
        self.new_token = new_token
        self.refusals = refusals       # the budget of refused intents logged per connection
        # A finished table is held (listed, watchable) for keep_finished seconds, then for
        # as long as anyone is still at it; a table still waiting for players that nobody
        # is at for waiting_expiry seconds is forgotten too, and a game in play nobody is
        # at for abandoned_expiry seconds is given up (EVICT, EXPIRE; docs/ARCHITECTURE.md
        # "Bounded resources")
        self.keep_finished = keep_finished
        self.waiting_expiry = waiting_expiry
        self.abandoned_expiry = abandoned_expiry
        self.evict_at = math.inf
        self.empty_since_at: float | None = None
        self.last_activity: float | None = None     # the engine's timeout counts from here
        # A full disk (docs/ARCHITECTURE.md "Disk full"): requests that came meanwhile and
        # wait for play to resume (server/diskfull.py)
        self.kept: list = []
        self.accepted = 0
        self.rejected = 0
        self._since_hash = 0
        self._lobby_changed = False
        self._entry: tuple | None = None
        self.fair = fair_cap(game, settings)
        self.hold = FairHold(self)
        self._timeout_of: Any = _NO_STATE     # the state ``_timeout`` is the engine's timeout of
        self._timeout: Any = None

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
                "connected": [s.link is not None for s in self.seats],
                "spectators": len(self.spectators), "status": status, "seq": self.seq,
                "settings": self.settings}

    def empty_since(self, now: float) -> float | None:
        """Since when nobody is at this table; None while someone is."""
        if self.at:
            return None
        return self.empty_since_at if self.empty_since_at is not None else now

    def list_entry(self) -> tuple[int, bytes]:
        """(rank of its status, its list_tables entry encoded): built again only after a
        lobby change or a new seq."""
        e = self._entry
        if e is None or e[0] != self.seq:
            info = self.info()
            e = self._entry = (self.seq, _STATUS_RANK.get(info["status"], 2), packb(info))
        return e[1], e[2]

    def take_lobby_change(self) -> bool:
        """Whether what list_tables shows of the table changed since the last call."""
        changed, self._lobby_changed = self._lobby_changed, False
        if changed:
            self._entry = None
        return changed

    def players(self) -> tuple[dict, ...]:
        return tuple({"seat": i, "name": self._shown(s), "connected": s.link is not None}
                     for i, s in enumerate(self.seats))

    def now_at_table(self) -> tuple[tuple[Link | None, ...], tuple[Link, ...]]:
        """Who is at the table now: (the link of each seat or None, the spectators)."""
        return tuple(s.link for s in self.seats), tuple(self.spectators)

    def audience(self) -> tuple[Link, ...]:
        return tuple(s.link for s in self.seats if s.link is not None) + tuple(self.spectators)

    def _blocked(self) -> bool:
        """The log cannot be written now (paused by a full disk, or failed)."""
        f = self.facts
        return f.paused or f.failed

    def _learn(self, facts: Facts | None) -> None:
        if facts is not None:
            self.facts = facts

    def asking(self) -> list[Link]:
        """The links whose join, rejoin or spectate the core holds (fair order) or keeps (a
        full disk): the shell reads their whereabouts for the calls that may handle them."""
        return [r.link for r in self.hold.waiting() + self.kept if type(r) in _SEATING]

    # ------------------------------------------------------------ the core's entry points
    def start(self, now: float, finished_ago: float = 0.0, empty_for: float = 0.0) -> Group:
        """The arbiter begins at ``now``: a table loaded finished ``finished_ago`` s ago,
        or waiting with nobody at it for ``empty_for`` s, keeps its clocks. A table
        recovered mid-game may owe chance or table actions (none are lost: they are
        derived from the state), so they are settled first."""
        g = Group()
        self.last_activity = now
        if self.finished:
            self.evict_at = now - finished_ago + self.keep_finished
        self.empty_since_at = now - empty_for
        if not self.finished:
            self._settle(g, now)
        return g

    def receive(self, batch: list, now: float, facts: Facts | None = None) -> Group:
        """A group of requests, in arrival order, taken at ``now``."""
        self._learn(facts)
        g = Group()
        if self.fair:
            # ordered by send time: held until no earlier one can still arrive
            for r in batch:
                self.hold.put(r, g, now)
            self.hold.release(g, now)
            return g
        deadline = self.deadline(now)[0]
        for r in batch:
            # (a deadline only moves later while a batch is handled: the first one bounds
            # them all, and the common case costs one comparison)
            if type(r) is IntentReq and r.at >= deadline:
                self.timer_first(r.at, g, now)
            self.handle_guarded(r, g, now)
        return g

    def tick(self, now: float, facts: Facts | None = None) -> Group:
        """No request came before the wake-up time: release what fair order held, or
        make the timer's move."""
        self._learn(facts)
        g = Group()
        if self.fair:
            self.hold.release(g, now)
        else:
            deadline, timeout = self.deadline(now)
            if is_timer(timeout) and deadline <= now:
                self.apply_timeout(timeout, g, now)
        return g

    def handle_kept(self, now: float, facts: Facts | None = None) -> Group:
        """What came while the disk was full, handled now that play resumed."""
        self._learn(facts)
        kept, self.kept = self.kept, []
        g = Group()
        for r in kept:
            self.handle_guarded(r, g, now)
        return g

    def resume_timers(self, paused_for: float) -> None:
        """The disk was full for ``paused_for`` s: timers go on with the time they had left
        (a game in play nobody is at too: its expiry stops while the disk is full)."""
        if self.last_activity is not None:
            self.last_activity += paused_for
        if self.started and self.empty_since_at is not None:
            self.empty_since_at += paused_for

    def _expiry(self, now: float, expiry: float) -> tuple[float, Any]:
        """(when the table is to be forgotten, EXPIRE): ``expiry`` s after the last one
        left it; no deadline while someone is at it. The clock starts as the last one goes
        (every change of who is at the table is followed by this call, through the shell's
        ``wake``)."""
        if expiry == math.inf:
            return _NO_DEADLINE
        if self.at:
            self.empty_since_at = None
            return _NO_DEADLINE
        if self.empty_since_at is None:       # nobody is at it from now on
            self.empty_since_at = now
        return self.empty_since_at + expiry, EXPIRE

    def deadline(self, now: float) -> tuple[float, Any]:
        """When the table must act by itself, and why: the engine's timeout (its move),
        EVICT, EXPIRE (a table waiting for players, or a game in play, nobody was at for
        its expiry), or (inf, None)."""
        if self.finished:
            return self.evict_at, EVICT
        if not self.started:
            return self._expiry(now, self.waiting_expiry)
        if self._blocked():
            return _NO_DEADLINE         # timers stop while the disk is full (storage_resumed), or for good
        # a game in play nobody is at is given up after abandoned_expiry: its timers
        # may be off (turn_timer 0), and then nothing else would ever end it
        gone = self._expiry(now, self.abandoned_expiry)
        # the engine's timeout of this state: asked once a state (states are immutable
        # values; deadline is asked two or three times an intent)
        state = self.state
        if state is not self._timeout_of:
            self._timeout_of, self._timeout = state, self.game.timeout_action(state)
        t = self._timeout
        if t is None or self.last_activity is None:
            return gone
        due = self.last_activity + t.seconds
        return gone if gone[0] < due else (due, t)

    def wake(self, now: float, facts: Facts | None = None) -> tuple[float, Any]:
        """When the shell must look again (and the deadline's reason): the deadline, or
        at a fair table the earlier of the first held request's release and the timer's."""
        self._learn(facts)
        deadline, timeout = self.deadline(now)
        return (self.hold.wake(deadline, timeout) if self.fair else deadline), timeout

    def wrote(self, out: list, now: float) -> None:
        """The shell handed a group's outputs to the sockets at ``now`` (fair order's
        causality bound, server/fairhold.py)."""
        if self.fair:
            self.hold.wrote(out, now)

    def hold_again(self, now: float) -> None:
        """Someone is still at a table that is due to be forgotten: look again a little later."""
        self.evict_at = now + min(max(self.keep_finished, 1.0), 60.0)

    # ------------------------------------------------------------ request handling
    def handle_guarded(self, req, g: Group, now: float, timing: Timing | None = None) -> None:
        """Our own bug in one request (an engine or view that raises) must not take the
        table, or any other table, down: the request is answered as our fault and logged;
        the state is unchanged by it (engines are pure; the state moves only on success)."""
        if self._blocked() and not self.finished:
            self.answer_paused(req, g)
            return
        try:
            if timing is not None:
                self._handle_intent(req, g, now, timing)
            else:
                self._handle(req, g, now)
        except Exception:
            log.exception("table %s: internal error handling %s (our bug)", self.id, type(req).__name__, extra=about(table=self.id))
            why = "the server failed on this request (our bug, it is logged); the table goes on"
            if type(req) is IntentReq:
                g.refused.append("internal_error")
                g.out.append(SendTo(req.link, m.Rejected(req.intent.id, "internal_error", why)))
            elif req.link is not None:
                g.out.append(SendTo(req.link, m.Error("internal_error", why)))

    def _handle(self, req, g: Group, now: float) -> None:
        t = type(req)
        if t is IntentReq:
            self._handle_intent(req, g, now)
        elif t is ReplyReq:
            g.out.append(SendTo(req.link, req.message))
        elif t is LeaveReq:
            self._handle_leave(req, g)
        elif t is WakeReq:
            return
        elif self.facts.of(req.link).closed:
            # The connection closed while this join/rejoin/spectate waited here: seating
            # it now would leave a ghost shown as connected for ever.
            return
        elif t is JoinReq:
            self._handle_join(req, g, now)
        elif t is RejoinReq:
            self._handle_rejoin(req, g)
        elif t is SpectateReq:
            self._handle_spectate(req, g)

    def _over_to(self, link: Link, g: Group) -> None:
        """After the snapshot of a finished table, that connection alone also gets the
        `game_over` the players got when it ended: one who arrives late learns the result
        the usual way."""
        if self.finished:
            g.out.append(GameOver((link,)))

    def _refuse(self, req: IntentReq, seat, code: str, reason: str, g: Group, now: float,
                timing: Timing | None = None) -> None:
        self.rejected += 1
        g.refused.append(code)
        if len(reason) > MAX_STR:       # the log's reader caps it: a longer one would make the log unreadable
            reason = reason[:MAX_STR - 3] + "..."
        g.out.append(SendTo(req.link, m.Rejected(req.intent.id, code, reason)))
        if self.refusals is not None and not self.refusals.take(req.link, now):
            return          # over its connection's budget: answered and counted, not logged
        action = req.intent.action
        size = len(packb(action))
        if size > MAX_LOGGED_REJECTED:    # a refused intent must not grow the log by 64 KB at a time
            kind = action.get("kind")
            action = {"kind": kind if isinstance(kind, str) and len(kind) <= 40 else None, "truncated_bytes": size}
        delay, sent, hold = (timing.delay, timing.sent, timing.hold) if timing is not None else (None, None, None)
        g.records.append(encode_record(IntentRejected(self.seq, seat, action, code, reason, req.intent.id,
                                                      req.recv, delay, sent, hold)))
        g.lazy += 1

    def _handle_intent(self, req: IntentReq, g: Group, now: float, timing: Timing | None = None) -> None:
        link = req.link
        seat = self.at.get(link)
        if seat is None or self.seats[seat].link is not link:
            g.refused.append("not_seated")
            g.out.append(SendTo(link, m.Rejected(req.intent.id, "not_seated",
                                                 "you do not hold a seat at this table; join or rejoin first")))
            return
        if self.finished:
            # one answer for every finished table, loaded at start or ended during the run:
            # nothing more is written to a finished game's log (the engines' own game_over
            # refusal would have logged each of these)
            g.refused.append("game_over")
            g.out.append(SendTo(link, m.Rejected(req.intent.id, "game_over",
                                                 "this game is over; nothing more can be played")))
            return
        if not self.started:
            missing = sum(1 for s in self.seats if not s.token_hash)
            self._refuse(req, seat, "not_started", f"the game starts when every seat is taken; waiting for {missing} more player(s)", g, now, timing)
            return
        try:
            action = self.game.ACTIONS.decode(req.intent.action, "$.action")
            state, events = self.game.apply(self.state, seat, action)
        except ProtocolError as e:
            self._refuse(req, seat, e.code, f"{e.path}: {e.message}" if e.path else e.message, g, now, timing)
            return
        except IllegalAction as e:
            self._refuse(req, seat, e.code, e.reason, g, now, timing)
            return
        # the map as received is logged: it decoded strictly into ``action`` (no unknown
        # fields, right types), so replay decodes it to the same value
        self._accept(state, events, seat, req.intent.action, req.intent.id, "player", req.recv, g, now, timing)
        g.out.insert(len(g.out) - 1, SendTo(link, m.Accepted(req.intent.id, self.seq)))
        g.accepted += 1
        self._settle(g, now)

    def _accept(self, state, events, seat, action_data, intent_id, by, recv, g: Group, now: float,
                timing: Timing | None = None) -> None:
        self.seq += 1
        self.state = state
        self.accepted += 1
        self.last_activity = now
        if timing is None:
            g.records.append(encode_record(ActionAccepted(self.seq, seat, action_data, intent_id, by, recv)))
        else:
            g.records.append(encode_record(ActionAccepted(self.seq, seat, action_data, intent_id, by, recv,
                                                          timing.delay, timing.sent, timing.hold)))
        g.out.append(Update(self.seq, events, state, *self.now_at_table()))
        if self.fair:
            self.hold.touched.changed(self.seq, events)
        self._maybe_hash(g)

    def _maybe_hash(self, g: Group) -> None:
        self._since_hash += 1
        if self._since_hash >= HASH_EVERY:
            self._since_hash = 0
            g.records.append(encode_record(StateHashed(self.seq, log_hash(self.game, self.state, self.log_format))))

    def _settle(self, g: Group, now: float) -> None:
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
                g.records.append(encode_record(ChanceRecorded(self.seq, req.purpose, perm)))
                g.out.append(Update(self.seq, events, state, *self.now_at_table()))
                self._maybe_hash(g)
                continue
            action = self.game.auto_action(self.state)
            if action is None:
                break
            state, events = self.game.apply(self.state, None, action)
            self._accept(state, events, None, to_data(action), None, "table", None, g, now)
        if not self.finished and self.game.outcome(self.state).over:
            self.finished = True
            self._lobby_changed = True
            self.evict_at = now + self.keep_finished
            g.records.append(encode_record(StateHashed(self.seq, log_hash(self.game, self.state, self.log_format))))
            g.out.append(GameOver(self.audience()))
            g.ended = True

    def apply_timeout(self, t, g: Group, now: float) -> None:
        if self._blocked():
            return      # it fell due as the disk filled: it is made when play resumes (with its remaining time)
        try:
            state, events = self.game.apply(self.state, t.seat, t.action)
        except IllegalAction as e:   # the engine offered a timeout it then refused: our bug
            log.error("table %s: timeout action refused (%s); timer disabled until the next action", self.id, e, extra=about(table=self.id))
            self.last_activity = math.inf
            return
        self._accept(state, events, t.seat, to_data(t.action), None, "timer", None, g, now)
        self._settle(g, now)

    def timer_first(self, at: float, g: Group, now: float) -> None:
        """The timer's move, if it fell due before ``at`` (when the next intent arrived)
        and is still due: the order of the log is the order things happened."""
        deadline, timeout = self.deadline(now)
        if is_timer(timeout) and deadline <= at:
            self.apply_timeout(timeout, g, now)

    # ------------------------------------------------------------ seats (server/arbiter_seats.py)
    def _handle_join(self, req: JoinReq, g: Group, now: float) -> None:
        arbiter_seats.join(self, req, g, now)

    def _handle_rejoin(self, req: RejoinReq, g: Group) -> None:
        arbiter_seats.rejoin(self, req, g)

    def _handle_spectate(self, req: SpectateReq, g: Group) -> None:
        arbiter_seats.spectate(self, req, g)

    def _handle_leave(self, req: LeaveReq, g: Group) -> None:
        arbiter_seats.leave(self, req, g)

    def forget(self, link: Link) -> None:
        """The shell's last resort, when the table's inbox stayed full for 5 s after
        ``link`` closed (server/connection.py): the table forgets it without a request (no
        state or log changes; the seat stays held by its token)."""
        arbiter_seats.forget(self, link)

    # ------------------------------------------------------------ a full disk
    # docs/ARCHITECTURE.md "Disk full": the writer waits out a group it had no room for;
    # meanwhile the table writes nothing and answers what comes (server/diskfull.py).
    def answer_paused(self, req, g: Group, facts: Facts | None = None) -> None:
        self._learn(facts)
        a = diskfull.answer(_KINDS[type(req)], req, self.id, failed=self.facts.failed, kept=len(self.kept))
        if type(req) is IntentReq:
            self.rejected += 1
        if a.send is not None:
            g.out.append(SendTo(req.link, a.send))
        if a.keep:
            self.kept.append(req)
