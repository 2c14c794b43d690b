"""Load generator: one process driving many Run Wild tables of bot players over real
WebSockets, started by bench/load.py (run it alone for debugging).

Each player acts every ``--pace`` seconds on average (uniform jitter, 0..2x), or flat
out (``--pace 0``: the next intent leaves the moment the last one is answered). The
bots play from their own views with the client's cheap Run Wild strategy
(``quick_candidates``; ``--strategy bot`` for the full bot, which thinks too hard for
a thousand players in one process). For every intent we
record intent-to-result (accepted/rejected reaches the sender) and, for accepted ones,
intent-to-last-seat-update (the update of that seq has reached every seat of the table).

``--bare`` drives bench/bare_server.py instead: the same connections, pace and frame
sizes, but the server only fans frames out; the figures are the stack's own limit.

Transport: the generator must cost far less CPU per intent than the server it drives,
or a flat-out run measures the generator, not the server. So it does not use Trio or
trio-websocket (per frame: wsproto, a memory-channel hop, a lock, checkpoints, one task
per player). It is one thread running one ``selectors.DefaultSelector`` (epoll) loop
over non-blocking sockets, with the minimal RFC 6455 client below: an HTTP/1.1 Upgrade
handshake (Sec-WebSocket-Accept checked), masked binary frames out (written straight
with ``send``; a per-connection buffer and EVENT_WRITE only when the kernel did not take
everything), and up to 256 KiB read at a time, parsed into as many whole frames as it
holds (continuations joined, pings answered, a close answered and that player done).
Each player is a small state machine (hello -> welcome; seat 0 creates the table, the
others wait for its id; join -> joined; play; drain); paced players' next actions wait
in a heap whose nearest entry is the selector's timeout. Server frames are decoded with
plain msgpack (not the strict codec), for the same reason.

A connection refused or reset, or closed by the server before the end of the run, ends
the run at once with a message on stderr and exit status 1 (a close is answered first).

Its cyclic garbage collector is off for the run (its passes delayed what it measured).
Prints one JSON object on stdout when done.
"""

from __future__ import annotations

import argparse
import base64
import errno
import gc
import hashlib
import heapq
import json
import os
import random
import selectors
import socket
import sys
import time
from urllib.parse import urlsplit

import msgpack

from wildtable.headless.games import run_wild as strategy
from wildtable.protocol import messages as m
from wildtable.protocol.views import patched

SEATS = 4
TABLE_SETTINGS = {"idle_timeout": 30.0, "rounds": 100}     # --fair-ms adds fair_ms (else its default)
HERE = [False]      # --here: create_table with here: true (a node of a cluster makes the table itself)
RECV_BYTES = 256 * 1024
MAX_MESSAGE = 8 << 20            # as the old trio-websocket client's max_message_size
DRAIN_SECONDS = 2.0              # answers in flight may arrive this long after --seconds
CLOSE_SECONDS = 1.0              # then this long for the close handshakes
WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

EV_R = selectors.EVENT_READ
EV_RW = selectors.EVENT_READ | selectors.EVENT_WRITE

perf = time.perf_counter
unpack = msgpack.unpackb           # plain msgpack: the generator must stay cheaper than the server
getrandbits = random.getrandbits


class Fatal(Exception):
    """Ends the run: a connection failed, or the server refused to set a table up."""


class Stats:
    """Figures of the measured window only (after the warm-up: tables opened, seats taken)."""

    def __init__(self):
        self.measure_from = 0.0
        self.result_lat: list[float] = []
        self.update_lat: list[float] = []
        self.accepted = 0
        self.rejected: dict[str, int] = {}
        self.accepted_seqs: dict[str, list[int]] = {}
        self.updates = 0
        self.update_bytes = 0
        self.games_finished = 0
        self.errors: dict[str, int] = {}
        self.tables_joined: list[float] = []     # when each table had all its players


class TableRun:
    """Bookkeeping for one table: when each accepted seq reached each seat."""

    def __init__(self, stats: Stats):
        self.stats = stats
        self.table: str | None = None
        self.pending: dict[int, list] = {}     # seq -> [t_sent, seats still to hear]

    def sent_accepted(self, seq: int, t_sent: float, heard: set) -> None:
        entry = self.pending.setdefault(seq, [t_sent, set(range(SEATS))])
        entry[0] = t_sent
        self._check(seq, entry)

    def heard(self, seq: int, seat: int) -> None:
        entry = self.pending.setdefault(seq, [None, set(range(SEATS))])
        entry[1].discard(seat)
        self._check(seq, entry)

    def _check(self, seq, entry) -> None:
        if not entry[1] and entry[0] is not None:
            if entry[0] >= self.stats.measure_from:
                self.stats.update_lat.append(time.perf_counter() - entry[0])
            del self.pending[seq]
        elif not entry[1] and entry[0] is None:
            del self.pending[seq]        # a table action or chance: nobody's intent


class TableSetup:
    """A table's seats before play: who waits for the table id, how many have joined."""

    def __init__(self, run: TableRun, index: int):
        self.run = run
        self.index = index
        self.joined = 0
        self.waiting: list = []          # players past welcome, waiting for seat 0's table


# -- the event loop -------------------------------------------------------------------------

class Loop:
    def __init__(self):
        self.sel = selectors.DefaultSelector()
        self.timers: list = []           # (due, n, player); stale entries skipped on pop
        self.n = 0
        self.live: set = set()           # connections not yet done

    def at(self, player, due: float) -> None:
        """Wake ``player.on_timer`` at ``due`` (the earliest pending wake wins)."""
        if player.wake is None or due < player.wake:
            player.wake = due
            self.n += 1
            heapq.heappush(self.timers, (due, self.n, player))

    def run_timers(self, now: float) -> None:
        timers = self.timers
        while timers and timers[0][0] <= now:
            due, _, p = heapq.heappop(timers)
            if p.wake == due:
                p.wake = None
                if not p.done:
                    p.on_timer(now)

    def select(self, timeout: float) -> None:
        if self.timers:
            timeout = min(timeout, self.timers[0][0] - perf())
        for key, mask in self.sel.select(max(0.0, timeout)):
            conn = key.data
            if mask & selectors.EVENT_WRITE:
                conn.on_writable()
            if mask & EV_R and not conn.done:
                conn.on_readable()


# -- a minimal RFC 6455 client connection ------------------------------------------------------

def _frame(opcode: int, payload: bytes) -> bytes:
    """One client frame: FIN, ``opcode``, masked with a fresh key."""
    n = len(payload)
    key = getrandbits(32)
    kb = key.to_bytes(4, "big")
    if n:
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes((kb * ((n >> 2) + 1))[:n], "big")).to_bytes(n, "big")
    else:
        masked = b""
    if n < 126:
        return bytes((0x80 | opcode, 0x80 | n)) + kb + masked
    if n < 65536:
        return bytes((0x80 | opcode, 0xFE)) + n.to_bytes(2, "big") + kb + masked
    return bytes((0x80 | opcode, 0xFF)) + n.to_bytes(8, "big") + kb + masked


class Conn:
    """One WebSocket client connection. Subclasses implement ``on_open`` (handshake done),
    ``on_message(data)`` (one whole binary or text message), ``on_closed()`` (the server's
    close frame or EOF) and ``on_timer(now)``."""

    def __init__(self, loop: Loop, url: str, label: str):
        self.loop = loop
        self.label = label
        self.url = url
        self.done = False
        self.wake = None
        self.open = False             # handshake completed
        self.closing = False          # our close frame sent
        self.inbuf = bytearray()
        self.need = 2                 # bytes inbuf must hold before parsing again
        self.out = b""                # what the kernel did not take yet
        self.frags: list | None = None
        u = urlsplit(url)
        if u.scheme != "ws":
            raise Fatal(f"{url}: only ws:// URLs are supported")
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        self.path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        self.key = base64.b64encode(os.urandom(16))
        self.accept = base64.b64encode(hashlib.sha1(self.key + WS_GUID).digest())
        self.sock = s = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        err = s.connect_ex((self.host, self.port))
        if err not in (0, errno.EINPROGRESS):
            s.close()
            raise Fatal(f"{label}: cannot connect to {url}: {os.strerror(err)}")
        self.connecting = True
        loop.sel.register(s, EV_RW, self)
        loop.live.add(self)

    # -- output

    def _write(self, data: bytes) -> None:
        if self.out:
            self.out += data
            return
        try:
            sent = self.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError as e:
            self._failed(e)
            return
        if sent < len(data):
            self.out = data[sent:]
            self.loop.sel.modify(self.sock, EV_RW, self)

    def send_binary(self, payload: bytes) -> None:
        self._write(_frame(0x2, payload))

    def on_writable(self) -> None:
        if self.connecting:
            err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                raise Fatal(f"{self.label}: cannot connect to {self.url}: {os.strerror(err)}")
            self.connecting = False
            self.loop.sel.modify(self.sock, EV_R, self)
            host = self.host if self.port == 80 else f"{self.host}:{self.port}"
            self._write(f"GET {self.path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {self.key.decode()}\r\n"
                        f"Sec-WebSocket-Version: 13\r\n\r\n".encode())
            return
        if not self.out:
            return
        try:
            sent = self.sock.send(self.out)
        except BlockingIOError:
            return
        except OSError as e:
            self._failed(e)
            return
        self.out = self.out[sent:]
        if not self.out and not self.done:
            self.loop.sel.modify(self.sock, EV_R, self)

    # -- input

    def on_readable(self) -> None:
        try:
            data = self.sock.recv(RECV_BYTES)
        except BlockingIOError:
            return
        except OSError as e:
            self._failed(e)
            return
        if not data:
            if self.closing:
                self.finish()
            else:
                self._failed(None)
            return
        if not self.open:
            self.inbuf += data
            end = self.inbuf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.inbuf) > 65536:
                    raise Fatal(f"{self.label}: no end to the handshake response from {self.url}")
                return
            head = bytes(self.inbuf[:end]).decode("latin-1").split("\r\n")
            del self.inbuf[:end + 4]
            status = head[0].split(" ", 2)
            if len(status) < 2 or status[1] != "101":
                raise Fatal(f"{self.label}: handshake with {self.url} refused: {head[0]!r}")
            headers = {}
            for line in head[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            if headers.get("sec-websocket-accept", "").encode() != self.accept:
                raise Fatal(f"{self.label}: bad Sec-WebSocket-Accept from {self.url}")
            self.open = True
            self.on_open()
            if not self.inbuf:
                return
            data = b""
        buf = self.inbuf
        if buf:
            buf += data
            if len(buf) < self.need:
                return
            pos = self._parse(buf)
            if pos:
                del buf[:pos]
        else:
            pos = self._parse(data)
            if pos < len(data):
                buf += data[pos:]

    def _parse(self, buf) -> int:
        """Handle every whole frame in ``buf``; returns the bytes used (sets ``need``)."""
        pos, n = 0, len(buf)
        while n - pos >= 2 and not self.done:
            b0, b1 = buf[pos], buf[pos + 1]
            ln = b1 & 0x7F
            h = pos + 2
            if ln == 126:
                if n - h < 2:
                    break
                ln = int.from_bytes(buf[h:h + 2], "big")
                h += 2
            elif ln == 127:
                if n - h < 8:
                    break
                ln = int.from_bytes(buf[h:h + 8], "big")
                h += 8
            if ln > MAX_MESSAGE:
                raise Fatal(f"{self.label}: frame of {ln} bytes from the server")
            mask = None
            if b1 & 0x80:                # servers must not mask; undo it if one does
                if n - h < 4:
                    break
                mask = bytes(buf[h:h + 4])
                h += 4
            end = h + ln
            if end > n:
                self.need = end - pos
                return pos
            payload = bytes(buf[h:end])
            pos = end
            if mask is not None and ln:
                payload = (int.from_bytes(payload, "big") ^ int.from_bytes((mask * ((ln >> 2) + 1))[:ln], "big")).to_bytes(ln, "big")
            op = b0 & 0x0F
            if op == 0x2 or op == 0x1:
                if b0 & 0x80:
                    self.on_message(payload)
                else:
                    self.frags = [payload]
            elif op == 0x0:
                if self.frags is None:
                    raise Fatal(f"{self.label}: continuation frame with no message to continue")
                self.frags.append(payload)
                if b0 & 0x80:
                    data, self.frags = b"".join(self.frags), None
                    if len(data) > MAX_MESSAGE:
                        raise Fatal(f"{self.label}: message of {len(data)} bytes from the server")
                    self.on_message(data)
            elif op == 0x9:
                if not self.closing:
                    self._write(_frame(0xA, payload))
            elif op == 0x8:
                if not self.closing:
                    self._write(_frame(0x8, payload[:2]))      # echo the status code
                    self.closing = True
                    code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                    self.on_closed(code, payload[2:].decode("utf-8", "replace"))
                self.finish()
            # 0xA (pong) and anything else: ignored
        self.need = 2
        return pos

    # -- the end

    def close(self) -> None:
        """Send our close frame; the connection is done when the server answers (or EOF)."""
        if not self.closing and not self.done:
            self.closing = True
            self._write(_frame(0x8, (1000).to_bytes(2, "big")))

    def finish(self) -> None:
        if self.done:
            return
        self.done = True
        self.loop.live.discard(self)
        try:
            self.loop.sel.unregister(self.sock)
        except (KeyError, ValueError):
            pass
        if self.out:
            try:
                self.sock.send(self.out)      # best effort: the close frame, at most
            except OSError:
                pass
        self.sock.close()

    def _failed(self, e: OSError | None) -> None:
        if self.closing:                # the server went away while we were closing: fine
            self.finish()
            return
        why = os.strerror(e.errno) if e is not None and e.errno else (str(e) if e else "closed by the server")
        raise Fatal(f"{self.label}: connection to {self.url} failed: {why}")

    def on_open(self) -> None: ...

    def on_message(self, data: bytes) -> None: ...

    def on_closed(self, code, reason: str) -> None: ...

    def on_timer(self, now: float) -> None: ...


# -- the players --------------------------------------------------------------------------------

HELLO, CREATE, WAIT_TABLE, JOIN, PLAY, DRAIN, CLOSING = range(7)


class Player(Conn):
    """One seat of a Run Wild table: hello -> welcome; seat 0 creates the table, the others
    wait for its id; join -> joined; play until ``until``; then drain answers in flight."""

    def __init__(self, loop: Loop, url: str, setup: TableSetup, seat: int, pace: float, until: float,
                 rng: random.Random, choose):
        super().__init__(loop, url, f"table {setup.index} seat {seat}")
        self.setup = setup
        self.run = setup.run
        self.stats = setup.run.stats
        self.seat = seat
        self.pace = pace
        self.until = until
        self.rng = rng
        self.choose = choose
        self.state = HELLO

    def on_open(self) -> None:
        self.send_binary(m.encode(m.Hello(m.PROTOCOL_VERSION, f"load{self.seat}")))

    def send_join(self) -> None:
        self.state = JOIN
        self.send_binary(m.encode(m.Join(self.run.table, self.seat)))

    def on_closed(self, code, reason: str) -> None:
        if self.state < PLAY:
            raise Fatal(f"{self.label}: the server closed the connection during set-up ({code} {reason})")
        if self.state == PLAY:           # before `until`: the figures would be short of this player
            raise Fatal(f"{self.label}: the server closed the connection during the run ({code} {reason})")
        if self.state == DRAIN:
            print(f"loadgen: {self.label}: the server closed the connection ({code} {reason})",
                  file=sys.stderr, flush=True)

    def on_message(self, data: bytes) -> None:
        state = self.state
        if state == PLAY:
            self.on_play(data)
            return
        if state == CLOSING:
            return
        if state == DRAIN:
            msg = unpack(data)
            inflight = self.inflight
            if msg["type"] in ("accepted", "rejected") and msg["intent"] in inflight:
                inflight.pop(msg["intent"])
                if msg["type"] == "accepted":
                    self.stats.accepted_seqs.setdefault(self.run.table, []).append(msg["seq"])
            if not inflight:
                self.state = CLOSING
                self.close()
            return
        msg = unpack(data)
        kind = msg.get("type")
        if kind == "error" and state != WAIT_TABLE:
            what = {HELLO: "hello", CREATE: "create_table", JOIN: "join"}[state]
            raise Fatal(f"{self.label}: {what}: {msg.get('code')} {msg.get('message')}")
        if state == HELLO:
            if kind != "welcome":
                return
            if self.seat == 0:
                self.state = CREATE
                self.send_binary(m.encode(m.CreateTable("run-wild", SEATS, TABLE_SETTINGS, "", HERE[0])))
            elif self.run.table is not None:
                self.send_join()
            else:
                self.state = WAIT_TABLE
                self.setup.waiting.append(self)
        elif state == CREATE:
            if kind == "table_created":
                self.run.table = msg["table"]
                self.send_join()
                for p in self.setup.waiting:
                    if not p.done:
                        p.send_join()
                self.setup.waiting.clear()
        elif state == JOIN:
            if kind == "joined":
                self.start_play(msg["view"], msg["seq"])
        # WAIT_TABLE: nothing to do until the table exists (pings are answered below us)

    def start_play(self, view, seq: int) -> None:
        now = perf()
        self.setup.joined += 1
        if self.setup.joined == SEATS:
            self.stats.tables_joined.append(now)
        # a player keeps reading while the others join (a socket nobody reads stops
        # answering pings); the strategy does nothing until the deal anyway
        self.view = view
        self.next_id = 1
        self.inflight: dict[int, tuple[float, dict]] = {}
        self.refused: set[str] = set()
        self.refused_at = -1
        self.seq = seq        # the view's: the next update patches it
        self.need_seq = 0     # after an acceptance, act again only on the view that includes it
        pace = self.pace
        self.next_at = now + (self.rng.uniform(0, 2 * pace) if pace else 0)
        self.state = PLAY
        if now >= self.until:
            self.stop()
        else:
            self.poll(now)

    def poll(self, now: float) -> None:
        """Act if nothing is in flight, the pace allows and the view includes our last acceptance."""
        if not self.inflight and self.seq >= self.need_seq:
            if now >= self.next_at:
                if self.act(now):
                    pace = self.pace
                    if pace:
                        self.next_at = now + self.rng.uniform(0, 2 * pace)
                        self.loop.at(self, self.next_at)
                    else:
                        self.next_at = now
            else:
                self.loop.at(self, self.next_at)

    def on_timer(self, now: float) -> None:
        if self.state == PLAY:
            self.poll(now)

    def act(self, now: float) -> bool:
        refused = self.refused
        action = None
        for a in self.choose(self.view):
            if strategy.action_key(a) not in refused:
                action = a
                break
        if action is None:
            return False
        iid = self.next_id
        self.next_id = iid + 1
        self.inflight[iid] = (perf(), action)
        self.send_binary(msgpack.packb({"type": "intent", "id": iid, "action": action}))
        return True

    def on_play(self, data: bytes) -> None:
        msg = unpack(data)
        kind = msg["type"]
        stats = self.stats
        t = perf()
        measured = t >= stats.measure_from
        if kind == "update":
            stats.updates += measured
            stats.update_bytes += len(data) * measured
            seq = msg["seq"]
            if "view" in msg:
                self.view = msg["view"]
            elif msg["base"] != self.seq:       # a patch against a view we do not hold
                raise Fatal(f"{self.label}: update {seq} patches seq {msg['base']}, we hold {self.seq}")
            else:                               # a patch (docs/PROTOCOL.md, "update")
                self.view = patched(self.view, msg["changed"], msg.get("removed", ()), msg.get("items"))
            self.seq = seq
            self.run.heard(seq, self.seat)
            if seq != self.refused_at:
                self.refused.clear()
        elif kind == "accepted":
            t0, _ = self.inflight.pop(msg["intent"])
            stats.accepted_seqs.setdefault(self.run.table, []).append(msg["seq"])
            self.run.sent_accepted(msg["seq"], t0, set())
            self.need_seq = msg["seq"]
            if t0 >= stats.measure_from:
                stats.result_lat.append(t - t0)
                stats.accepted += 1
        elif kind == "rejected":
            t0, action = self.inflight.pop(msg["intent"])
            if t0 >= stats.measure_from:
                stats.result_lat.append(t - t0)
                stats.rejected[msg["code"]] = stats.rejected.get(msg["code"], 0) + 1
            self.refused.add(strategy.action_key(action))
            self.refused_at = self.seq
        elif kind == "game_over":
            stats.games_finished += 1
            self.state = CLOSING
            self.close()
            return
        elif kind == "error":
            stats.errors[msg["code"]] = stats.errors.get(msg["code"], 0) + 1
        self.poll(t)

    def stop(self) -> None:
        """``until`` has passed: let answers in flight arrive, without counting new work."""
        if self.state == PLAY and self.inflight and not self.closing:
            self.state = DRAIN
        else:
            self.state = CLOSING
            self.close()


class BarePlayer(Conn):
    """The same pace against the bare fan-out server: intents are opaque padded frames."""

    def __init__(self, loop: Loop, url: str, group: int, seat: int, pace: float, until: float,
                 rng: random.Random, stats: Stats, runs: dict, intent_bytes: int):
        super().__init__(loop, url, f"group {group} seat {seat}")
        self.run = runs.setdefault(group, TableRun(stats))
        self.stats = stats
        self.group = group
        self.seat = seat
        self.pace = pace
        self.until = until
        self.rng = rng
        self.playing = False
        self.pad = b"x" * max(0, intent_bytes - 30)

    def on_open(self) -> None:
        self.send_binary(msgpack.packb({"group": self.group, "seat": self.seat}))

    def on_closed(self, code, reason: str) -> None:
        what = "the run" if self.playing else "set-up"
        raise Fatal(f"{self.label}: the server closed the connection during {what} ({code} {reason})")

    def on_message(self, data: bytes) -> None:
        if not self.playing:             # the server's hello answer
            self.playing = True
            self.next_id = 1
            self.inflight: dict[int, float] = {}
            now = perf()
            self.next_at = now + (self.rng.uniform(0, 2 * self.pace) if self.pace else 0)
            self.poll(now)
            return
        t = perf()
        msg = unpack(data)
        stats = self.stats
        if "seq" in msg:
            stats.updates += t >= stats.measure_from
            stats.update_bytes += len(data) * (t >= stats.measure_from)
            self.run.heard(msg["seq"], self.seat)
        else:
            t0 = self.inflight.pop(msg["id"])
            if t0 >= stats.measure_from:
                stats.result_lat.append(t - t0)
                stats.accepted += 1
            self.run.sent_accepted(msg["ack"], t0, set())
        self.poll(t)

    def poll(self, now: float) -> None:
        if self.inflight or self.closing:
            return
        if now >= self.next_at:
            iid = self.next_id
            self.next_id = iid + 1
            self.inflight[iid] = now
            self.send_binary(msgpack.packb({"id": iid, "pad": self.pad}))
            pace = self.pace
            self.next_at = now + (self.rng.uniform(0, 2 * pace) if pace else 0)
        else:
            self.loop.at(self, self.next_at)

    def on_timer(self, now: float) -> None:
        if self.playing:
            self.poll(now)

    def stop(self) -> None:
        self.close()                     # the bare run does not wait for answers in flight


# -- the run ------------------------------------------------------------------------------------

def run(args) -> dict:
    choose = strategy.candidates if args.strategy == "bot" else strategy.quick_candidates
    stats = Stats()
    rng = random.Random(args.seed)
    loop = Loop()
    start = time.perf_counter()
    stats.measure_from = start + args.warmup
    until = start + args.warmup + args.seconds
    drain_end = until + DRAIN_SECONDS
    close_end = drain_end + CLOSE_SECONDS
    conns: list[Conn] = []
    opening: list = []                   # (when, table) still to open
    if args.bare:
        runs: dict = {}
        for t in range(args.tables):
            for s in range(SEATS):
                conns.append(BarePlayer(loop, args.url, args.group_base + t, s, args.pace, until,
                                        random.Random(rng.random()), stats, runs, args.intent_bytes))
    else:
        step = args.ramp / max(1, args.tables)
        opening = [start + t * step for t in range(args.tables)]
        opening.reverse()

    def open_table() -> None:
        setup = TableSetup(TableRun(stats), len(conns) // SEATS)
        for s in range(SEATS):
            conns.append(Player(loop, args.url, setup, s, args.pace, until, random.Random(rng.random()), choose))

    phase = 0                            # 0 play, 1 drain, 2 closing
    while True:
        now = perf()
        while opening and opening[-1] <= now:
            opening.pop()
            open_table()
        if phase == 0 and now >= until:
            phase = 1
            opening.clear()
            for c in conns:
                if not c.done:
                    c.stop()
        if phase == 1 and now >= drain_end:
            phase = 2
            for c in conns:
                c.close()
        if phase == 2 and now >= close_end:
            for c in list(loop.live):
                c.finish()
        if not loop.live and not opening:
            break                        # every player done (or, before `until`, every game over)
        loop.run_timers(now)
        deadline = (until, drain_end, close_end)[phase]
        if opening:
            deadline = min(deadline, opening[-1])
        loop.select(deadline - perf())
    loop.sel.close()
    elapsed = time.perf_counter() - stats.measure_from
    return {
        "tables": args.tables, "players": args.tables * SEATS, "pace": args.pace, "elapsed": elapsed,
        "accepted": stats.accepted, "rejected": stats.rejected, "errors": stats.errors,
        "result_lat": stats.result_lat, "update_lat": stats.update_lat, "updates": stats.updates,
        "update_bytes": stats.update_bytes, "games_finished": stats.games_finished,
        "accepted_seqs": stats.accepted_seqs,
        "all_joined_after": (max(stats.tables_joined) - start) if stats.tables_joined else None,
        "tables_joined": len(stats.tables_joined),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--tables", type=int, default=10)
    ap.add_argument("--pace", type=float, default=2.0, help="seconds between a player's actions on average; 0 = flat out")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=0.0)
    ap.add_argument("--ramp", type=float, default=2.0, help="seconds over which tables are opened")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bare", action="store_true")
    ap.add_argument("--strategy", choices=("quick", "bot"), default="quick",
                    help="quick: the client's cheap strategy (default); bot: the full bot, ~1 ms a decision")
    ap.add_argument("--group-base", type=int, default=0)
    ap.add_argument("--intent-bytes", type=int, default=40)
    ap.add_argument("--fair-ms", type=int, default=None, help="the tables' fair_ms (default: the game's default)")
    ap.add_argument("--here", action="store_true",
                    help="create every table on the node --url names (create_table here: true), for a cluster")
    args = ap.parse_args(argv)
    HERE[0] = args.here
    if args.fair_ms is not None:
        TABLE_SETTINGS["fair_ms"] = args.fair_ms
    # The generator's own cyclic collections would show as the server's latency: a
    # full pass over 4,000 players' views took up to 130 ms, every update read after it
    # late by as much (bench/README.md, "The tail at 4,000 players"). It makes no cyclic
    # garbage to speak of, and it lives one run: no collections.
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        out = run(args)
    except Fatal as e:
        print(f"loadgen: {e}", file=sys.stderr, flush=True)
        return 1
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
