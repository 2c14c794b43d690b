"""The hostile-network kit: a stranger's raw bytes on a plain socket, and a well-behaved
player who must not notice.

The attacker side builds HTTP and RFC 6455 frames by hand (``struct``, plain Trio
sockets, msgpack for the payloads) and parses what the server sends back with its own
small parser: nothing of ours (no tests/rawclient.py, trio-websocket or wsproto) sits
between the test and the server's bytes, so a garbled stream, a missing close frame or
a frame after the close shows as it is.

The well-behaved side (``steady_player``) is our own client code: two seats at a Run
Wild table of their own that act at a steady pace during the attack; at exit it asserts
that every intent was answered and that the p95 of intent-to-update stayed under 50 ms.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import json
import math
import os
import socket
import struct
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from adversarial_kit import start_serve
from alonekit import ALONE_ENV
from proc import LineReader
from serverkit import running_server
from waitkit import wait_until

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


# ------------------------------------------------------------------ bytes on the wire

def new_key() -> str:
    return base64.b64encode(os.urandom(16)).decode()


def accept_for(key: str) -> str:
    """The Sec-WebSocket-Accept a server must answer ``key`` with (RFC 6455 section 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


def upgrade_request(host: str, *, path: str = "/", key: str | None = None, origin: str | None = None,
                    version: str = "13", extra: tuple[str, ...] = ()) -> bytes:
    """An HTTP/1.1 WebSocket upgrade request, by hand."""
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key or new_key()}", f"Sec-WebSocket-Version: {version}"]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    lines.extend(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def client_frame(opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0, masked: bool = True,
                 length: int | None = None, mask: bytes | None = None) -> bytes:
    """One client frame (RFC 6455 section 5.2). ``rsv`` is the 3 RSV bits (0..7);
    ``length`` declares a payload length other than the payload's own (a lie, or a header
    sent without its payload); ``masked=False`` leaves the mask bit off, as only servers may."""
    n = len(payload) if length is None else length
    b0 = (0x80 if fin else 0) | (rsv & 7) << 4 | (opcode & 0xF)
    mbit = 0x80 if masked else 0
    if n < 126:
        head = struct.pack("!BB", b0, mbit | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", b0, mbit | 126, n)
    else:
        head = struct.pack("!BBQ", b0, mbit | 127, n)
    if not masked:
        return head + payload
    mask = mask or os.urandom(4)
    return head + mask + apply_mask(payload, mask)


def apply_mask(data: bytes, mask: bytes) -> bytes:
    if not data:
        return b""
    n = len(data)
    whole = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(whole, "big")).to_bytes(n, "big")


def pack(msg: dict) -> bytes:
    return msgpack.packb(msg)


def binary(msg: dict) -> bytes:
    """One masked binary frame holding ``msg`` as msgpack."""
    return client_frame(OP_BINARY, pack(msg))


def close_payload(code: int, reason: str = "") -> bytes:
    return struct.pack("!H", code) + reason.encode()


@dataclass
class Frame:
    """One frame as the server sent it."""
    fin: bool
    rsv: int
    opcode: int
    masked: bool
    payload: bytes

    @property
    def code(self) -> int | None:
        """A close frame's status code (None: no code, or not a close frame)."""
        if self.opcode != OP_CLOSE or len(self.payload) < 2:
            return None
        return struct.unpack("!H", self.payload[:2])[0]

    @property
    def reason(self) -> str:
        return self.payload[2:].decode(errors="replace") if self.opcode == OP_CLOSE else ""

    def message(self):
        """A binary frame's msgpack map."""
        assert self.opcode == OP_BINARY and self.fin, self
        return msgpack.unpackb(self.payload, raw=False, strict_map_key=False)

    def __repr__(self) -> str:
        body = f"{self.code} {self.reason!r}" if self.opcode == OP_CLOSE else f"{len(self.payload)} B"
        return f"<frame op={self.opcode:#x} fin={self.fin} rsv={self.rsv} masked={self.masked} {body}>"


@dataclass
class Head:
    """An HTTP response head."""
    status: int
    reason: str
    headers: dict[str, str]
    raw: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class Gone(Exception):
    """The server ended the TCP connection (EOF or reset) before what was awaited came."""


@dataclass
class Raw:
    """A plain TCP socket to the server, reading only what the test asks for."""
    sock: trio.socket.SocketType
    port: int
    buf: bytearray = field(default_factory=bytearray)
    eof: bool = False
    reset: bool = False
    rate: float | None = None       # bytes per second at most, once set (a slow reader)
    _rate_start: float = 0.0
    _rate_read: int = 0

    def read_at(self, rate: float | None) -> None:
        """From now on take at most ``rate`` bytes per second from the socket (None: no limit)."""
        self.rate, self._rate_start, self._rate_read = rate, trio.current_time(), 0

    @classmethod
    async def open(cls, port: int, *, source: str | None = None, rcvbuf: int | None = None) -> "Raw":
        """Connect to 127.0.0.1:``port``, from ``source`` (any 127.x.y.z: another address)."""
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if rcvbuf:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            if source:
                await sock.bind((source, 0))
            await sock.connect(("127.0.0.1", port))
        except BaseException:
            sock.close()
            raise
        return cls(sock, port)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Raw":
        return self

    def __exit__(self, *exc) -> None:
        self.sock.close()

    async def __aenter__(self) -> "Raw":        # also in an ``async with`` beside other contexts
        return self

    async def __aexit__(self, *exc) -> None:
        self.sock.close()

    async def send(self, data: bytes) -> bool:
        """Send all of ``data``; False if the server had already closed or reset."""
        view = memoryview(data)
        try:
            while view:
                n = await self.sock.send(view)
                view = view[n:]
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    async def _fill(self, want: int = 65536) -> None:
        if self.eof:
            raise Gone("the server closed the connection")
        if self.rate:
            step = 512
            allowed = self.rate * (trio.current_time() - self._rate_start) - self._rate_read
            if allowed < step:
                await trio.sleep((step - allowed) / self.rate)
                allowed = step
            want = min(want, int(allowed))
        try:
            chunk = await self.sock.recv(want)
            self._rate_read += len(chunk)
        except ConnectionResetError:
            chunk, self.reset = b"", True
        if not chunk:
            self.eof = True
            raise Gone("the server closed the connection" + (" (reset)" if self.reset else ""))
        self.buf += chunk

    async def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            await self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    async def read_head(self) -> Head:
        """An HTTP response head (status line and headers); the bytes after it stay buffered."""
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > 65536:
                raise AssertionError(f"no end of an HTTP head in {len(self.buf)} bytes: {bytes(self.buf[:200])!r}")
            try:
                await self._fill()
            except Gone:
                if self.buf:
                    raise Gone(f"the server closed after a partial head: {bytes(self.buf)!r}") from None
                raise
        raw, rest = bytes(self.buf).split(b"\r\n\r\n", 1)
        self.buf = bytearray(rest)
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        assert parts[0].startswith("HTTP/1."), f"not an HTTP response: {raw[:200]!r}"
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        return Head(int(parts[1]), parts[2] if len(parts) > 2 else "", headers, raw)

    async def read_frame(self) -> Frame:
        b0, b1 = await self._take(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self._take(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self._take(8))
        mask = await self._take(4) if b1 & 0x80 else None
        payload = await self._take(n)
        if mask:
            payload = apply_mask(payload, mask)
        return Frame(bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0xF, mask is not None, payload)

    async def read_message(self) -> dict:
        """The next binary frame's message (pings are answered; anything else fails)."""
        while True:
            f = await self.read_frame()
            if f.opcode == OP_PING:
                await self.send(client_frame(OP_PONG, f.payload))
                continue
            return f.message()

    async def until_close(self) -> tuple[list[Frame], Frame | None]:
        """Frames up to and with the server's close frame: (those before it, the close);
        (all, None) if the connection ended without one."""
        seen = []
        try:
            while True:
                f = await self.read_frame()
                if f.opcode == OP_CLOSE:
                    return seen, f
                seen.append(f)
        except Gone:
            return seen, None

    async def after_close(self) -> list[Frame]:
        """What the server sends after its close frame, up to the end of the connection
        (the caller bounds the wait): must be nothing."""
        after = []
        try:
            while True:
                after.append(await self.read_frame())
        except Gone:
            return after

    async def wait_gone(self) -> bytes:
        """Until the server ends the TCP connection; what it sent meanwhile (and what was
        buffered), returned."""
        got = bytearray(self.buf)
        self.buf.clear()
        while not self.eof:
            try:
                await self._fill()
            except Gone:
                break
            got += self.buf
            self.buf.clear()
        return bytes(got)


async def upgraded(port: int, *, source: str | None = None, rcvbuf: int | None = None,
                   origin: str | None = None) -> Raw:
    """A raw connection past a checked handshake (101, the right accept)."""
    raw = await Raw.open(port, source=source, rcvbuf=rcvbuf)
    try:
        key = new_key()
        await raw.send(upgrade_request(raw.host, key=key, origin=origin))
        head = await raw.read_head()
        assert head.status == 101, head.raw
        assert head.header("sec-websocket-accept") == accept_for(key), head.raw
    except BaseException:
        raw.close()
        raise
    return raw


async def refused_503(port: int, source: str | None = None, within: float = 2) -> None:
    """A new connection (sending nothing) is answered 503 and closed, at once."""
    with await Raw.open(port, source=source) as raw:
        with trio.fail_after(within):
            head = await raw.read_head()
        assert head.status == 503, head.raw
        await ends_within(raw, within, "after its 503")


async def said_hello(port: int, name: str = "stranger", **kw) -> Raw:
    """``upgraded``, then hello answered with welcome."""
    raw = await upgraded(port, **kw)
    try:
        await raw.send(binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": name}))
        welcome = await raw.read_message()
        assert welcome["type"] == "welcome", welcome
    except BaseException:
        raw.close()
        raise
    return raw


async def close_code(raw: Raw, within: float = 5) -> tuple[list[Frame], Frame | None]:
    """The frames before the server's close frame and the close frame, read within ``within`` s."""
    with trio.fail_after(within):
        return await raw.until_close()


async def every_case(cases: dict, check) -> None:
    """``await check(name, case)`` for each of ``cases`` in turn, all of them even when some
    go wrong; then fail naming each that did. For one attack of many kinds against one
    server (a server and its steady player for each kind cost a third of a second of
    set-up, and the player measured almost nothing but the quiet after it)."""
    wrong = []
    for name, case in cases.items():
        try:
            await check(name, case)
        except trio.TooSlowError:
            wrong.append(f"{name}: no answer in time")
        except (AssertionError, Gone) as e:
            wrong.append(f"{name}: {e}")
    assert not wrong, "\n".join(wrong)


async def ends_within(raw: Raw, seconds: float, what: str = "") -> bytes:
    """The server ends the TCP connection within ``seconds``; what it sent until then."""
    with trio.move_on_after(seconds):
        return await raw.wait_gone()
    raise AssertionError(f"the server kept the connection open for more than {seconds:g} s {what}".rstrip())


# ------------------------------------------------------------------ the Origin check, by hand

# origins that are not the server's (with {port}: the server's port)
FOREIGN = ["http://evil.example", "https://evil.example", "http://evil.example:{port}", "null",
           "http://localhost:{port}", "http://127.0.0.1:1", "http://127.0.0.1.evil.example:{port}"]


async def handshake_status(port: int, origin: str | None) -> tuple[int, Raw]:
    raw = await Raw.open(port)
    try:
        key = new_key()
        await raw.send(upgrade_request(raw.host, key=key, origin=origin))
        with trio.fail_after(5):
            head = await raw.read_head()
        if head.status == 101:
            assert head.header("sec-websocket-accept") == accept_for(key), head.raw
    except BaseException:
        raw.close()
        raise
    return head.status, raw


async def refused_403(port: int, origin: str) -> None:
    status, raw = await handshake_status(port, origin)
    with raw:
        assert status == 403, f"Origin {origin!r} got {status}, not 403"
        # a frame sent anyway is not a WebSocket message: no welcome, and the socket closes
        await raw.send(binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": "page"}))
        rest = await ends_within(raw, 3, f"after refusing Origin {origin!r}")
        assert b"welcome" not in rest, rest


async def accepted_101(port: int, origin: str | None) -> None:
    status, raw = await handshake_status(port, origin)
    raw.close()
    assert status == 101, f"Origin {origin!r} got {status}, not 101"


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


@asynccontextmanager
async def serve_process(data_dir, *flags):
    """`wildtable serve --port 0 --data-dir DATA_DIR FLAGS` as a real process (its stderr
    drained, see adversarial_kit.start_serve); yield it; stopped (SIGTERM, then SIGKILL
    after 10 s) at exit."""
    async with trio.open_nursery() as bg:
        srv = await start_serve(bg, data_dir, *flags)
        try:
            yield srv
        finally:
            with trio.CancelScope(shield=True):
                if srv.proc.returncode is None:
                    srv.proc.terminate()
                with trio.move_on_after(10):
                    await srv.proc.wait()
                if srv.proc.returncode is None:
                    srv.proc.kill()
                    await srv.proc.wait()
            bg.cancel_scope.cancel()


class Sockets(list):
    """Raw connections a test opens; every one is closed at the end of the ``with``."""

    def __enter__(self) -> "Sockets":
        return self

    def __exit__(self, *exc) -> None:
        for raw in self:
            raw.close()

    async def __aenter__(self) -> "Sockets":    # also in an ``async with`` beside other contexts
        return self

    async def __aexit__(self, *exc) -> None:
        self.__exit__()


# ------------------------------------------------------------------ the well-behaved player

P99_LIMIT = 0.050       # seconds, intent sent to its update received
# Seconds between two intents of the steady player: 100 a second of the two seats, 50 each,
# what `serve`'s default --rate-limit allows (and bursts of 100 besides); a rate_limited
# answer fails the player (_run_wild_pair). At 25 ms the same counts of intents took 0.5 s
# more before and after each attack (20 in, 20 at least after; 100 after, of a process).
PACE = 0.010
# Before the attack the steady player plays CALM intents alone: what the machine allows
# now. On a machine others load (two busy loops, other suites), the scheduler alone delays
# an answer by 100-500 ms, attack or none; the bound is then CALM_FACTOR times what the
# same player saw just before, measured side by side. On an idle machine the calm figure
# is a few ms, and P99_LIMIT is the bound, as before.
# The figure judged is the 95th percentile, not the 99th: over 100 intents the p99 is one
# answer, and one scheduler hiccup of a loaded machine (a 104 ms answer beside a calm
# 10 ms, median 6 ms, in a CI run at load 13) failed a test no attack had slowed. The
# attacks these tests guard against move the whole distribution (issue #22: median 250-380
# ms, p99 405-490 ms under the ping flood), which the p95 shows as well.
CALM = 20
CALM_FACTOR = 10.0
JUDGED = 0.95


def seated_alone() -> None:
    """Fail a test that seats the steady player but is not ``alone`` (tests/alonekit.py:
    tests/conftest.py marks those it finds; this catches the rest): beside other tests it
    measures them, not the attack."""
    if os.environ.get(ALONE_ENV) == "0":
        raise AssertionError("this test seats the steady player, so it must be marked alone "
                             "(pytestmark = pytest.mark.alone; see tests/alonekit.py)")


def p99_bound(limit: float, calm: "Steady") -> float:
    """What the attack's p95 must stay under: ``limit``, or CALM_FACTOR times the calm p95."""
    return max(limit, CALM_FACTOR * calm.quantile(JUDGED))


@dataclass
class Steady:
    """What the steady player measured (seconds)."""
    latencies: list[float] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    sent: int = 0

    def quantile(self, q: float) -> float:
        xs = sorted(self.latencies)
        return xs[max(0, math.ceil(len(xs) * q) - 1)] if xs else math.inf

    def p99(self) -> float:
        return self.quantile(0.99)

    def summary(self) -> str:
        xs = sorted(self.latencies)
        if not xs:
            return f"no intent answered of {self.sent}"
        return (f"{len(xs)} of {self.sent} intents answered; median {xs[len(xs) // 2] * 1000:.1f} ms, "
                f"p95 {self.quantile(0.95) * 1000:.1f} ms, p99 {self.p99() * 1000:.1f} ms, max {xs[-1] * 1000:.1f} ms")


class _Seat:
    """One of the steady player's seats: a reader task keeps its latest view and answers."""

    def __init__(self, conn, joined: m.Joined):
        self.conn, self.seat = conn, joined.seat
        self.view = joined.view
        self.seq = joined.seq
        self.changed = trio.Event()
        self.waiting: int | None = None     # the intent in flight
        self.want_seq: int | None = None    # its accepted seq, until that update comes
        self.done = trio.Event()
        self.outcome = None

    async def read(self) -> None:
        while True:
            msg = await self.conn.receive()
            t = type(msg)
            if t is m.Update:
                self.view, self.seq = msg.view, msg.seq
                if self.want_seq is not None and msg.seq >= self.want_seq:
                    self.want_seq = None
                    self.done.set()
                self.changed.set()
                self.changed = trio.Event()
            elif t is m.Accepted and msg.intent == self.waiting:
                self.outcome = msg
                if self.seq >= msg.seq:
                    self.done.set()
                else:
                    self.want_seq = msg.seq
            elif t is m.Rejected and msg.intent == self.waiting:
                self.outcome = msg
                self.done.set()

    def next_action(self) -> dict | None:
        """ready, draw until the pile is empty, then stuck: a Run Wild round with no end
        but the players' own, and an update for every intent."""
        v = self.view
        me = v["players"][self.seat]
        if not me["in_round"]:
            return None
        if v["phase"] == "ready":
            return None if me["ready"] else {"kind": "ready"}
        if v["phase"] == "playing":
            if me["pile"] > 0:
                return {"kind": "draw"}
            return None if me["stuck"] else {"kind": "stuck"}
        return None


@asynccontextmanager
async def _run_wild_pair(url: str, prefix: str, pace: float, stats: Steady, answer_within: float):
    """Two seats of a fresh Run Wild table (our own client code) that take turns acting
    every ``pace`` s (ready, draw, stuck; one intent in flight); yield (table, stop event,
    failures). ``stats`` gets each intent's intent-to-update time."""
    async with connect(url, f"{prefix}-a") as a, connect(url, f"{prefix}-b") as b:
        # fair_ms 0: its own delay probes and holds would be noise in what it measures
        await a.send(m.CreateTable("run-wild", 2, {"rounds": 100, "idle_timeout": 3600, "fair_ms": 0}, prefix))
        created = await a.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
        assert isinstance(created, m.TableCreated), created
        seats = []
        for i, c in enumerate((a, b)):
            await c.send(m.Join(created.table, i))
            j = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
            assert isinstance(j, m.Joined), j
            seats.append(_Seat(c, j))
        stop = trio.Event()
        failed: list[BaseException] = []

        async def act() -> None:
            iid = 0
            turn = 0
            nxt = trio.current_time()
            while not stop.is_set():
                nxt += pace
                await trio.sleep_until(nxt)
                # the deal comes right after both joined: wait for a seat with something to do
                for k in range(2):
                    s = seats[(turn + k) % 2]
                    action = s.next_action()
                    if action is not None:
                        break
                else:
                    continue
                turn += 1
                iid += 1
                s.waiting, s.outcome, s.want_seq, s.done = iid, None, None, trio.Event()
                stats.sent += 1
                t0 = time.perf_counter()
                await s.conn.send(m.Intent(iid, action))
                with trio.move_on_after(answer_within):
                    await s.done.wait()
                if not s.done.is_set():
                    stats.unanswered.append(f"intent {iid} {action} of seat {s.seat}: {s.outcome!r}")
                    stop.set()          # the player gives up: a caller waiting for answers stops too
                    return
                if isinstance(s.outcome, m.Rejected) and s.outcome.code == "rate_limited":
                    # an answer, but not the server's judgement of the game: the pace is wrong
                    stats.unanswered.append(f"intent {iid} {action} of seat {s.seat} rate limited "
                                            f"(pace {pace:g} s): {s.outcome!r}")
                    stop.set()
                    return
                stats.latencies.append(time.perf_counter() - t0)
                s.waiting = None
                nxt = max(nxt, trio.current_time())

        async def guarded(fn) -> None:
            try:
                await fn()
            except Exception as e:      # the player's connection failing is a finding, not a crash of the test
                failed.append(e)
                stop.set()

        async with trio.open_nursery() as nursery:
            for s in seats:
                nursery.start_soon(guarded, s.read)
            nursery.start_soon(guarded, act)
            try:
                yield created.table, stop, failed
            finally:
                stop.set()
                nursery.cancel_scope.cancel()


@asynccontextmanager
async def steady_player(url: str, *, pace: float = PACE, limit: float = P99_LIMIT, answer_within: float = 5.0,
                        min_intents: int = 20):
    """Seat a well-behaved player (two seats of a Run Wild table of its own, our own
    client code) and act at a steady pace while the body runs (the attack). At exit:
    every intent was answered, and the p95 of intent-to-update is under ``limit`` (JUDGED). An
    attack over in a moment still waits for ``min_intents`` answers before the check: 20, so
    that the p95 is the second slowest answer at least (over 10 it was the slowest: one
    scheduler hiccup under two busy loops, 155.6 ms beside a calm 7 ms, failed a test).

    Intent-to-update: from sending an intent to receiving the update of the seq it was
    accepted at (or its rejection, which has no update). One intent in flight at a time;
    the seats take turns."""
    seated_alone()
    stats = Steady()
    # This process's own cyclic collections (a whole test session's objects) would show as
    # the server's delay: collect now, and not while measuring.
    gc.collect()
    gc.disable()
    try:
        async with _run_wild_pair(url, "steady", pace, stats, answer_within) as (table, stop, failed):
            await wait_until(lambda: len(stats.latencies) >= CALM or stop.is_set(), step=pace,
                             timeout=answer_within + CALM * pace * 4, what=f"{CALM} calm intents answered")
            calm = Steady(stats.latencies[:], [], len(stats.latencies))
            del stats.latencies[:]
            stats.sent -= calm.sent
            yield stats
            with trio.move_on_after(answer_within + min_intents * pace * 4):
                while len(stats.latencies) < min_intents and not stop.is_set():
                    await trio.sleep(pace)
    finally:
        gc.enable()
    assert not failed, f"the well-behaved player's connection failed during the attack: {failed!r}; {stats.summary()}"
    assert not stats.unanswered, f"unanswered: {stats.unanswered}; {stats.summary()}"
    assert len(stats.latencies) >= min_intents, f"too few intents to measure: {stats.summary()}"
    assert stats.quantile(JUDGED) < p99_bound(limit, calm), \
        f"the well-behaved player slowed down during the attack: {stats.summary()}; before it: {calm.summary()}"


@asynccontextmanager
async def steady_player_process(url: str, *, pace: float = PACE, limit: float = P99_LIMIT, min_intents: int = 100):
    """``steady_player`` in a process of its own (tests/steady_main.py): for attacks whose
    own traffic from this process would otherwise show in the measurement. The same
    checks at exit, over at least 100 intents (it plays on until it has them): over fewer,
    the p95 is one of the slowest few, and a hiccup of the machine fails a short attack."""
    seated_alone()
    proc = await trio.lowlevel.open_process(
        [sys.executable, str(Path(__file__).with_name("steady_main.py")), url, str(pace), str(min_intents)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = LineReader(proc.stdout)
    try:
        await out.until(r"^seated$", timeout=20)
        calm = Steady(json.loads((await out.until(r"^calm (.*)$", timeout=30))[1]), [], CALM)
        yield
        await proc.stdin.send_all(b"stop\n")
        line = await out.until(r"^\{.*\}$", timeout=30)
        got = json.loads(line.group(0))
    finally:
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                with trio.move_on_after(5):
                    await proc.wait()
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
    stats = Steady(got["latencies"], got["unanswered"], got["sent"])
    assert not got["failed"], f"the well-behaved player's connection failed during the attack: {got['failed']}; {stats.summary()}"
    assert not stats.unanswered, f"unanswered: {stats.unanswered}; {stats.summary()}"
    assert len(stats.latencies) >= min_intents, f"too few intents to measure: {stats.summary()}"
    assert stats.quantile(JUDGED) < p99_bound(limit, calm), \
        f"the well-behaved player slowed down during the attack: {stats.summary()}; before it: {calm.summary()}"


@asynccontextmanager
async def under_attack(config, **runs_on):
    """An in-process server (serverkit.running_server: ``config`` a ServerConfig or a data
    dir) with the steady player at a table of its own for the whole attack; yield (server,
    url, port)."""
    async with running_server(config, **runs_on) as (server, url), steady_player(url):
        yield server, url, port_of(url)


@asynccontextmanager
async def busy_table(url: str, pace: float = 0.004):
    """A Run Wild table whose two players act every ``pace`` s (an update each time) while
    the body runs: a table that produces faster than a slow spectator reads. Yield (its id,
    the players' Steady: one answered intent per update made)."""
    stats = Steady()
    async with _run_wild_pair(url, "busy", pace, stats, 10.0) as (table, stop, failed):
        yield table, stats
    assert not failed and not stats.unanswered, (failed, stats.unanswered)
