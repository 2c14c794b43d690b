"""The simulated network: one Link per connection, messages in order each way (as a TCP
stream delivers them) after seeded delays and jitter; cuts, partitions and slow readers.

The server's end of a link is a ``SimPeer``, which keeps server/wire.py's Peer contract
(server/world.py, Transport): ``write`` never waits and says how many frames wait in the
backlog; ``flush`` writes them as the reader takes them and raises SendStalled when it
takes nothing for the timeout; ``receive`` raises ConnectionClosed once the link is cut or
the peer's close frame came; pings are answered by the client end and their round trip
goes to ``on_rtt``. The client's end is a ``ClientEnd``.
"""

from __future__ import annotations

import math
import random
import zlib
from collections import deque

import trio

from wildtable.server.wire import ConnectionClosed, SendStalled

from .pause import NodeClock

WINDOW = 32 * 1024        # bytes in flight to a client before the server's writes wait (its socket buffers)
_MSG, _PING, _PONG, _CLOSE = range(4)


class Closed(Exception):
    """The client's end: the link is cut or closed (``code``, ``reason`` of the close)."""

    def __init__(self, code: int | None, reason: str = ""):
        super().__init__(code, reason)
        self.code, self.reason = code, reason


class _Way:
    """One direction of a link: frames in order, each due at its time."""

    def __init__(self, rng: random.Random):
        self.rng = rng                 # its own: the two ends send at one instant in any order
        self.q: deque = deque()        # (due, kind, data)
        self.last = 0.0
        self.bell = trio.Event()       # rung when the link is cut
        self.waiting: trio.CancelScope | None = None   # the taker's wait for the head, while it waits
        self.drawn = (-math.inf, 0.0)  # (the instant, the delay drawn for what is sent then)

    def put(self, due: float, kind: int, data) -> None:
        due = max(due, self.last)      # in order, like a stream
        self.last = due
        self.q.append((due, kind, data))
        if len(self.q) == 1 and self.waiting is not None:
            # a new head: the taker's wait ends when it is due (it is woken once, then,
            # not now and again then; a frame behind the head changes nothing)
            self.waiting.deadline = due

    async def take(self, link: "Link"):
        """The next frame once it is due; None once the link is cut."""
        while True:
            if link.cut:
                return None
            q = self.q
            if q and q[0][0] <= trio.current_time():
                return q.popleft()
            if self.bell.is_set():
                self.bell = trio.Event()
            with trio.move_on_at(q[0][0] if q else math.inf) as self.waiting:
                try:
                    await self.bell.wait()
                finally:
                    self.waiting = None


class Link:
    """One connection between a client and a node. ``rng`` is the link's own (seeded from
    the run's seed and the link's number), so what it draws does not depend on the order
    other links are used in."""

    def __init__(self, net: "Net", n: str, node: str, rng: random.Random, base: float, jitter: float,
                 read_rate: float):
        self.net, self.n, self.node, self.rng = net, n, node, rng     # n: "client.k", its k-th link
        self.base, self.jitter = base, jitter
        self.read_rate = read_rate     # bytes/s the client reads at (math.inf: as fast as they come)
        # client -> server, server -> client
        self.up, self.down = _Way(random.Random(rng.getrandbits(64))), _Way(random.Random(rng.getrandbits(64)))
        self.cut = False
        self.in_flight = 0             # bytes sent to the client and not yet read by it
        self.read_bell = trio.Event()
        self.server = SimPeer(self)
        self.client = ClientEnd(self)

    def delay(self, way: _Way) -> float:
        """How long what is sent ``way`` now travels: one draw per instant and way, shared
        by all that is sent then (one burst), so that the draws do not hang on the order
        Trio runs the tasks that send at one instant (a node's pinger and a table's
        sender woken together on resume, say): docs/ARCHITECTURE.md, "Determinism"."""
        now = trio.current_time()
        at, d = way.drawn
        if at != now:
            d = self.base + way.rng.random() * self.jitter
            way.drawn = (now, d)
        held = self.net.held.get(self.node)       # the node's links hold everything until then
        if held is not None:
            d += max(0.0, held - trio.current_time())
        return d

    def sever(self) -> None:
        """Cut: both ends see the connection gone; what was in flight is lost."""
        if not self.cut:
            self.cut = True
            self.up.bell.set()
            self.down.bell.set()
            self.read_bell.set()
            self.net.links.discard(self)


class SimPeer:
    """The server's end of a link (server/world.py Transport, as server/wire.py's Peer)."""

    def __init__(self, link: Link):
        self.link = link
        self.clock = link.net.clocks[link.node]   # the node's: what reaches it waits while it is paused
        h = zlib.crc32(link.n.split(".")[0].encode())
        self.host = f"10.{h >> 16 & 255}.{h >> 8 & 255}.{h & 255}"
        self.remote = f"{self.host}:{40000 + int(link.n.split('.')[1])}"
        self.wake = None
        self.on_rtt = None
        self._backlog: list[bytes] = []
        self._bytes = 0
        self._closing = False
        self._ended: tuple[int | None, str] = (None, "")
        self._ping_n = 0
        self._pong: tuple[bytes, trio.Event, list[float]] | None = None     # (payload, event, [read at])
        self._probe: tuple[bytes, float] | None = None                      # (payload, sent at)
        self._flush_lock = trio.Lock()
        self.cut: str | None = None    # never set: the link carries whole messages, not frames
        self.rules = None

    def budget(self, rules) -> None:
        """The frame budget wire.Peer enforces per WebSocket frame; a link carries whole
        messages, so frames are not simulated here (tests/server/test_flood_*.py try them
        on real sockets). Kept to satisfy the Transport the Connection sets it on."""
        self.rules = rules

    def tcp_info(self) -> bytes:
        """No kernel here: the node's ``kernel_delay`` reads the link's own delay instead."""
        return b""

    # -------------------------------------------------------------- receiving
    async def receive(self) -> bytes | str:
        link = self.link
        while True:
            got = await link.up.take(link)
            await self.clock.gate()        # in the kernel's buffer until the process reads it
            if got is None:
                raise ConnectionClosed(*(self._ended if self._ended[0] else (1006, "connection lost")))
            _, kind, data = got
            if kind == _MSG:
                return data
            if kind == _PONG:
                now = trio.current_time()
                if self._pong is not None and data == self._pong[0]:
                    self._pong[2].append(now)
                    self._pong[1].set()
                    self._pong = None
                if self._probe is not None and data == self._probe[0]:
                    sent = self._probe[1]
                    self._probe = None
                    if self.on_rtt is not None:
                        self.on_rtt(now - sent)
            elif kind == _CLOSE:
                self._ended = data
                if not self._closing:       # answer the close (RFC 6455 section 5.5.1)
                    self._closing = True
                    self._push(_CLOSE, data)
                raise ConnectionClosed(*data)

    # -------------------------------------------------------------- sending
    def _push(self, kind: int, data) -> None:
        link = self.link
        if not link.cut:
            link.down.put(trio.current_time() + link.delay(link.down), kind, data)

    def _room(self, size: int) -> bool:
        return self.link.in_flight == 0 or self.link.in_flight + size <= WINDOW

    def _send_now(self, data: bytes) -> None:
        self.link.in_flight += len(data)
        self._push(_MSG, data)

    async def send(self, data: bytes) -> None:
        self.write(data)
        await self.flush(2.0)

    def write(self, data: bytes) -> int:
        return self.write_many([data])

    def write_many(self, messages: list[bytes]) -> int:
        if self._closing:
            return 0
        for d in messages:
            if not self._backlog and self._room(len(d)):
                self._send_now(d)
            else:
                self._backlog.append(d)
                self._bytes += len(d)
        return len(self._backlog)

    @property
    def backlog(self) -> int:
        return len(self._backlog)

    @property
    def backlog_bytes(self) -> int:
        return self._bytes

    def drop_backlog(self) -> None:
        self._backlog.clear()
        self._bytes = 0

    async def flush(self, stall_timeout: float | None = None) -> None:
        link = self.link
        async with self._flush_lock:
            while self._backlog:
                if link.cut:
                    raise ConnectionClosed(1006, "connection lost")
                d = self._backlog[0]
                if self._room(len(d)):
                    self._backlog.pop(0)
                    self._bytes -= len(d)
                    self._send_now(d)
                    continue
                if link.read_bell.is_set():
                    link.read_bell = trio.Event()
                with self.clock.move_on_after(stall_timeout if stall_timeout is not None else math.inf) as wait:
                    await link.read_bell.wait()
                    await self.clock.gate()
                if wait.cancelled_caught:
                    raise SendStalled(f"nothing taken for {stall_timeout:g} s")

    async def ping(self) -> float:
        if self._closing or self.link.cut:
            raise ConnectionClosed(*self._ended)
        self._ping_n += 1
        payload = b"p%d" % self._ping_n
        done = trio.Event()
        read_at: list[float] = []
        self._pong = (payload, done, read_at)
        sent = trio.current_time()
        self._push(_PING, payload)
        await done.wait()
        await self.clock.gate()
        return read_at[0] - sent

    def probe(self) -> float | None:
        if self._probe is not None:
            return self._probe[1]
        if self._closing or self.link.cut:
            raise ConnectionClosed(*self._ended)
        self._ping_n += 1
        payload = b"q%d" % self._ping_n
        self._probe = (payload, trio.current_time())
        self._push(_PING, payload)
        return None

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if not self._closing:
            self._closing = True
            with self.clock.move_on_after(2.0) as scope:     # wire.CLOSE_FLUSH
                scope.shield = True
                try:
                    await self.flush()
                except (ConnectionClosed, SendStalled):
                    pass
            self._push(_CLOSE, (code, reason))
        # the peer's side of the close, or the link's end, is the client's business: the
        # server is done with it (wire.serve lingers for it apart from the handler)

    @property
    def closed(self) -> bool:
        return self._closing or self.link.cut


class ClientEnd:
    """The client's end of a link: messages out, messages in; pings answered (a lying
    client answers late: ``pong_lag`` seconds)."""

    def __init__(self, link: Link):
        self.link = link
        self.pong_lag = 0.0
        self.stall_until = 0.0     # a reader that stops reading: takes nothing until then
        self.closed: tuple[int | None, str] | None = None
        self.nursery: trio.Nursery | None = None     # where late pongs are sent from

    def send(self, data: bytes) -> None:
        link = self.link
        if link.cut or self.closed is not None:
            raise Closed(*(self.closed or (1006, "connection lost")))
        link.up.put(trio.current_time() + link.delay(link.up), _MSG, data)

    async def receive(self) -> bytes:
        """The next message; Closed once the link is cut or the server closed it."""
        link = self.link
        while True:
            got = await link.down.take(link)
            if got is None:
                self.closed = self.closed or (1006, "connection lost")
                raise Closed(*self.closed)
            _, kind, data = got
            if kind == _MSG:
                if self.stall_until > trio.current_time():
                    await trio.sleep_until(self.stall_until)     # (the data waits at the head)
                if link.read_rate != math.inf:
                    await trio.sleep(len(data) / link.read_rate)     # a slow reader
                link.in_flight -= len(data)
                link.read_bell.set()
                return data
            if kind == _PING:
                if self.pong_lag > 0 and self.nursery is not None:
                    self.nursery.start_soon(self._late_pong, data)
                else:
                    link.up.put(trio.current_time() + link.delay(link.up), _PONG, data)
            elif kind == _CLOSE:
                self.closed = data
                if not link.cut:
                    link.up.put(trio.current_time() + link.delay(link.up), _CLOSE, data)
                link.net.loop.call_later(link.delay(link.up) * 2, link.sever)
                raise Closed(*data)

    async def _late_pong(self, data) -> None:
        await trio.sleep(self.pong_lag)
        link = self.link
        if not link.cut:
            link.up.put(trio.current_time() + link.delay(link.up), _PONG, data)

    def close(self) -> None:
        link = self.link
        if self.closed is None and not link.cut:
            self.closed = (1000, "")
            link.up.put(trio.current_time() + link.delay(link.up), _CLOSE, (1000, ""))
            link.net.loop.call_later(2.0, link.sever)


class Later:
    """Callbacks due at a time of Trio's clock, run by one task (a cut after a close)."""

    def __init__(self):
        self.due: list = []
        self.bell = trio.Event()

    def call_later(self, seconds: float, fn) -> None:
        self.due.append((trio.current_time() + seconds, len(self.due), fn))
        self.due.sort(key=lambda d: (d[0], d[1]))
        self.bell.set()

    async def run(self) -> None:
        while True:
            now = trio.current_time()
            while self.due and self.due[0][0] <= now:
                self.due.pop(0)[2]()
            self.bell = trio.Event()
            with trio.move_on_at(self.due[0][0] if self.due else math.inf):
                await self.bell.wait()


class Net:
    """Every link; the nodes that listen (a node's handler runs each new link's server
    end in the node's own nursery, so a crashed node's connections die with it)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.links: set[Link] = set()
        self.listening: dict[str, tuple] = {}     # node -> (handler, nursery)
        self.partitioned: set[str] = set()
        self.held: dict[str, float] = {}          # node -> until when its links deliver nothing new
        self.clocks: dict[str, NodeClock] = {}    # node -> its incarnation's clock (pause.py: its gate)
        self.loop = Later()
        self._n: dict[str, int] = {}

    def connect(self, node: str, who: str, client_rng: random.Random, *, slow: bool = False) -> Link | None:
        """A new link from client ``who`` to ``node``, or None if it does not listen or is
        cut off. Links are named by their client and its count of them, not by the order
        clients connect in (which may be any among clients connecting at one instant)."""
        got = self.listening.get(node)
        if got is None or node in self.partitioned:
            return None
        k = self._n[who] = self._n.get(who, 0) + 1
        rng = random.Random(client_rng.getrandbits(64))
        base = rng.choice((0.001, 0.01, 0.03, 0.08))
        link = Link(self, f"{who}.{k}", node, rng, base, base * rng.random(), 4000.0 if slow else math.inf)
        self.links.add(link)
        handler, nursery = got
        nursery.start_soon(handler, link.server)
        return link

    def cut_node(self, node: str) -> None:
        for link in [lk for lk in self.links if lk.node == node]:
            link.sever()
