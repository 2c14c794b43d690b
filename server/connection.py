"""One client connection: a reader task (decode, check, forward), a writer task (flush
what waits for the socket), a heartbeat and a watchdog. Outgoing frames go to the socket
at once when it is free; what waits is bounded, and a connection with more than
``server.config.outbox`` frames waiting is a slow consumer, closed, never waited for; it may
reconnect and resync from a snapshot."""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING

import attrs
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.codec import MAX_FRAME, MAX_STR, unpackb
from wildtable.protocol.errors import IllegalAction, ProtocolError

from . import fairorder, wire
from .cluster import Redirected
from .framebudget import BACKLOG_BYTES, BACKLOG_FRAMES, FrameRules
from .arbiter_io import IntentReq, JoinReq, LeaveReq, Link, RejoinReq, ReplyReq, SpectateReq, new_link
from .world import Transport
from .oplog import about

if TYPE_CHECKING:
    import weakref

    from .app import Server

log = logging.getLogger("wildtable.server")

OUTBOX = BACKLOG_FRAMES      # frames queued for one client at most (512), ours and the pongs we owe
OUTBOX_BYTES = BACKLOG_BYTES   # bytes queued for one client at most (1 MiB, beyond one frame, however big)
HELLO_TIMEOUT = 10.0         # seconds to say hello after connecting
IDLE_TIMEOUT = 600.0         # seconds without any frame from the client
HEARTBEAT = 20.0             # seconds between pings
PONG_TIMEOUT = 15.0          # seconds to answer a ping
PROBE_EVERY = 5.0            # seconds between pings while seated at a table that orders by send time and a ping may decide the delay (1 s: +20% CPU at 1,000 players)
PROBE_FIRST = (0.1, 2)       # ... but the first 2 after sitting down 0.1 s apart: an estimate at once (fewer: a client of trio-websocket closing while pinged fails, see docs/ARCHITECTURE.md)
RTT_WINDOW = 30              # round trips the one-way delay estimate is the minimum of
SEND_TIMEOUT = 10.0          # seconds for a peer to take what waits for it
MAX_BAD_FRAMES = 20          # protocol errors tolerated before closing with 1008
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_GOING_AWAY = 1001
CLOSE_TRY_LATER = 1013
INTENT_ID_MAX = attrs.fields(m.Intent).id.metadata["max"]


def peer_kernel_delay(peer: Transport) -> float | None:
    """Half the kernel's smallest round trip of the peer's TCP connection (s), or None."""
    return fairorder.half_kernel_rtt(peer.tcp_info())


def _clip(text: str) -> str:
    return text if len(text) <= MAX_STR else text[:MAX_STR - 3] + "..."


def _fit(message):
    """Keep an error's sentence within the protocol's string cap: a sentence that quotes
    what the peer sent (a 60 KB settings key, say) must not make the reply unreadable."""
    t = type(message)
    if t is m.Error and len(message.message) > MAX_STR:
        return m.Error(message.code, _clip(message.message), message.path, message.ref)
    if t is m.Rejected and len(message.reason) > MAX_STR:
        return m.Rejected(message.intent, message.code, _clip(message.reason))
    return message


def _what_it_was(data) -> tuple[int | None, str | None, int | None]:
    """Of a frame that does not decode as a message: the intent id, if it is an intent
    whose id can be read; the message type it names (for the error's ref); and, for a
    hello, the version it names if that is an integer other than ours."""
    try:
        raw = unpackb(data, max_size=MAX_FRAME)
    except Exception:
        return None, None, None
    if type(raw) is not dict or type(raw.get("type")) is not str:
        return None, None, None
    tag = raw["type"] if raw["type"] in m.CLIENT_MESSAGES else None
    i, v = raw.get("id"), raw.get("version")
    if tag == "intent" and type(i) is int and 0 <= i <= INTENT_ID_MAX:
        return i, tag, None
    if tag == "hello" and type(v) is int and v != m.PROTOCOL_VERSION:
        return None, tag, v
    return None, tag, None


class RateLimit:
    """Token bucket: ``rate`` messages per second, bursts of ``burst``."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst, self.tokens, self.stamp = rate, burst, burst, trio.current_time()

    def allow(self, now: float) -> bool:
        """``now``: trio's clock, as the reader read it for this message."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Connection:
    def __init__(self, server: "Server", peer: Transport):
        self.server = server
        self.peer = peer
        self.name: str | None = None
        self.link = new_link(str(peer.remote))      # what tables' cores know it by (server/arbiter_io.py)
        self.table = None
        self.seat: int | None = None
        # rung when frames wait in the peer's backlog; the writer task then writes them
        self._bell_send, self._bell_recv = trio.open_memory_channel(1)
        peer.wake = self._ring      # the WebSocket layer's own frames (pong, ping) wait too
        # every frame costs budget, and what we owe waits under our caps (docs/PROTOCOL.md,
        # "Connection lifetime" 5, 6)
        cfg = server.config
        peer.budget(FrameRules.for_messages(cfg.rate_limit, cfg.rate_burst, max_fragments=cfg.max_fragments,
                                            backlog_frames=cfg.outbox, backlog_bytes=cfg.outbox_bytes))
        self._open = True            # False once closing: nothing more is sent
        self._scope = trio.CancelScope()         # the connection's nursery, once running
        self._close = (1000, "")
        self.bad_frames = 0
        self.limit = RateLimit(cfg.rate_limit, cfg.rate_burst)
        self.slow = False
        self.closed = False          # set once both tasks are done: tables must not seat it any more
        # the table this connection last sent a request to, weakly: a table the server
        # forgets is not kept by the connections that once spoke to it, and forgetting
        # one walks none of them (a node losing its store drops every table at once)
        self._route: weakref.ref | None = None
        self._reader_scope = trio.CancelScope()
        self._connected_at = self._last_heard = trio.current_time()
        # Fair order (server/fairorder.py): what this connection's intents can be credited
        # at most, the smaller of half its smallest WebSocket ping round trip of the last
        # RTT_WINDOW and half the kernel's smallest TCP round trip (``reach``; ``delay`` its
        # value, 0 until measured); and when each seq was written to it (``written``).
        self.reach = fairorder.Reach()
        self.delay = 0.0
        self._rtts: deque = deque(maxlen=RTT_WINDOW)
        self._probe_wake = trio.Event()
        self._probe_over = False     # no more pings: the connection is closing
        self._quick = 0              # quick probes still to make
        peer.on_rtt = self._rtt

    # ---------------------------------------------------------------- outbound (never blocks)
    def send_message(self, message) -> None:
        self.send_bytes(self.encode(message))

    def send_bytes(self, data: bytes) -> None:
        """Written to the socket at once when it is free; otherwise it waits in the peer's
        backlog (at most ``server.config.outbox`` frames) and the writer task is woken."""
        if not self._open:
            return
        waiting = self.peer.write(data)
        if waiting:
            self._wait_or_close(waiting)

    def send_frames(self, frames: list[bytes]) -> None:
        """``send_bytes`` for several encoded messages at once: one write to the socket."""
        if not self._open:
            return
        waiting = self.peer.write_many(frames)
        if waiting:
            self._wait_or_close(waiting)

    def encode(self, message) -> bytes:
        return m.encode(_fit(message))

    def _wait_or_close(self, waiting: int) -> None:
        """``waiting`` frames wait in the backlog: wake the writer, or close a slow consumer
        (one that takes data slower than its table makes it, whatever its read rate: its
        backlog grows past the bound in frames or in bytes)."""
        cfg = self.server.config
        if waiting > cfg.outbox or (waiting > 1 and self.peer.backlog_bytes > cfg.outbox_bytes):
            self._close_slow(f"{waiting} frames, {self.peer.backlog_bytes} bytes waiting (at most {cfg.outbox}, "
                             f"{cfg.outbox_bytes})")
            return
        self._ring()

    def _close_slow(self, why: str) -> None:
        """Close a slow consumer (1013). Not "send what is queued first": it cannot keep
        up, so stop now and let its table forget it at once; it may reconnect and resync
        from a snapshot."""
        self.slow = True
        log.warning("closing slow consumer %s (%s): %s", self.peer.remote, self.name, why, extra=about(peer=self.peer.remote))
        self._close = (CLOSE_TRY_LATER, "slow consumer: reconnect to resync")
        self.peer.drop_backlog()
        self._stop_writing()
        self._scope.cancel()

    def _ping_overdue(self) -> None:
        """A ping unanswered for PONG_TIMEOUT. With frames still waiting for this peer in
        its backlog, the ping waits behind them (and behind what fills the kernel's buffers
        before them): the peer is reading, too slowly, and is closed as the slow consumer
        it is (1013), not told "no answer to ping" (at the default timers a reader of a
        few kB/s at a busy table was, with 1001:
        tests/server/test_slow_readers_at_the_default_timers.py). Else it is gone: 1001."""
        if self.peer.backlog:
            self._close_slow(f"a ping waited {PONG_TIMEOUT:g} s behind {self.peer.backlog} frames, "
                             f"{self.peer.backlog_bytes} bytes it had not taken")
        else:
            self.close_soon(CLOSE_GOING_AWAY, "no answer to ping")

    def _ring(self) -> None:
        """Wake the writer task: frames wait in the peer's backlog."""
        try:
            self._bell_send.send_nowait(None)
        except trio.WouldBlock:
            pass                    # already woken
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass                    # the writer is gone (send timeout) or closing: the close is under way

    def _stop_writing(self) -> None:
        self._open = False
        self._bell_send.close()

    def close_soon(self, code: int, reason: str) -> None:
        """Stop both tasks; the writer sends what is queued, then the close frame."""
        if self._open:
            self._close = (code, reason)
        self._stop_writing()

    @property
    def close_code(self) -> int:
        """The WebSocket close code this connection is closed (or to be closed) with."""
        return self._close[0]

    def attach(self, table, seat) -> None:
        self.table, self.seat = table, seat
        if self._probing():
            self._quick = PROBE_FIRST[1]
            self._probe_wake.set()          # measure the delay now, then every PROBE_EVERY

    def _probing(self) -> bool:
        """Seated at a table that orders intents by send time: ping often, for the delay."""
        t = self.table
        return self.seat is not None and t is not None and getattr(t, "fair", 0) > 0 and not t.finished

    def detach(self, table) -> None:
        if self.table is table:
            self.table, self.seat = None, None

    # ---------------------------------------------------------------- tasks
    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            self._scope = nursery.cancel_scope
            nursery.start_soon(self._writer, nursery.cancel_scope)
            nursery.start_soon(self._heartbeat)
            nursery.start_soon(self._watchdog)
            try:
                with self._reader_scope:
                    await self._reader()
            except wire.ConnectionClosed:
                if self.peer.cut is not None:
                    # over its frame budget or caps: closed at once, what waited dropped;
                    # one line for the whole flood (the peer parses nothing more)
                    log.warning("closing %s (%s): %s", self.peer.remote, self.name, self.peer.cut, extra=about(peer=self.peer.remote))
                    nursery.cancel_scope.cancel()
            finally:
                self._stop_writing()
        self.closed = True
        self.server.prober.forget(self)
        if self.table is not None:
            # The seat stays held (its token still works); the table hears we are gone,
            # through its inbox like everything else (waiting a little if it is full).
            table = self.table
            if not table.submit_nowait(self, LeaveReq(self.link, notify=False)):
                with self.server.world.clock.move_on_after(5) as wait:
                    wait.shield = True
                    try:
                        await table.submit(self, LeaveReq(self.link, notify=False))
                    except (trio.ClosedResourceError, trio.BrokenResourceError):
                        pass        # the table is shutting down: nobody will be told
                if wait.cancelled_caught:
                    self._detach_hard()
        if self.slow:
            # the writer, cancelled mid-write, put back what it had not written: of that,
            # only the rest of a frame cut short goes out before the close frame
            self.peer.drop_backlog()
            await self.peer.close(*self._close)     # bounded: Peer.close gives up after 2 s
        elif self.peer.cut is not None:
            await self.peer.close()         # its close frame waits already: out within 2 s, or dropped

    def _detach_hard(self):
        """Last resort, when the table's inbox stayed full for 5 s: forget this connection
        from outside the arbiter (it only clears references; no state or log changes)."""
        self.table.forget(self)

    async def _writer(self, scope: trio.CancelScope) -> None:
        # A peer that takes no byte of what waits for the send timeout (SEND_TIMEOUT unless
        # the server was given another) is closed with 1001; one that takes bytes, however
        # slowly, is not (if it falls behind its table, the backlog bound closes it as a slow
        # consumer, 1013).
        peer = self.peer
        timeout = self.server.config.send_timeout
        stalled = False
        try:
            async with self._bell_recv:
                async for _ in self._bell_recv:
                    await peer.flush(timeout)
            if peer.backlog:            # closing: what waits goes out before the close frame
                await peer.flush(timeout)
        except wire.SendStalled:
            stalled = True
        except (wire.ConnectionClosed, trio.BrokenResourceError):
            pass
        if stalled:
            log.warning("closing %s (%s): it took no bytes for %g s", self.peer.remote, self.name, timeout, extra=about(peer=self.peer.remote))
            if self._open:
                self._close = (CLOSE_GOING_AWAY, f"send timeout: nothing taken for {timeout:g} s")
            self.peer.drop_backlog()        # only the rest of a frame cut short still goes out
        self._stop_writing()        # timed out or done: nothing more is sent
        code, reason = self._close
        await peer.close(code, reason)
        scope.cancel()

    def _rtt(self, rtt: float) -> None:
        """A round-trip sample: the ping bound is half the smallest of the window."""
        self._rtts.append(rtt)
        self._measure(min(self._rtts) / 2)

    def _measure(self, ping: float | None) -> fairorder.Reach:
        """Read the kernel's round trip again (one getsockopt; it is the bound a client
        cannot inflate by answering pings late) and update ``reach`` (the same value
        object while neither bound moved: a Reach a read cost 1 us at every intent)."""
        kernel = self.server.kernel_delay(self.peer)
        r = self.reach
        if kernel == r.kernel and ping == r.ping:
            return r
        r = self.reach = fairorder.Reach(ping, kernel)
        delay = r.value()
        if delay != self.delay:
            self.delay = delay
            if self.table is not None:
                self.table.delays_moved()       # its facts read the seats' delays again
        return r

    async def _heartbeat(self) -> None:
        """A ping every HEARTBEAT seconds, or every PROBE_EVERY while seated at a table that
        orders by send time: those the server's prober sends (server/prober.py), while this
        task waits for it to stop. Every pong is a round-trip sample of the delay estimate."""
        clock = self.server.world.clock
        while True:
            if not self._probing():
                self._probe_wake = trio.Event()
                with clock.move_on_after(HEARTBEAT):
                    await self._probe_wake.wait()
                if not self._probing():
                    try:
                        with clock.fail_after(PONG_TIMEOUT):
                            self._rtt(await self.peer.ping())
                    except trio.TooSlowError:
                        self._ping_overdue()
                        return
                    except wire.ConnectionClosed:
                        return
                    continue
            # seated at a fair table: pinged by the prober from now on (``probe_due``); woken
            # when it stops, or when ``attach`` wants the quick probes again
            self._probe_wake = trio.Event()
            self.server.prober.watch(self, trio.current_time())
            await self._probe_wake.wait()
            if self._probe_over:
                return

    def probe_due(self, now: float) -> float | None:
        """The prober's call: a ping without waiting for its pong (the reader hands the
        round trip to _rtt), and the kernel's bound read again; when the next is due
        (PROBE_EVERY while a ping may decide the delay or one waits for its pong, else
        HEARTBEAT), or
        None once this connection is not seated at a fair table any more (its heartbeat
        task takes over) or is closing. One ping unanswered for PONG_TIMEOUT closes it."""
        if not self._open:
            self._probe_over = True     # closing: its heartbeat task ends too (no watch again)
        if self._probe_over or not self._probing():
            self._probe_wake.set()
            return None
        try:
            waiting = self.peer.probe()
        except wire.ConnectionClosed:
            waiting = None
            self._probe_over = True
        else:
            self._measure(self.reach.ping)      # the kernel's bound, pong or no pong
            if waiting is not None and now - waiting > PONG_TIMEOUT:
                self._ping_overdue()
                self._probe_over = True
        if self._probe_over:
            self._probe_wake.set()
            return None
        if self._quick > 0:
            self._quick -= 1
            return now + PROBE_FIRST[0]
        if waiting is not None or self.reach.ping_may_decide():
            return now + PROBE_EVERY
        # the kernel's smallest round trip decides the delay, and no ping can go below it
        # (fairorder.Reach.ping_may_decide): pinged at the heartbeat's pace, which is still
        # the look that closes it when this ping waits past PONG_TIMEOUT (HEARTBEAT > it).
        # At 4,000 players 600 pings and pongs a second fewer (bench/README.md)
        return now + HEARTBEAT

    async def _watchdog(self) -> None:
        """The hello and idle timeouts. The reader only stamps when it last heard from the
        peer (a cancel scope around every receive cost ~5% of the flat-out profile); this
        task sleeps until the stamp is old enough, then stops the reader. Until a hello is
        accepted, the clock runs from the connection's start: frames that are not a hello
        do not keep it open."""
        while True:
            if self.name is None:
                timeout = self.server.config.hello_timeout
                due = self._connected_at + timeout
            else:
                timeout = IDLE_TIMEOUT
                due = self._last_heard + timeout
            if trio.current_time() >= due:
                break
            await self.server.world.clock.sleep_until(due)     # a hello meanwhile: the next round uses the idle clock
        if self.name is None:
            said = f"no hello within {timeout:.0f} s; closing (a client says hello first)"
        else:
            said = (f"no message within {timeout:.0f} s (pings and pongs do not count); closing (a client stays "
                    f"connected by sending one, list_tables say, more often than that)")
        self.send_message(m.Error("idle_timeout", said))
        self.close_soon(CLOSE_POLICY if self.name is None else CLOSE_GOING_AWAY, "idle timeout")
        self._reader_scope.cancel()

    async def _reader(self) -> None:
        receive = self.peer.receive
        decode = m.MESSAGES.decode_bytes
        clock = trio.current_time
        while True:
            data = await receive()
            self._last_heard = now = clock()
            msg = None
            try:
                if isinstance(data, str):
                    raise ProtocolError("text_frame", "send binary frames holding msgpack, not text frames")
                msg = decode(data, MAX_FRAME)
                if not self.limit.allow(now):
                    # Every intent gets exactly one answer, even a dropped one.
                    self.server.metrics.rate_limited += 1
                    why = f"too many messages: at most {self.server.config.rate_limit:g} per second; this one was dropped"
                    if msg.TAG == "intent":
                        await self._answer_intent(m.Rejected(msg.id, "rate_limited", why))
                    else:
                        self.send_message(m.Error("rate_limited", why, None, msg.TAG))
                    if self._strike():
                        return
                    continue
                if msg.TAG not in m.CLIENT_MESSAGES:
                    raise ProtocolError("unexpected_message", f"{msg.TAG!r} is a server message; clients send: {', '.join(sorted(m.CLIENT_MESSAGES))}", "$.type")
                await self._dispatch(msg)
            except ProtocolError as e:
                intent_id, tag, theirs = (None, msg.TAG, None) if msg is not None else _what_it_was(data)
                if theirs is not None and self.name is None:
                    # a newer client's hello may carry fields this version does not know:
                    # the version decides first (PROTOCOL.md, connection lifetime, step 2)
                    self.send_message(m.Error("version_mismatch", m.version_mismatch_text(theirs), "$.version", "hello"))
                    self.close_soon(CLOSE_POLICY, "protocol version mismatch")
                    return
                if intent_id is not None and self.name is not None:
                    # a malformed intent whose id can be read: still one answer per intent,
                    # in order (a bare error would leave the client waiting on that id)
                    reason = f"{e.path}: {e.message}" if e.path else e.message
                    await self._answer_intent(m.Rejected(intent_id, e.code, reason))
                else:
                    self.send_message(m.Error(e.code, e.message, e.path, tag))
                if self._strike():
                    return
            except IllegalAction as e:
                self.send_message(m.Error(e.code, e.reason, None, getattr(msg, "TAG", None)))
            except Redirected as r:
                # another node of the cluster serves it: the client sends it there again
                self.server.metrics.redirects += 1
                self.send_message(m.Redirect(r.url, msg.TAG, r.table, r.reason))  # type: ignore[union-attr]  # a decoded message

    async def _answer_intent(self, message) -> None:
        """Answer an intent here, yet after the answers to this connection's earlier
        intents: through the table they went to, if any (every intent: one answer, in order)."""
        route = self.route
        if route is not None:
            try:
                await route.submit(self, ReplyReq(self.link, message))
                return
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                pass                # the table is shutting down
        self.send_message(message)

    @property
    def route(self):
        """The table this connection last sent a request to (None: none, or forgotten)."""
        ref = self._route
        return None if ref is None else ref()

    async def _submit(self, table, req) -> None:
        self._route = table.ref
        try:
            try:
                table.inbox_send.send_nowait((self, req))    # Table.submit's common case, without its coroutine
            except trio.WouldBlock:
                await table.submit(self, req)               # a full inbox: wait for room
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            # its arbiter has ended: a finished table just forgotten, or a server stopping
            self._route = None
            raise IllegalAction("no_such_table", f"table {table.id!r} is closed (its game is over, or the server "
                                "is stopping); list_tables shows the open ones") from None

    def _strike(self) -> bool:
        self.bad_frames += 1
        if self.bad_frames > MAX_BAD_FRAMES:
            self.close_soon(CLOSE_POLICY, "too many bad frames")
            return True
        return False

    async def _dispatch(self, msg) -> None:
        t = msg.TAG
        if self.name is None:
            if t != "hello":
                raise ProtocolError("hello_first", "say hello first: {type: hello, version, name}", "$.type")
            if msg.version != m.PROTOCOL_VERSION:
                self.send_message(m.Error("version_mismatch", m.version_mismatch_text(msg.version), "$.version", "hello"))
                self.close_soon(CLOSE_POLICY, "protocol version mismatch")
                return
            name = msg.name.strip()
            if not name or not name.isprintable():
                raise ProtocolError("bad_name", "a name needs at least one printable character", "$.name")
            self.name = name
            self.link = Link(self.link.id, self.link.remote, name)     # before any request names it
            nodes = self.server.cluster.node_urls() if self.server.cluster is not None else ()
            self.send_message(m.Welcome(m.PROTOCOL_VERSION, f"wildtable {self.server.version}", MAX_FRAME, HEARTBEAT,
                                        nodes))
            return
        srv = self.server
        if t == "intent":           # the one that counts: tested first
            table = self.table
            if table is None or self.seat is None:
                if table is not None:
                    # a spectator: "join first" alone would only earn already_at_table
                    why = (f"you are watching table {table.id} as a spectator, and spectators cannot act; "
                           "send leave, then join a free seat (or rejoin yours)")
                else:
                    why = "you do not hold a seat; join or rejoin a table first"
                await self._answer_intent(m.Rejected(msg.id, "not_seated", why))
                return
            reach = self._measure(self.reach.ping) if table.fair else self.reach     # the kernel's round trip now
            # stamped when its connection read it (the reader's stamp: fair order's arrival)
            await self._submit(table, IntentReq(self.link, msg, srv.world.wall(), self._last_heard, reach))
        elif t == "hello":
            raise ProtocolError("already_said_hello", "hello was already received", "$.type")
        elif t == "list_tables":
            self.send_bytes(srv.table_list_frame())
        elif t == "create_table":
            if srv.cluster is not None and not msg.here:
                srv.cluster.redirect_create()       # Redirected: the least loaded node is another
            table = await srv.create_table(msg.game, msg.seats, msg.settings, msg.name, owner=self)
            self.send_message(m.TableCreated(table.id, table.game.NAME, len(table.seats), table.settings))
        elif t in ("join", "rejoin", "spectate"):
            table = srv.tables.get(msg.table)  # None: checked below
            if table is None and srv.cluster is not None:
                table = await srv.cluster.locate(msg.table)     # adopted now, or Redirected to its node
            if table is None:
                raise IllegalAction("no_such_table", srv.no_table(msg.table))
            if t == "join":
                await self._submit(table, JoinReq(self.link, msg.seat, self.name))
            elif t == "rejoin":
                await self._submit(table, RejoinReq(self.link, msg.seat, msg.token))
            else:
                await self._submit(table, SpectateReq(self.link))
        elif t == "seat_bots":
            if msg.table not in srv.tables and srv.cluster is not None:
                await srv.cluster.locate(msg.table)             # Redirected to its node
            await srv.bots.seat(self, msg)
        elif t == "hint":
            from .hints import answer       # the expert's choice for this seat (server/hints.py)
            self.send_message(await answer(self))
        elif t == "leave":
            if self.table is None:
                raise IllegalAction("not_at_table", "you are not at a table")
            await self._submit(self.table, LeaveReq(self.link))
