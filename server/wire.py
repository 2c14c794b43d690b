"""The server's WebSocket layer: our own Trio I/O on plain sockets around the `websockets`
library's Sans-I/O ``ServerProtocol``, which parses the handshake and every frame and
checks them against RFC 6455. With server/listener.py (the listening sockets, their caps
and the opening handshake), the only server modules that touch a WebSocket library, so
it can be measured and swapped; why this base: docs/ARCHITECTURE.md, "The WebSocket
layer". This module serves one accepted WebSocket: its Peer.

What stays ours: the sockets, the backlog of outgoing frames (bounded by the connection,
in frames and bytes), the frame budget (server/framebudget.py), the data frames we send
(framed here, written straight to the socket when it is free), and the close: after our
close frame nothing more goes out, so a ping, pong or data frame the peer sends after it
is ignored, not answered (RFC 6455 section 5.5.1).
"""

from __future__ import annotations

import logging
import os
import socket
import struct
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, cast

import trio
from websockets.exceptions import PayloadTooBig
from websockets.frames import Close, Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from .framebudget import FEED_SLICE, FrameRules
from .wsclose import CLOSE_BAD_DATA, CLOSE_POLICY, CLOSE_PROTOCOL_ERROR, answer_early_close, clip_reason

if TYPE_CHECKING:       # the listener's names, still known as wire.* (__getattr__ below)
    from .listener import HANDSHAKE_MAX_BYTES as HANDSHAKE_MAX_BYTES
    from .listener import HANDSHAKE_TIMEOUT as HANDSHAKE_TIMEOUT
    from .listener import MAX_HANDSHAKES as MAX_HANDSHAKES
    from .listener import MAX_PER_ADDRESS as MAX_PER_ADDRESS
    from .listener import HttpHandler as HttpHandler
    from .listener import Limits as Limits
    from .listener import serve as serve
    from .listener import serve_socket as serve_socket

log = logging.getLogger("wildtable.server")

CLOSE_LINGER = 2.0           # seconds to wait for the peer's side of a close before dropping it
CLOSE_FLUSH = 2.0            # seconds for what waits, and the close frame, to go out at the close
RECV_SIZE = 65536


_BINARY, _TEXT, _CONT = Opcode.BINARY, Opcode.TEXT, Opcode.CONT
_PING, _PONG, _CLOSE = Opcode.PING, Opcode.PONG, Opcode.CLOSE


class ConnectionClosed(Exception):
    """The WebSocket is closed or closing: nothing more can be read or written."""

    def __init__(self, code: int | None = None, reason: str = ""):
        super().__init__(code, reason)
        self.code, self.reason = code, reason


class SendStalled(Exception):
    """The peer took no bytes of what waits for it within the timeout ``flush`` was given."""


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
                 "cut", "_unfed", "_fed", "_drained", "_early")

    def __init__(self, sock: socket.socket, proto: ServerProtocol, host: str, port: int | None, early: list | None = None):
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
        self._unfed: bytes | memoryview | None = None   # the rest of a read, not parsed yet (FEED_SLICE at a time)
        self._fed = False                       # a slice was parsed since this task's last schedule point
        self._drained = False                   # the last read was short: wait for the socket before the next
        # frames that came in the handshake's read (a client may send before the 101): its
        # first messages, taken at the first receive, under the rules set by then
        self._early = early if early and (early[0] or early[1]) else None     # [frames, pongs owed]

    # ---------------------------------------------------------------- receiving
    async def receive(self) -> bytes | str:
        """The next whole message: bytes for a binary one, str for a text one. Raises
        ConnectionClosed once the peer has closed, failed the protocol, or gone.

        One schedule point a message, at least and (as a rule) at most: a message read
        after a wait for the socket returns with no other; so does the read that follows
        a short one (the socket is drained: it waits for the socket first, with no ``recv``
        that would only say EAGAIN). At most FEED_SLICE bytes are parsed between two
        schedule points, and a receive cancelled at one loses nothing (docs/ARCHITECTURE.md,
        "The WebSocket layer")."""
        messages = self._messages
        if self._early is not None:
            (early, owed), self._early = self._early, None
            self._charge(early, owed)
        if messages:
            # parsed earlier from one read: a peer that pipelines many messages must not
            # keep every other task waiting while its reader works through them
            await trio.lowlevel.checkpoint()
            self._fed = False
            return messages.popleft()
        sock = self._sock
        yielded = False
        while not messages:
            if self._gone:
                raise ConnectionClosed(*self._ended)     # over its budget, or closed: the rest is not parsed
            data: bytes | memoryview | None = self._unfed
            if data is None:
                if self._drained:
                    await trio.lowlevel.wait_readable(sock)
                    yielded, self._fed = True, False
                try:
                    data = sock.recv(RECV_SIZE)
                except BlockingIOError:
                    self._drained = True
                    continue
                except OSError as e:            # reset
                    self._lost(f"connection lost: {e.strerror or e}")
                    continue
                if not data:
                    self._proto.receive_eof()
                    self._take_events()
                    self._lost("the peer closed the connection without a close frame")
                    continue
                self._drained = len(data) < RECV_SIZE
            if self._fed:
                # a slice was parsed since the last schedule point: let the other tasks
                # run first (the read waits here, kept if this task is cancelled meanwhile)
                self._unfed = data
                await trio.lowlevel.checkpoint()
                yielded, self._fed = True, False
                continue
            # a peer with more to read must not keep the other tasks from running: at most
            # FEED_SLICE bytes are parsed between two schedule points; the rest of the read
            # waits here
            if len(data) > FEED_SLICE:
                view = memoryview(data)
                data, self._unfed = view[:FEED_SLICE], view[FEED_SLICE:]
            else:
                self._unfed = None
            self._feed(data)
            self._fed = True
        if not yielded:
            # every receive is a schedule point and a cancel point, as trio's own are; a
            # cancel here leaves the message for the next receive
            await trio.lowlevel.checkpoint()
            self._fed = False
        return messages.popleft()

    def _feed(self, data) -> None:
        """Parse ``data`` (at most FEED_SLICE bytes); every frame in it costs a token of the
        peer's budget first: a peer over it is closed (1008), none of these frames handled."""
        proto = self._proto
        proto.receive_data(data)
        self._charge(proto.events_received())

    def _charge(self, events: list, owed: list | None = None) -> None:
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
        self._take_events(events, owed)

    def _take_events(self, events=None, early_out: list | None = None) -> None:
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
                if proto.state is State.OPEN:
                    # it came with the handshake (server/listener.py): parsed before the 101
                    # opened the protocol, which answers a close only when open. Echo it now
                    # (RFC 6455 section 5.5.1), as the protocol does one that comes after
                    answer_early_close(proto)
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
        out = early_out + proto.data_to_send() if early_out else proto.data_to_send()
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
            proto.fail(code, clip_reason(reason))
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
        return self._write([(_SHORT[n] if (n := len(d)) < 126 else frame_header(n)) + d for d in messages])

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
            if self._proto.close_rcvd is None:
                self._proto.send_close(code, clip_reason(reason))
            else:       # a close that came with the handshake, not read yet (above)
                answer_early_close(self._proto)
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


# The listener (server/listener.py) moved out of this module; its callers (server/app.py,
# the tests, bench/) still name it as wire.serve, wire.Limits, ... Imported when first
# asked for, as listener.py imports this module.
_LISTENER_NAMES = frozenset({"HANDSHAKE_MAX_BYTES", "HANDSHAKE_TIMEOUT", "MAX_HANDSHAKES", "MAX_PER_ADDRESS",
                             "HttpHandler", "Limits", "serve", "serve_socket"})


def __getattr__(name: str) -> Any:
    if name in _LISTENER_NAMES:
        from . import listener
        return getattr(listener, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
