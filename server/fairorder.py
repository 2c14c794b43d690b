"""Fair order's rule (docs/ARCHITECTURE.md "Fair order", issue #24): how much delay an
intent is credited with, and so its place. Pure: values and times in, values out; no
Trio, no sockets, so the rule is tested on a fake clock (tests/server/test_fairorder.py).

The client is untrusted: it may hold, drop or reorder its pongs and intents and lie in
any field. The credit is therefore the smallest of bounds the server observes itself;
a client can make the kernel's and causality's only smaller by lying (which costs only
itself), never larger, so the smallest is never more than its real distance:

- ``ping``: half the smallest WebSocket ping round trip of the window. A client can
  answer late, never early (the payload is random): alone it rewards late pongs, so it
  is only ever one bound among the others (none until the first pong).
- ``kernel``: half the kernel's smallest round trip of the TCP connection (TCP_INFO
  ``tcpi_min_rtt``). The client's kernel acknowledges our bytes, not its application, so
  held pongs do not move it. Where a proxy stands between, it is the proxy's round trip.
- ``causality``: an intent that needs what came to be at seq k (a card in a meld) cannot
  have left the client before the client had seq k, which the server wrote to that socket at W:
  its arrival A >= W + 2 x its one-way delay, so the credit is at most (A - W) / 2 (k
  comes from the table's state, never from the client). It bounds even a client that
  tampers with its kernel: no intent is placed before the state it acted on was sent.
- ``cap``: the table's fair_ms.

The key of an intent (its place) is arrival - LEGS x credit: the way in (its send time
is arrival - credit) and the way out (its player saw the state one delay after we sent
it). It is applied once no earlier key can still come: LEGS x the largest reach (the
credit bound without causality) of the other seats after its key.
"""

from __future__ import annotations

import enum
import struct
from collections import deque
from typing import Iterable, Mapping

import attrs

#: how many one-way delays a key is its arrival minus (see the module's docstring); 1
#: orders by send time alone, which leaves the nearer player one delay ahead
#: (bench/fairness.py --legs 1 measures it)
LEGS = 2
#: seqs written to one connection whose write time is kept (the causality bound's memory):
#: an intent naming something changed more writes ago than this gets no causality bound
WRITES_KEPT = 64
#: things (a meld, a card in a meld) whose seq a table keeps for the causality bound
NAMES_KEPT = 512

_TCPI_RTT = 68          # struct tcp_info (linux/tcp.h): __u32 tcpi_rtt, in microseconds
_TCPI_MIN_RTT = 148     # __u32 tcpi_min_rtt (Linux 4.6+), microseconds
_NO_SAMPLE = 0xFFFFFFFF


class Limit(enum.Enum):
    """Which bound decided a credit."""
    CAP = "cap"
    PING = "ping"
    KERNEL = "kernel"
    CAUSALITY = "causality"
    UNMEASURED = "unmeasured"      # no kernel measure: no credit


@attrs.frozen
class Reach:
    """What a connection's intents can be credited at most (s), before causality: the
    smallest of its bounds. None: that bound is not measured (yet)."""
    ping: float | None = None
    kernel: float | None = None

    def value(self) -> float:
        """The bound itself. No kernel measure: no credit (the server credits only delay
        its kernel has seen). No pong yet: the kernel's alone (a client that never answers
        gets what an honest one at its distance gets, no more, no less)."""
        k = self.kernel
        if k is None:
            return 0.0
        p = self.ping
        return p if p is not None and p < k else k

    def ping_may_decide(self) -> bool:
        """Whether a ping could lower ``value``: there is a kernel bound (without one there
        is no credit to lower) and the pings' is not known yet or is the smaller. Where the
        kernel reports its smallest round trip (tcpi_min_rtt), no ping can: the kernel timed
        every ping's segment too, up to the acknowledgment that comes with its pong or
        before it, so its minimum is at most half of any ping's round trip (12,006 of
        12,006 credits at 1,000 players were the kernel's, bench/README.md). The pings
        then matter where the kernel has only its smoothed round trip (tcpi_rtt, older
        kernels), and there they are sent often (server/connection.py ``probe_due``)."""
        k = self.kernel
        if k is None:
            return False
        p = self.ping
        return p is None or p < k


@attrs.frozen
class Credit:
    """The delay (s) an intent is credited with (``value``, at most the table's cap), the
    smallest of its measured bounds (``bound``: what the log records as its delay), and
    the bound that decided it."""
    value: float
    bound: float
    limit: Limit


@attrs.frozen
class Placed:
    """An intent's place: its key (s, the clock arrival was read on) and its credit."""
    key: float
    credit: Credit


def credit(reach: Reach, cap: float, arrival: float, seen_at: float | None) -> Credit:
    """The credit of an intent that arrived at ``arrival``; ``seen_at``: when the state it
    acts on was written to its connection (None: unknown, no causality bound)."""
    if reach.kernel is None:
        return Credit(0.0, 0.0, Limit.UNMEASURED)
    best, limit = reach.kernel, Limit.KERNEL
    if reach.ping is not None and reach.ping < best:
        best, limit = reach.ping, Limit.PING
    if seen_at is not None:
        causal = (arrival - seen_at) / 2       # the way out and the way in
        if causal < best:
            best, limit = (causal if causal > 0 else 0.0), Limit.CAUSALITY
    if cap < best:
        return Credit(cap, best, Limit.CAP)
    return Credit(best, best, limit)


def place(reach: Reach, cap: float, arrival: float, seen_at: float | None, after: float | None = None) -> Placed:
    """An intent's key: arrival - LEGS x credit, yet not before ``after`` (the key of its
    connection's previous held request: a connection's requests never overtake each other)."""
    c = credit(reach, cap, arrival, seen_at)
    key = arrival - LEGS * c.value
    if after is not None and after > key:
        key = after
    return Placed(key, c)


def hold(reaches: Iterable[float], cap: float) -> float:
    """How long an intent waits after its key: LEGS x the largest reach among the other
    seats (capped), since an intent of seat j with an earlier key arrives before
    key + LEGS x its credit, and its credit is at most its reach."""
    h = 0.0
    for r in reaches:
        if r > h:
            h = r
    return LEGS * (h if h < cap else cap)


def half_kernel_rtt(tcp_info: bytes) -> float | None:
    """Half the smallest round trip (s) the kernel measured, from getsockopt(IPPROTO_TCP,
    TCP_INFO) bytes (Linux's struct tcp_info); the smoothed one on a kernel too old to
    report the minimum; None when the kernel has no sample or the bytes are too short."""
    if len(tcp_info) >= _TCPI_MIN_RTT + 4:
        (us,) = struct.unpack_from("=I", tcp_info, _TCPI_MIN_RTT)
        if us != _NO_SAMPLE and us > 0:
            return us / 2e6
    if len(tcp_info) >= _TCPI_RTT + 4:
        (us,) = struct.unpack_from("=I", tcp_info, _TCPI_RTT)
        if us > 0:
            return us / 2e6
    return None


class WriteTimes:
    """When each of the last WRITES_KEPT seqs was written to one connection (seqs rise):
    bounded memory, one append per update. Two deques of numbers, not one of (seq, at)
    pairs: a pair per seat per update, kept for 64 updates, was most of what the young
    generation held at 4,000 players (bench/README.md, "The tail at 4,000 players")."""

    __slots__ = ("_seqs", "_ats")

    def __init__(self) -> None:
        self._seqs: deque = deque(maxlen=WRITES_KEPT)
        self._ats: deque = deque(maxlen=WRITES_KEPT)

    def wrote(self, seq: int, at: float) -> None:
        """Seq ``seq`` (an update, or a snapshot at that seq) was written at ``at``."""
        s = self._seqs
        if s and s[-1] >= seq:
            if s[-1] == seq:
                return          # already written: the first write is the one that counts
            s.clear()           # a lower seq: another table's (the connection moved on)
            self._ats.clear()
        s.append(seq)
        self._ats.append(at)

    def seen_at(self, k: int | None, arrival: float) -> float | None:
        """When this connection was first written a seq >= ``k``: the earliest it can have
        seen seq k. ``arrival`` if none was written before then (it named what it had not
        been shown: no credit); None if unknown (k is None, or older than what is kept)."""
        s = self._seqs
        if k is None or not s or s[0] > k:
            return None
        found = None
        for seq, at in zip(reversed(s), reversed(self._ats)):
            if seq < k:
                break
            found = at
        if found is None or found > arrival:
            return arrival
        return found


class Touched:
    """The seq at which what an intent needs came to be, from the events the engine gave
    (the table's state, never what a client says), at most NAMES_KEPT of them. Run Wild's
    actions name melds: a take of card c from meld m (a swap taking c) needs c to be in m,
    which it is since the seq that put it there; an add to m needs m, there since it was
    played. A later change elsewhere in the meld is not needed, so it does not count.
    Names are ints (``_meld_name``, ``_card_name``), not tuples: no object of the
    collector's to keep per event (bench/README.md, "The tail at 4,000 players")."""

    __slots__ = ("_since",)

    def __init__(self) -> None:
        self._since: dict = {}

    def _put(self, name: int | None, seq: int) -> None:
        if name is None:
            return
        since = self._since
        since.pop(name, None)
        since[name] = seq
        if len(since) > NAMES_KEPT:
            del since[next(iter(since))]

    def changed(self, seq: int, events: Iterable[Mapping]) -> None:
        for e in events:
            kind = e.get("event")
            meld = e.get("meld")
            if type(meld) is not int:
                continue
            if kind == "meld_played":
                self._put(_meld_name(meld), seq)
                for c in e.get("cards", ()):
                    self._put(_card_name(meld, c), seq)
            elif kind == "card_added":
                self._put(_card_name(meld, e.get("card")), seq)
            elif kind == "card_swapped":
                self._put(_card_name(meld, e.get("gave")), seq)

    def last(self, action: object) -> int | None:
        """The seq since which what ``action`` (the intent's map) needs is there; None if
        it names nothing kept (no causality bound)."""
        if not isinstance(action, Mapping):
            return None
        meld, kind = action.get("meld"), action.get("kind")
        if type(meld) is not int:
            return None
        if kind == "take":
            name = _card_name(meld, action.get("card"))
        elif kind == "swap":
            name = _card_name(meld, action.get("take"))
        else:
            name = _meld_name(meld)
        return None if name is None else self._since.get(name)


_CARDS = 1 << 16        # card ids below this name a (meld, card); more names nothing


def _meld_name(meld: int) -> int | None:
    """A meld's name in Touched: -1 - meld (negative; a card's name is not)."""
    return -1 - meld if meld >= 0 else None


def _card_name(meld: int, card: object) -> int | None:
    """Card ``card`` in meld ``meld``: meld * 2**16 + card (0 or more); None for what no
    engine names (not an int, or out of range)."""
    if type(card) is not int or not 0 <= card < _CARDS or meld < 0:
        return None
    return meld * _CARDS + card
