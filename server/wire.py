"""The server's WebSocket layer: our own Trio I/O on plain sockets around the `websockets`
library's Sans-I/O ``ServerProtocol``, which parses the handshake and every frame and
checks them against RFC 6455. The only server module that touches a WebSocket library,
so it can be measured and swapped; why this base: docs/ARCHITECTURE.md, "The WebSocket
layer".

What stays ours: the sockets, the caps on connections (in the handshake, per address),
the Origin check, the backlog of outgoing frames (bounded by the connection, in frames
and bytes), the data frames we send (framed here, written straight to the socket when it
is free), and the close: after our close frame nothing more goes out, so a ping, pong or
data frame the peer sends after it is ignored, not answered (RFC 6455 section 5.5.1).
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import struct
from collections import deque
from typing import Awaitable, Callable, Collection, cast
from urllib.parse import urlsplit

import attrs
import trio
from websockets.exceptions import PayloadTooBig
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from wildtable.protocol.codec import MAX_FRAME

from . import proxyproto
from .forwarded import Address, TrustedProxies
from .framebudget import FEED_SLICE, FrameRules

log = logging.getLogger("wildtable.server")
# websockets logs every open and close at INFO; ours says what matters
_ws_log = logging.getLogger("wildtable.server.websocket")
_ws_log.setLevel(logging.WARNING)

HANDSHAKE_TIMEOUT = 10.0     # seconds for a new connection to complete its opening handshake
HANDSHAKE_MAX_BYTES = 16 * 1024   # the request head, at most
MAX_HANDSHAKES = 128         # connections in their opening handshake at once
MAX_PER_ADDRESS = 32         # connections from one IP address at once (0: no cap)
CLOSE_LINGER = 2.0           # seconds to wait for the peer's side of a close before dropping it
CLOSE_FLUSH = 2.0            # seconds for what waits, and the close frame, to go out at the close
RECV_SIZE = 65536

CLOSE_PROTOCOL_ERROR = 1002
CLOSE_BAD_DATA = 1007
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009

_BINARY, _TEXT, _CONT = Opcode.BINARY, Opcode.TEXT, Opcode.CONT
_PING, _PONG, _CLOSE = Opcode.PING, Opcode.PONG, Opcode.CLOSE


class ConnectionClosed(Exception):
    """The WebSocket is closed or closing: nothing more can be read or written."""

    def __init__(self, code: int | None = None, reason: str = ""):
        super().__init__(code, reason)
        self.code, self.reason = code, reason


class SendStalled(Exception):
    """The peer took no bytes of what waits for it within the timeout ``flush`` was given."""


@attrs.frozen
class Limits:
    """What the listener admits. ``allow_origins``: browser origins (``scheme://host[:port]``)
    allowed besides the server's own host."""

    max_handshakes: int = MAX_HANDSHAKES
    max_per_address: int = MAX_PER_ADDRESS
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    # kept as browsers send an Origin: lowercase, no trailing slash (the operator may type
    # either: scheme and host are case-insensitive)
    allow_origins: tuple[str, ...] = attrs.field(
        default=(), converter=lambda names: tuple(o.strip().rstrip("/").lower() for o in names))
    # the origins allowed now besides those (a node of a cluster: the pages its live peer
    # nodes serve, server/cluster.py); asked at each handshake that names an Origin
    peer_origins: Callable[[], Collection[str]] | None = None
    # the reverse proxies whose forwarding header names the client (serve --trusted-proxy)
    trusted: TrustedProxies = TrustedProxies()
    # connections from those proxies begin with a PROXY protocol header (serve --proxy-protocol)
    proxy_protocol: bool = False


class Peer:
    """One accepted WebSocket: messages in, bytes out, pings, close.

    Outgoing messages take the shortest way: ``write`` frames a message and, when nothing
    is being written to this socket and nothing waits, hands it to the kernel at once (no
    task switch, no lock). Otherwise, or when the kernel takes only part of it, the rest
    waits in the backlog until ``flush`` (the connection's writer task) writes it. Control
    frames (pong, ping, close) join the same backlog, so they never land inside a frame
    and everything goes out in the order it was written.
    """

    __slots__ = ("_sock", "_proto", "remote", "host", "_backlog", "_backlog_bytes", "_head_partial",
                 "_flushing", "_flush_lock", "_closing", "_gone", "_ended", "_messages", "_parts",
                 "_parts_text", "_pong", "_aborted", "wake", "_probe", "on_rtt", "rules", "_tokens", "_spent_at",
                 "cut", "_unfed")

    def __init__(self, sock: socket.socket, proto: ServerProtocol, host: str, port: int | None):
        self._sock = sock
        self._proto = proto
        self.host = host
        self.remote = host_port(host, port)
        self._backlog: list[bytes] = []         # framed bytes not yet written, in order
        self._backlog_bytes = 0
        self._head_partial = False              # the backlog starts with the rest of a partly written frame
        self._flushing = False                  # a flush is writing: new frames queue behind it
        self._flush_lock = trio.Lock()
        self._closing = False                   # our close frame is written or queued: nothing more goes out
        self._gone = False                      # the socket failed, or the peer closed: nothing more comes in
        self._ended: tuple[int | None, str] = (None, "")
        self._messages: deque = deque()         # whole messages parsed, not yet received
        self._parts: list[bytes] = []           # the fragments of a message still coming
        self._parts_text = False
        self._pong: tuple[bytes, trio.Event, list] | None = None
        self._probe: tuple[bytes, float] | None = None    # a ping of probe(): (payload, when sent)
        self.on_rtt: Callable[[float], None] | None = None   # given each probe's round trip (s)
        self._aborted = False                   # give up on the close handshake: drop the socket at once
        self.wake: Callable[[], None] | None = None   # called when control frames wait in the backlog
        # the frame budget and caps (docs/PROTOCOL.md, "Connection lifetime" 5, 6): set by
        # whoever serves the peer before its first receive
        self.rules = FrameRules()
        self._tokens = self.rules.burst
        self._spent_at = trio.current_time()
        self.cut: str | None = None             # why we closed it at once, dropping what waited (a policy close)
        self._unfed: memoryview | None = None   # the rest of a read, not parsed yet (FEED_SLICE at a time)

    # ---------------------------------------------------------------- receiving
    async def receive(self) -> bytes | str:
        """The next whole message: bytes for a binary one, str for a text one. Raises
        ConnectionClosed once the peer has closed, failed the protocol, or gone."""
        messages = self._messages
        if messages:
            # parsed earlier from one read: a peer that pipelines many messages must not
            # keep every other task waiting while its reader works through them
            await trio.lowlevel.checkpoint()
        sock = self._sock
        while not messages:
            if self._gone:
                raise ConnectionClosed(*self._ended)     # over its budget, or closed: the rest is not parsed
            data: bytes | memoryview | None = self._unfed
            if data is None:
                try:
                    data = sock.recv(RECV_SIZE)
                except BlockingIOError:
                    await trio.lowlevel.wait_readable(sock)
                    continue
                except OSError as e:            # reset
                    self._lost(f"connection lost: {e.strerror or e}")
                    continue
                if not data:
                    self._proto.receive_eof()
                    self._take_events()
                    self._lost("the peer closed the connection without a close frame")
                    continue
            # a peer with more to read must not keep the other tasks from running: at most
            # FEED_SLICE bytes are parsed between two checkpoints; the rest of the read
            # waits here (kept if this task is cancelled meanwhile)
            if len(data) > FEED_SLICE:
                view = memoryview(data)
                data, self._unfed = view[:FEED_SLICE], view[FEED_SLICE:]
            else:
                self._unfed = None
            self._feed(data)
            await trio.lowlevel.checkpoint()
        return messages.popleft()

    def _feed(self, data) -> None:
        """Parse ``data`` (at most FEED_SLICE bytes); every frame in it costs a token of the
        peer's budget first: a peer over it is closed (1008), none of these frames handled."""
        proto = self._proto
        proto.receive_data(data)
        events = proto.events_received()
        if events:
            # the token bucket of FrameRules: refilled at ``rate`` a second up to ``burst``,
            # one token a frame; below 0, the peer is over its budget. Inline: as a function
            # call it cost ~0.5 us a read, 4% of the receive path (bench/ws_receive.py)
            now = trio.current_time()
            rules = self.rules
            tokens = self._tokens + (now - self._spent_at) * rules.rate
            if tokens > rules.burst:
                tokens = rules.burst
            self._tokens = tokens = tokens - len(events)
            self._spent_at = now
            if tokens < 0:
                self._cut(CLOSE_POLICY, rules.over_rate())
                return
        self._take_events(events)

    def _take_events(self, events=None) -> None:
        """Turn what the protocol parsed into messages; answer what must be answered."""
        proto = self._proto
        for frame in cast("list[Frame]", proto.events_received() if events is None else events):    # after the handshake: frames only
            op = frame.opcode
            if op is _BINARY or op is _TEXT:
                if frame.fin:
                    self._message(frame.data, op is _TEXT)  # type: ignore[arg-type]  # the parser's frames hold bytes
                else:
                    self._parts, self._parts_text = [frame.data], op is _TEXT  # type: ignore[list-item]  # the parser's frames hold bytes
            elif op is _CONT:
                self._parts.append(frame.data)  # type: ignore[arg-type]  # the parser's frames hold bytes
                if len(self._parts) > self.rules.max_fragments:
                    self._cut(CLOSE_POLICY, self.rules.too_many_fragments())
                    return
                if frame.fin:
                    data, self._parts = b"".join(self._parts), []
                    self._message(data, self._parts_text)
            elif op is _PONG:
                waiting = self._pong
                if waiting is not None and frame.data == waiting[0]:
                    self._pong = None
                    waiting[2].append(trio.current_time())    # stamped when read, as intents are
                    waiting[1].set()
                probe = self._probe
                if probe is not None and frame.data == probe[0]:
                    self._probe = None
                    if self.on_rtt is not None:
                        self.on_rtt(trio.current_time() - probe[1])
            elif op is _CLOSE:
                close = proto.close_rcvd
                self._end(close.code if close else None, close.reason if close else "")
            # a ping: the protocol has queued its pong (sent below, unless we are closing)
            if self._gone:
                break
        exc = proto.parser_exc
        if exc is not None and not self._gone:
            if isinstance(exc, PayloadTooBig) and exc.size is not None and exc.size >= 1 << 63:
                # RFC 6455 section 5.2: the most significant bit of a 64-bit length must be 0.
                # The protocol sees only a big payload (1009); it is a malformed frame.
                proto.data_to_send()
                why = "invalid frame length: the top bit of a 64-bit length must be 0"
                self._control([Frame(_CLOSE, Close(CLOSE_PROTOCOL_ERROR, why).serialize()).serialize(mask=False)])
                self._closing = True
                self._end(CLOSE_PROTOCOL_ERROR, why)
            else:
                sent = proto.close_sent
                self._end(sent.code if sent else None, sent.reason if sent else str(exc))
        out = proto.data_to_send()
        if out and not self._closing:
            self._control([d for d in out if d])
            # what we owe (pongs) waits under the caps our data does (docs/PROTOCOL.md,
            # "Connection lifetime" 6): a peer that asks for more than it reads is closed
            if self._backlog and (owed := self.rules.owed_too_much(len(self._backlog), self._backlog_bytes)):
                self._cut(CLOSE_POLICY, owed)
                return
        if proto.close_sent is not None:
            self._closing = True

    def _message(self, data: bytes, text: bool) -> None:
        if self._closing:
            return                  # after our close frame, data is ignored (RFC 6455 section 1.4)
        if text:
            try:
                self._messages.append(data.decode())
            except UnicodeDecodeError as e:
                self._fail(CLOSE_BAD_DATA, f"invalid UTF-8 in a text frame at byte {e.start}")
            return
        self._messages.append(data)

    def _fail(self, code: int, reason: str) -> None:
        """Fail the WebSocket connection (RFC 6455 section 7.1.7): close frame, then the end."""
        if not self._closing and self._proto.state is State.OPEN:
            self._proto.fail(code, reason)
            self._control([d for d in self._proto.data_to_send() if d])
        self._closing = True
        self._end(code, reason)

    def _cut(self, code: int, reason: str) -> None:
        """Close at once for a policy (docs/PROTOCOL.md, "Connection lifetime" 5, 6): what
        waits and what the protocol queued (pongs) is dropped, our close frame goes out
        next, and nothing more the peer sent is parsed. ``cut`` says why, for the one log
        line. Already closing: our close frame is on its way; the parsing stops."""
        if self._closing:
            self._end(code, reason)
            return
        proto = self._proto
        self.drop_backlog()
        queued = [d for d in proto.data_to_send() if d]
        if proto.state is State.OPEN:
            proto.fail(code, _clip_reason(reason))
            queued = [d for d in proto.data_to_send() if d]
        else:
            queued = queued[-1:]    # the peer's close came in this slice: the answer to it, not the pongs before
        self._control(queued)
        self.cut = reason
        self._closing = True
        self._end(code, reason)

    def budget(self, rules: FrameRules) -> None:
        """Set the frame budget and caps (before the first receive): the bucket starts full."""
        self.rules = rules
        self._tokens = rules.burst
        self._spent_at = trio.current_time()

    def _control(self, frames: list[bytes]) -> None:
        """Write frames the protocol made (pong, ping, close) in order with ours; if they
        must wait, wake whoever flushes (the connection's writer task)."""
        if self._write(frames) and self.wake is not None:
            self.wake()

    def _end(self, code: int | None, reason: str) -> None:
        if not self._gone:
            self._gone = True
            self._ended = (code, reason)
            if self._pong is not None:
                self._pong[1].set()

    def _lost(self, why: str) -> None:
        """The socket failed: nothing more goes out or comes in."""
        self._end(1006, why)
        self._aborted = True
        self._closing = True
        self._backlog.clear()
        self._backlog_bytes = 0
        self._head_partial = False

    # ---------------------------------------------------------------- sending
    async def send(self, data: bytes) -> None:
        """Write one message and wait until it is written."""
        self.write(data)
        await self.flush(CLOSE_FLUSH)

    def write(self, data: bytes) -> int:
        """Frame one binary message and write it now if the socket is free; never waits.
        Returns how many frames wait in the backlog afterwards (0: all written; else the
        caller must see that ``flush`` runs)."""
        if self._closing:
            return 0            # closing or closed: nothing more can go out
        return self._write([frame_header(len(data)) + data])

    def write_many(self, messages: list[bytes]) -> int:
        """``write`` for several messages to this peer at once (one delivery pass of a
        table): framed one by one, handed to the kernel in one ``send``. What the kernel
        does not take waits in the backlog frame by frame, so the backlog's bound still
        counts frames. Returns how many frames wait afterwards, as ``write`` does."""
        if self._closing:
            return 0
        return self._write([frame_header(len(d)) + d for d in messages])

    def _write(self, framed: list[bytes]) -> int:
        backlog = self._backlog
        if backlog or self._flushing:
            backlog.extend(framed)
            self._backlog_bytes += sum(map(len, framed))
            return len(backlog)
        if not framed:
            return 0
        data = framed[0] if len(framed) == 1 else b"".join(framed)
        try:
            n = self._sock.send(data)
        except BlockingIOError:
            n = 0
        except OSError:
            n = 0               # reset, broken pipe: flush meets it and closes the connection
        if n != len(data):
            self._put_back(framed, n, False)
        return len(backlog)

    @property
    def backlog(self) -> int:
        """Frames (or the rest of one) waiting to be written."""
        return len(self._backlog)

    @property
    def backlog_bytes(self) -> int:
        """Bytes waiting to be written."""
        return self._backlog_bytes

    def drop_backlog(self) -> None:
        """Forget what waits (a slow consumer is closed without it), except the rest of a
        frame already partly written: cut short, it would garble the close frame after it."""
        keep = 1 if self._head_partial and self._backlog else 0
        del self._backlog[keep:]
        self._backlog_bytes = len(self._backlog[0]) if keep else 0

    async def flush(self, stall_timeout: float | None = None) -> None:
        """Write the backlog, and what is added meanwhile. Raises SendStalled if the peer
        takes no byte for ``stall_timeout`` seconds (a peer that reads slowly but steadily
        is not stalled), ConnectionClosed if the socket fails.

        Cancelled part way, what was not written goes back to the head of the backlog,
        frame bounds kept: a close frame written after it must not land inside a frame
        cut short."""
        if self._aborted:
            raise ConnectionClosed(*self._ended)
        async with self._flush_lock:
            self._flushing = True
            try:
                await self._write_backlog(stall_timeout)
            finally:
                self._flushing = False

    async def _write_backlog(self, stall_timeout: float | None) -> None:
        backlog = self._backlog
        sock = self._sock
        while backlog:
            frames = backlog[:]
            was_partial = self._head_partial
            data = b"".join(frames) if len(frames) > 1 else frames[0]
            backlog.clear()
            self._backlog_bytes = 0
            self._head_partial = False
            sent = 0
            try:
                view = memoryview(data)
                size = len(data)
                while sent < size:
                    try:
                        sent += sock.send(view[sent:])
                    except BlockingIOError:
                        if stall_timeout is None:
                            await trio.lowlevel.wait_writable(sock)
                        else:
                            with trio.move_on_after(stall_timeout) as wait:
                                await trio.lowlevel.wait_writable(sock)
                            if wait.cancelled_caught:
                                raise SendStalled(f"nothing taken for {stall_timeout:g} s") from None
            except OSError as e:            # reset, broken pipe
                self._lost(f"connection lost: {e.strerror or e}")
                raise ConnectionClosed(*self._ended) from None
            except BaseException:
                self._put_back(frames, sent, was_partial)
                raise

    def _put_back(self, frames: list[bytes], sent: int, was_partial: bool) -> None:
        """The frames of a write the kernel took only part of (or that was interrupted),
        less the ``sent`` bytes that went out, back at the head of the backlog (before what
        was added meanwhile), frame bounds kept."""
        i = 0
        while i < len(frames) and sent >= len(frames[i]):
            sent -= len(frames[i])
            i += 1
        rest = frames[i:]
        if not rest:
            return
        if sent:
            rest[0] = rest[0][sent:]
        self._backlog[:0] = rest
        self._backlog_bytes += sum(map(len, rest))
        self._head_partial = sent > 0 or (i == 0 and was_partial)

    def tcp_info(self) -> bytes:
        """The kernel's TCP_INFO of this socket (Linux's struct tcp_info; b"" where there
        is none): fair order's kernel bound (server/fairorder.py)."""
        try:
            return self._sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
        except (AttributeError, OSError):
            return b""

    async def ping(self) -> float:
        """Send a ping and wait for its pong (the caller bounds the wait); return the round
        trip in seconds: from handing the ping to the kernel (or to the backlog, when the
        socket is busy) to reading its pong. The payload is 8 random bytes, so a peer
        cannot answer before the ping reached it: it can make the round trip longer (answer
        late, read late), never shorter."""
        if self._closing or self._gone:
            raise ConnectionClosed(*self._ended)
        payload = os.urandom(8)
        answered = trio.Event()
        read_at: list = []
        self._pong = (payload, answered, read_at)
        self._proto.send_ping(payload)
        sent_at = trio.current_time()
        self._control(self._proto.data_to_send())
        await answered.wait()
        if self._gone or not read_at:
            raise ConnectionClosed(*self._ended)
        return read_at[0] - sent_at

    def probe(self) -> float | None:
        """``ping`` without waiting: send a ping now unless the last one is unanswered, and
        return None; or return since when (trio's clock) the last one waits. Its round
        trip goes to ``on_rtt`` when its pong is read. No task, cancel scope or event per
        ping: every seat at a fair table is pinged every few seconds."""
        probe = self._probe
        if probe is not None:
            return probe[1]
        if self._closing or self._gone:
            raise ConnectionClosed(*self._ended)
        payload = os.urandom(8)
        self._proto.send_ping(payload)
        self._probe = (payload, trio.current_time())
        self._control(self._proto.data_to_send())
        return None

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Send what waits, then our close frame (bounded: CLOSE_FLUSH seconds). After the
        close frame nothing more goes out. The peer's side of the close is awaited by
        ``serve`` once the handler is done."""
        if not self._closing and self._proto.state is State.OPEN:
            self._proto.send_close(code, _clip_reason(reason))
            self._write(self._proto.data_to_send())
        self._closing = True
        if self._aborted:
            return
        with trio.move_on_after(CLOSE_FLUSH) as scope:
            scope.shield = True
            try:
                await self.flush()
            except ConnectionClosed:
                pass
        if scope.cancelled_caught:
            self._aborted = True        # it takes nothing: drop it without waiting for its close

    @property
    def closed(self) -> bool:
        return self._closing or self._gone

    async def linger(self) -> None:
        """After our close frame: end our side of the TCP stream, then read (and ignore)
        what the peer still sends until it closes too, at most CLOSE_LINGER seconds, so
        our close frame is not lost to a reset (RFC 6455 section 7.1.1)."""
        sock = self._sock
        if self._aborted:
            return
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            return
        with trio.move_on_after(CLOSE_LINGER):
            while True:
                try:
                    if not sock.recv(RECV_SIZE):
                        return
                    await trio.lowlevel.checkpoint()    # a peer that floods on must not hold the loop
                except BlockingIOError:
                    await trio.lowlevel.wait_readable(sock)
                except OSError:
                    return


def host_port(host: str, port: int | None) -> str:
    """``host:port``, an IPv6 host in brackets (no port: the host alone, bracketed too)."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


def ws_url(host: str, port: int) -> str:
    """The ws:// URL of a listening address."""
    return f"ws://{host_port(host, port)}"


def _clip_reason(reason: str) -> str:
    """A close reason fits in a control frame: 123 bytes of UTF-8 at most."""
    data = reason.encode()
    return reason if len(data) <= 120 else data[:120].decode(errors="ignore")


_SHORT = [bytes((0x82, n)) for n in range(126)]
_MEDIUM = struct.Struct("!BBH").pack
_LONG = struct.Struct("!BBQ").pack


def frame_header(size: int) -> bytes:
    """The header of one unfragmented, unmasked binary frame (RFC 6455 section 5.2)."""
    if size < 126:
        return _SHORT[size]
    if size < 65536:
        return _MEDIUM(0x82, 126, size)
    return _LONG(0x82, 127, size)


# ---------------------------------------------------------------- the listener

class _Gate:
    """Counts what a stranger can make the listener hold: connections in their handshake,
    and connections per address. A trusted proxy's connection counts in the handshake at
    once, and against its client's address once its request head names the client."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.handshaking = 0
        self.per_address: dict[str, int] = {}

    def refusal(self, host: str | None) -> str | None:
        """Why a new connection from ``host`` (None: a trusted proxy's) is refused, if it is."""
        lim = self.limits
        if self.handshaking >= lim.max_handshakes:
            return f"too many connections opening at once (at most {lim.max_handshakes}); try again in a moment"
        return None if host is None else self.over(host)

    def over(self, host: str) -> str | None:
        lim = self.limits
        if lim.max_per_address and self.per_address.get(host, 0) >= lim.max_per_address:
            return (f"too many connections from your address (at most {lim.max_per_address}); "
                    "close some, or ask the operator to raise --max-per-address")
        return None

    def admit(self, host: str | None) -> None:
        self.handshaking += 1
        if host is not None:
            self.count(host)

    def count(self, host: str) -> None:
        self.per_address[host] = self.per_address.get(host, 0) + 1

    def release(self, host: str) -> None:
        n = self.per_address[host] - 1
        if n:
            self.per_address[host] = n
        else:
            del self.per_address[host]


def _http_response(status: int, phrase: str, text: str) -> bytes:
    body = text.encode()
    return (f"HTTP/1.1 {status} {phrase}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def _refuse_now(sock: socket.socket, why: str) -> None:
    """Over a cap: answer 503 without waiting for anything, and drop the connection."""
    try:
        try:
            sock.recv(RECV_SIZE)        # what arrived already; unread, it would make close() reset
        except OSError:
            pass
        sock.send(_http_response(503, "Service Unavailable", why + "\n"))
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    sock.close()


def _origin_allowed(request: Request, limits: Limits) -> str | None:
    """None if the request may open a WebSocket; else why not. A browser names the page
    that opened the socket in Origin; any page on the web could drive the server from a
    player's browser, so only the server's own host (or an origin the operator allowed)
    may. A client that is not a browser sends no Origin."""
    origin = request.headers.get("Origin")
    if origin is None:
        return None
    named = origin.strip().lower()
    if named in limits.allow_origins:
        return None
    if limits.peer_origins is not None and named in limits.peer_origins():
        return None
    host = (request.headers.get("Host") or "").strip().lower()
    try:
        netloc = urlsplit(origin.strip()).netloc.lower()
    except ValueError:
        netloc = ""
    if netloc and netloc == host:
        return None
    return (f"a page from {origin} may not open a WebSocket to this server; "
            f"the operator can allow it with --allow-origin {origin}")


async def _send_all(sock: socket.socket, chunks) -> None:
    for data in chunks:
        view = memoryview(data)
        while view:
            try:
                view = view[sock.send(view):]
            except BlockingIOError:
                await trio.lowlevel.wait_writable(sock)


# awaited in the connection's own task (within its handshake timeout): an answer that
# takes work does it in a worker thread (server/replays.py), never in the event loop
HttpHandler = Callable[[Request], Awaitable["Response | None"]]


def _wants_websocket(request: Request) -> bool:
    return any(v.strip().lower() == "websocket" for v in request.headers.get_all("Upgrade"))


async def _read_request(sock: socket.socket, first: bytes = b"") -> tuple[ServerProtocol, Request | None]:
    """Read the request head of the opening handshake, after ``first`` (read already); a
    bad one is answered here (None)."""
    proto = ServerProtocol(max_size=MAX_FRAME, logger=_ws_log)
    received = 0
    request: Request | None = None
    while request is None:
        if first:
            data, first = first, b""
        else:
            try:
                data = sock.recv(RECV_SIZE)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(sock)
                continue
        if not data:
            return proto, None
        received += len(data)
        proto.receive_data(data)
        events = proto.events_received()
        if events:
            request = events[0]  # type: ignore[assignment]  # a ServerProtocol's first event: the Request
        elif proto.handshake_exc is not None:
            out = [d for d in proto.data_to_send() if d]
            # not HTTP at all: the protocol just drops it; say why
            await _send_all(sock, out or [_http_response(400, "Bad Request", "this is a wildtable server: it speaks "
                                                         "WebSocket (ws://HOST:PORT)\n")])
            return proto, None
        elif received > HANDSHAKE_MAX_BYTES:
            await _send_all(sock, [_http_response(431, "Request Header Fields Too Large",
                                                  f"the request head is over {HANDSHAKE_MAX_BYTES} bytes\n")])
            return proto, None
    return proto, request


async def _answer(sock: socket.socket, proto: ServerProtocol, request: Request, limits: Limits,
                  http: HttpHandler | None, who: str) -> ServerProtocol | None:
    """Answer the opening handshake of ``who``; the protocol, if the WebSocket is open.
    A plain HTTP request (no ``Upgrade: websocket``) goes to ``http``, if given, whose
    response is sent before the connection closes (one request per connection)."""
    if http is not None and not _wants_websocket(request):
        response = await http(request)
        if response is not None:
            proto.send_response(response)
            await _send_all(sock, [d for d in proto.data_to_send() if d])
            return None
    why = _origin_allowed(request, limits)
    response = proto.reject(403, why + "\n") if why else proto.accept(request)
    proto.send_response(response)
    await _send_all(sock, [d for d in proto.data_to_send() if d])
    if response.status_code != 101:
        if why:
            log.warning("refused a WebSocket from %s: %s", who, why)
        return None
    return proto


def _listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address ``host`` names (as trio.open_tcp_listeners)."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    socks: list[socket.socket] = []
    seen = set()
    try:
        for family, kind, proto, _, addr in infos:
            if (family, addr) in seen:
                continue
            seen.add((family, addr))
            s = socket.socket(family, kind, proto)
            socks.append(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(socks) > 1:       # one port for every address
                addr = (addr[0], socks[0].getsockname()[1], *addr[2:])
            s.bind(addr)
            s.listen(4096)
            s.setblocking(False)
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks


_TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)     # Linux's number where Python lacks the name
_ACCEPT_AGAIN = {errno.ECONNABORTED, errno.EPROTO, errno.EPERM}
_ACCEPT_LATER = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


async def serve(handler: Callable[[Peer], Awaitable[None]], host: str, port: int, *,
                limits: Limits = Limits(), http: HttpHandler | None = None,
                task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Accept WebSockets until cancelled; ``task_status.started`` gets the bound port.
    ``http`` answers plain HTTP requests (an async function returning a
    ``websockets.http11.Response``, or None for the usual refusal: 426 "upgrade required").

    Each connection runs in a task of its own; whatever it raises ends that connection
    only (logged once, as our bug unless the peer went away), never the listener."""
    socks = _listen(host, port)
    gate = _Gate(limits)
    try:
        async with trio.open_nursery() as nursery:
            for s in socks:
                nursery.start_soon(_accept, s, gate, handler, http, nursery)
            task_status.started(socks[0].getsockname()[1])
    finally:
        for s in socks:
            trio.lowlevel.notify_closing(s)
            s.close()


async def _accept(lsock: socket.socket, gate: _Gate, handler, http, nursery: trio.Nursery) -> None:
    last_warned = -1e9
    while True:
        try:
            sock, addr = lsock.accept()
        except BlockingIOError:
            await trio.lowlevel.wait_readable(lsock)
            continue
        except OSError as e:
            if e.errno in _ACCEPT_AGAIN:
                continue
            if e.errno in _ACCEPT_LATER:
                now = trio.current_time()
                if now - last_warned > 10:
                    log.warning("cannot accept connections: %s (retrying)", e.strerror or e)
                    last_warned = now
                await trio.sleep(0.1)
                continue
            raise
        await trio.lowlevel.checkpoint()        # a flood of connects must not starve the tables
        sock.setblocking(False)
        host = addr[0]
        # a trusted proxy's connection is its client's, known once its request head is read
        counted = None if gate.limits.trusted.trusts(host) else host
        why = gate.refusal(counted)
        if why is not None:
            log.warning("refused a connection from %s: %s", host, why)
            _refuse_now(sock, why)
            continue
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # As trio's SocketStream does: the kernel holds at most 16 kB not yet sent, so
            # a peer that does not keep up shows in our backlog (and is bounded there), not
            # in megabytes of kernel buffer.
            sock.setsockopt(socket.IPPROTO_TCP, _TCP_NOTSENT_LOWAT, 16 * 1024)
        except OSError:
            pass
        gate.admit(counted)
        nursery.start_soon(_connection, sock, Address(host, addr[1]), gate, gate.limits, handler, http, counted)


_LOCAL = Address("local")      # how a connection the server makes to itself is named


async def serve_socket(sock: socket.socket, handler: Callable[[Peer], Awaitable[None]], *,
                       limits: Limits = Limits(), who: Address = _LOCAL) -> None:
    """One connection the server makes to itself (its own bots, server/botseats.py, over
    a socketpair): the same handshake, Peer and handler as a listener's connection, so
    every rule a player obeys, but none of the listener's caps: it takes no slot of any
    address. ``who`` names it in logs and ``Peer.remote``."""
    sock.setblocking(False)
    await _connection(sock, who, None, limits, handler, None, None)


async def _connection(sock: socket.socket, where: Address, gate: _Gate | None, limits: Limits, handler, http,
                      counted: str | None) -> None:
    """One connection from its handshake to its end. ``counted``: the address it counts
    against already (None: a trusted proxy's, counted here once the client is known, or
    one without a gate)."""
    peer = None
    try:
        try:
            proto = None
            with trio.move_on_after(limits.handshake_timeout):
                proxied = gate is not None and counted is None      # a trusted proxy's
                first: bytes | None = b""
                if proxied and limits.proxy_protocol:
                    where, first = await _proxy_header(sock, where)
                proto, request = await _read_request(sock, first) if first is not None else (None, None)
                if request is not None and proxied and gate is not None:
                    where, request = await _behind_proxy(sock, where, request, gate)
                    if request is not None:
                        counted = where.host
                proto = None if request is None or proto is None else await _answer(
                    sock, proto, request, limits, http, host_port(where.host, where.port))
        except OSError:
            proto = None            # reset during the handshake
        finally:
            if gate is not None:
                gate.handshaking -= 1
        if proto is None:
            return
        peer = Peer(sock, proto, where.host, where.port)
        try:
            await handler(peer)
        finally:
            await peer.close()              # the handler may have closed it already
            await peer.linger()
    except* (ConnectionClosed, SendStalled):
        pass                        # the peer went away, or stopped reading
    except* Exception as group:
        log.error("connection %s ended by a bug of ours (the server goes on)", host_port(where.host, where.port),
                  exc_info=group)
    finally:
        if counted is not None and gate is not None:
            gate.release(counted)
        trio.lowlevel.notify_closing(sock)
        sock.close()


async def _proxy_header(sock: socket.socket, proxy: Address) -> tuple[Address, bytes | None]:
    """A trusted proxy's connection that begins with a PROXY protocol header
    (server/proxyproto.py): the client it names (the proxy itself for LOCAL or UNKNOWN), and
    the bytes read after the header; None for them if there is no valid header (dropped,
    as the spec asks, and logged)."""
    data = b""
    while True:
        try:
            more = sock.recv(proxyproto.V2_MAX - len(data))
        except BlockingIOError:
            await trio.lowlevel.wait_readable(sock)
            continue
        if not more:
            return proxy, None
        data += more
        got = proxyproto.parse(data)
        if isinstance(got, proxyproto.Invalid):
            log.warning("dropped a connection from %s (a --trusted-proxy, and --proxy-protocol is on): %s",
                        proxy.host, got.why)
            return proxy, None
        if got is not None:
            return got.client or proxy, data[got.size:]


async def _behind_proxy(sock: socket.socket, proxy: Address, request: Request,
                        gate: _Gate) -> tuple[Address, Request | None]:
    """A trusted proxy's connection: whose it is (server/forwarded.py; ``proxy``: the peer,
    or the client its PROXY protocol header named), counted against that address, or
    refused with the 503 a direct connection over the cap gets (None)."""
    trusted = gate.limits.trusted
    client = trusted.client(proxy.host, proxy.port, request.headers.get_all(trusted.header))
    why = gate.over(client.host)
    if why is None:
        gate.count(client.host)
        return client, request
    via = sock.getpeername()[0]
    log.warning("refused a connection from %s (via %s): %s", client.host, via, why)
    await _send_all(sock, [_http_response(503, "Service Unavailable", why + "\n")])
    return client, None
