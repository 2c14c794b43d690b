"""Fair order at a table (setting fair_ms > 0, Run Wild): the requests the arbiter's core
holds until no earlier-sent intent can still arrive, and when each is released. Pure:
requests and ``now`` in, decisions into the core's ``Group`` (docs/ARCHITECTURE.md,
"Fair order"; the rule itself: server/fairorder.py).

A table with fair_ms > 0 applies intents in the order players acted, as far as the
server can tell. Each intent is credited c, the smallest of bounds the server observes
itself (server/fairorder.py: half the ping round trip, half the kernel's TCP round trip,
half the time since the state it acts on was written to its connection, fair_ms). An
intent was sent at arrival - c (arrival: trio's clock when its connection read it), in
answer to a state its player saw c after the server sent it; its key is arrival - LEGS *
c. It is applied once no intent with an earlier key can still arrive: at key + its hold,
LEGS times the largest reach (c's bound before causality) among the other seats
connected now (an intent of seat j with an earlier key arrives before key + LEGS * c_j;
the seat's own later intents never have an earlier key). So the hold is the difference
in delay: the farthest player's intents wait for nobody, and seats all as near (or as
slowed by load, which inflates every estimate alike) wait for almost nothing. What the
table holds, waits in a heap; the order it leaves the heap in is the log's order, so
replay and recovery know nothing of it. A connection's own requests never overtake each
other (a key is at least the key of the connection's previous held request), and a
request that is not an intent (join, leave, an answer the connection made itself) waits
behind every intent held when it came, as in arrival order.
"""

from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING, Any

import attrs

from wildtable.protocol import messages as m

from . import fairorder
from .arbiter_io import Group, IntentReq, Link, Output, SendTo, Timing, Update, is_timer

if TYPE_CHECKING:
    from .arbiter import Arbiter

NO_HOLD = -1          # a held request that is not an intent: no hold of its own (it only keeps its place)


@attrs.frozen
class Held:
    """One held request: its key, and the seat whose hold it waits for."""
    key: float
    req: Any
    seat: int | None             # NO_HOLD: not an intent
    credit: fairorder.Credit | None


class FairHold:
    def __init__(self, core: Arbiter):
        self.core = core
        # the heap: (key, arrival number, Held), so that comparisons stay in C (attrs'
        # generated order builds two tuples a comparison, some 60 times slower)
        self.held: list[tuple[float, int, Held]] = []
        self._n = 0
        self._max = -math.inf                  # the largest key held
        self._last_key: dict = {}              # link -> key of its latest held request
        self.touched = fairorder.Touched()     # since which seq what an intent needs is there (causality)
        # when each seq was written to each seated link (causality): the shell says when
        # it delivered (``wrote``); one entry per link at the table
        self.written: dict[Link, fairorder.WriteTimes] = {}
        # hold_now's answers for these facts and seats: seat -> hold (bounded by the seats)
        self._holds_facts: Any = None
        self._holds_seats: tuple = ()
        self._holds: dict[int | None, float] = {}

    def __len__(self) -> int:
        return len(self.held)

    def hold_now(self, seat: int | None = None) -> float:
        """The hold (s) of an intent of ``seat``: LEGS times the largest capped reach of
        another connected seat (None: of any, for the timer's move). Kept while the facts
        (the same object while no delay moved) and the seats are the same: asked two or
        three times an intent."""
        core = self.core
        facts = core.facts
        seats = tuple(core.seats)        # (seats are immutable values, replaced when one moves)
        if facts is not self._holds_facts or seats != self._holds_seats:
            self._holds_facts, self._holds_seats, self._holds = facts, seats, {}
        h = self._holds.get(seat)
        if h is None:
            d = facts.delays
            n = len(d)
            h = self._holds[seat] = fairorder.hold(
                (d[i] for i, s in enumerate(seats) if s.link is not None and i != seat and i < n), core.fair)
        return h

    def _entry_hold(self, seat: int | None) -> float:
        """The hold of a held request: an intent's (of ``seat``), or none (a request that
        is not an intent only keeps its place behind the intents held before it)."""
        return 0.0 if seat == NO_HOLD else self.hold_now(seat)

    def wake(self, deadline: float, timeout: Any) -> float:
        """When the arbiter must look again: the first held request's release, or the
        timer's (its move counts as sent at its deadline, so it is held like an intent).
        A finished or waiting table is forgotten only once nothing is held."""
        held = self.held
        first = held[0][0] + self._entry_hold(held[0][2].seat) if held else math.inf
        if not is_timer(timeout):
            return first if held else deadline
        timer = deadline + self.hold_now()
        return first if first < timer else timer

    def put(self, r: Any, g: Group, now: float) -> None:
        """Put request ``r`` in the heap under its key; with nothing held, a request that is
        not an intent is handled at once."""
        link = r.link
        credit = None
        core = self.core
        if type(r) is IntentReq:
            # the causality bound: when what the intent needs (a card in a meld) was
            # first written to this connection (server/fairorder.py)
            written = self.written.get(link)
            seen = written.seen_at(self.touched.last(r.intent.action), r.at) if written is not None else None
            placed = fairorder.place(r.reach, core.fair, r.at, seen, self._last_key.get(link))
            key, credit = placed.key, placed.credit
            seat = core.at.get(link)
        elif not self.held:
            core.handle_guarded(r, g, now)
            return
        else:
            key, seat = self._max, NO_HOLD
        self._last_key[link] = key
        if key > self._max:
            self._max = key
        self._n += 1
        heapq.heappush(self.held, (key, self._n, Held(key, r, seat, credit)))

    def release(self, g: Group, now: float) -> None:
        """Apply, in key order, what no earlier-sent intent can overtake any more; then the
        timer's move if it is due (its key is its deadline)."""
        core = self.core
        held = self.held
        while held:
            h = held[0][2]
            hold = self._entry_hold(h.seat)
            if h.key + hold > now:
                break
            heapq.heappop(held)
            r = h.req
            if type(r) is IntentReq:
                core.timer_first(h.key, g, now)
                # logged: the smallest of its delay bounds, its send time (Unix time:
                # arrival - c, or later if it came right behind its connection's previous
                # request), the hold
                assert h.credit is not None
                sent = r.recv - (r.at - h.key) + (fairorder.LEGS - 1) * h.credit.value
                core.handle_guarded(r, g, now, Timing(h.credit.bound, sent, hold))
            else:
                core.handle_guarded(r, g, now)
        if not held:
            self._last_key.clear()
            self._max = -math.inf
        deadline, timeout = core.deadline(now)
        if is_timer(timeout) and deadline + self.hold_now() <= now and (not held or held[0][0] >= deadline):
            core.apply_timeout(timeout, g, now)

    def waiting(self) -> list:
        """The requests held, in no particular order."""
        return [e[2].req for e in self.held]

    def wrote(self, out: list[Output], now: float) -> None:
        """Fair order's causality bound: the shell handed ``out`` (a group's outputs) to the
        sockets at ``now``: when each seq (an update, a snapshot) went to each seated link
        (fairorder.WriteTimes)."""
        at = self.core.at
        written = self.written
        for item in out:
            if type(item) is Update:
                seq = item.seq
                for link in item.seats:
                    if link is not None and link in at:
                        w = written.get(link)
                        if w is None:
                            w = written[link] = fairorder.WriteTimes()
                        w.wrote(seq, now)
            elif type(item) is SendTo and type(item.message) is m.Joined and item.link in at:
                w = written.get(item.link)
                if w is None:
                    w = written[item.link] = fairorder.WriteTimes()
                w.wrote(item.message.seq, now)
        if len(written) > len(at):
            for link in [k for k in written if k not in at]:
                del written[link]
