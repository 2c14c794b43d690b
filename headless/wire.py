"""The only client module that touches the WebSocket library: our own Trio I/O (a TCP
stream, or TLS over it for wss://) around the `websockets` library's Sans-I/O
``ClientProtocol``, which makes the handshake and every frame and checks what the server
sends against RFC 6455. The server's side does the same with ``ServerProtocol``
(server/wire.py); why this base and not trio-websocket: docs/ARCHITECTURE.md, "The
WebSocket layer".

No task of its own: a message is read when someone asks for one (``get_message``), and a
ping the server sends is answered as it is read. ``ping`` reads for itself when nobody
else is reading and no message waits to be taken, so a client that does not read is not
read for: what the server sends piles up in the kernel's buffers, not here.

After our close frame nothing more goes out: a ping that crosses it is not answered
(RFC 6455 section 5.5.1), and no ping, pong or close of the server's can make this module
raise anything but ConnectionClosed.
"""

from __future__ import annotations

import logging
import os
import ssl
from collections import deque
from contextlib import asynccontextmanager

import trio
from websockets.client import ClientProtocol
from websockets.exceptions import InvalidStatus, InvalidURI, PayloadTooBig
from websockets.frames import Opcode
from websockets.protocol import State
from websockets.uri import WebSocketURI, parse_uri

MAX_MESSAGE = 8 * 1024 * 1024       # bytes: a larger message from the server closes the connection (1009)
CONNECT_TIMEOUT = 10.0              # seconds for TCP, TLS and the WebSocket handshake together
CLOSE_TIMEOUT = 3.0                 # seconds for our close frame to go out and the server to close too
SEND_TIMEOUT = 10.0                 # seconds a write may wait for the server to take bytes
RECV_SIZE = 65536

CLOSE_ABNORMAL = 1006
CLOSE_BAD_DATA = 1007
CLOSE_TOO_BIG = 1009

_ws_log = logging.getLogger("wildtable.client.websocket")
_ws_log.setLevel(logging.WARNING)

_BINARY, _TEXT, _CONT = Opcode.BINARY, Opcode.TEXT, Opcode.CONT
_PING, _PONG, _CLOSE = Opcode.PING, Opcode.PONG, Opcode.CLOSE
_GONE = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class ConnectionClosed(Exception):
    """The WebSocket is closed or closing: nothing more can be read or written. ``code``
    and ``reason`` are the close frame's (1006 and why: the connection was lost)."""

    def __init__(self, code: int | None = None, reason: str = ""):
        super().__init__(code, reason)
        self.code, self.reason = code, reason

    def __str__(self) -> str:
        return f"closed ({self.code}{': ' + self.reason if self.reason else ''})"


class HandshakeError(Exception):
    """The WebSocket could not be opened (the message says why)."""


class ConnectionRejected(HandshakeError):
    """The peer answered the handshake with HTTP, not 101: its status, headers (name,
    value pairs) and body."""

    def __init__(self, status_code: int, headers: tuple[tuple[str, str], ...], body: bytes):
        super().__init__(f"HTTP {status_code}")
        self.status_code, self.headers, self.body = status_code, headers, body


class WebSocket:
    """One open client WebSocket (made by ``connect``)."""

    def __init__(self, stream: trio.abc.Stream, proto: ClientProtocol, close_timeout: float = CLOSE_TIMEOUT,
                 early: list | None = None):
        self._stream = stream
        self._proto = proto
        self._close_timeout = close_timeout
        self._messages: deque = deque()     # whole messages read, not yet taken
        self._parts: list[bytes] = []       # the fragments of a message still coming
        self._parts_text = False
        self._out: list[bytes] = []         # frames to write, in order
        self._send_lock = trio.Lock()
        self._reading = False               # a task waits in receive_some
        self._change = trio.Event()         # set (and replaced) when a read ends or a message is taken
        self._pings: dict[bytes, trio.Event] = {}
        self._closing = False               # our close frame is written or queued: nothing more goes out
        self._ended: tuple[int | None, str] | None = None   # closed: nothing more to read
        self._eof = False                   # the stream ended or failed: nothing more comes in
        self._broken = False                # a write failed: nothing more can go out
        self._stream_closed = False
        self._take_events(early or [])      # frames that came in the same read as the handshake's answer

    # ---------------------------------------------------------------- receiving
    async def get_message(self) -> bytes | str:
        """The next message: bytes for a binary one, str for a text one. The messages
        the server sent before its close come first; then ConnectionClosed."""
        await trio.lowlevel.checkpoint()
        while not self._messages:
            if self._ended is not None:
                raise ConnectionClosed(*self._ended)
            await self._read_round()
        message = self._messages.popleft()
        self._changed()
        return message

    async def _read_round(self) -> None:
        """Read once and take what it brings; if another task is reading, wait for its
        read instead (each then looks again at what it waits for)."""
        if self._reading:
            await self._change.wait()
            return
        if self._eof:
            self._end(CLOSE_ABNORMAL, "the connection is closed")
            return
        await self._flush_quietly()             # a pong or close waiting since the last read
        self._reading = True
        try:
            try:
                data = await self._stream.receive_some(RECV_SIZE)
            except _GONE as e:
                self._lost(f"connection lost: {_why(e)}")
                return
            if data:
                self._proto.receive_data(data)
            else:
                self._eof = True
                self._proto.receive_eof()
            self._take_events(self._proto.events_received())
        finally:
            self._reading = False
            self._changed()
        await self._flush_quietly()             # pongs, the echo of the server's close

    def _changed(self) -> None:
        self._change.set()
        self._change = trio.Event()

    def _take_events(self, events: list) -> None:
        proto = self._proto
        for frame in events:
            op = frame.opcode
            if op is _BINARY or op is _TEXT:
                if frame.fin:
                    self._message(frame.data, op is _TEXT)
                else:
                    self._parts, self._parts_text = [frame.data], op is _TEXT
            elif op is _CONT:
                self._parts.append(frame.data)
                if frame.fin:
                    data, self._parts = b"".join(self._parts), []
                    self._message(data, self._parts_text)
            elif op is _PONG:
                waiting = self._pings.pop(bytes(frame.data), None)
                if waiting is not None:
                    waiting.set()
            elif op is _CLOSE:
                close = proto.close_rcvd
                self._end(close.code if close else None, close.reason if close else "")
            # a ping: the protocol has queued its pong (written below, unless we are closing)
        exc = proto.parser_exc
        if exc is not None:
            sent = proto.close_sent
            if isinstance(exc, EOFError):
                self._end(CLOSE_ABNORMAL, "the server closed the connection without a close frame")
            elif isinstance(exc, PayloadTooBig):
                self._end(sent.code if sent else CLOSE_TOO_BIG, f"a message from the server is over {MAX_MESSAGE} bytes")
            else:
                self._end(sent.code if sent else CLOSE_ABNORMAL, sent.reason if sent and sent.reason else str(exc))
        # b"" asks for the end of our stream, which aclose makes
        out = [d for d in proto.data_to_send() if d]
        if out and not self._closing:
            self._out.extend(out)
        if proto.close_sent is not None:
            self._closing = True

    def _message(self, data: bytes, text: bool) -> None:
        if self._closing:
            return                  # after our close frame, data is ignored (RFC 6455 section 1.4)
        if text:
            try:
                self._messages.append(data.decode())
            except UnicodeDecodeError as e:
                why = f"invalid UTF-8 in a text frame at byte {e.start}"
                if self._proto.state is State.OPEN:
                    self._proto.fail(CLOSE_BAD_DATA, why)
                    self._out.extend(d for d in self._proto.data_to_send() if d)
                self._closing = True
                self._end(CLOSE_BAD_DATA, why)
            return
        self._messages.append(bytes(data))

    def _end(self, code: int | None, reason: str) -> None:
        if self._ended is None:
            self._ended = (code, reason)
            for waiting in self._pings.values():
                waiting.set()
            self._pings.clear()

    def _lost(self, why: str) -> None:
        """The stream failed: nothing more goes out or comes in."""
        self._end(CLOSE_ABNORMAL, why)
        self._eof = self._broken = self._closing = True
        self._out.clear()

    # ---------------------------------------------------------------- sending
    async def send_message(self, data: bytes | str) -> None:
        """Send one message (binary for bytes, text for str) and wait until it is written."""
        if self._closing or self._ended is not None:
            raise ConnectionClosed(*(self._ended or (1000, "closed by us")))
        if isinstance(data, str):
            self._proto.send_text(data.encode())
        else:
            self._proto.send_binary(data)
        self._out.extend(self._proto.data_to_send())
        await self._flush()

    async def _flush(self) -> None:
        """Write what waits (and what is added meanwhile). A write the server takes
        nothing of for SEND_TIMEOUT seconds, or one cancelled part way (a frame may be
        cut short), ends the connection: ConnectionClosed."""
        async with self._send_lock:
            while self._out and not self._broken:
                data = b"".join(self._out)
                self._out.clear()
                try:
                    with trio.fail_after(SEND_TIMEOUT):
                        await self._stream.send_all(data)
                except trio.TooSlowError:
                    self._lost(f"the server took nothing for {SEND_TIMEOUT:g} s")
                except _GONE as e:
                    self._lost(f"connection lost: {_why(e)}")
                except BaseException:
                    self._lost("a write was cancelled part way")
                    raise
        if self._broken:
            raise ConnectionClosed(*(self._ended or (CLOSE_ABNORMAL, "connection lost")))

    async def _flush_quietly(self) -> None:
        """Write the frames the protocol made (pongs, a close), unless a write is under
        way: that one writes them too, in order, before it returns. A reader must not wait
        for a writer, who may be waiting for the server, who may be waiting for us to read."""
        if self._out and not self._broken and not self._send_lock.locked():
            try:
                await self._flush()
            except ConnectionClosed:
                pass                    # the connection has ended: whoever waits sees it

    async def ping(self) -> None:
        """Send a ping and wait for its pong (the caller bounds the wait)."""
        if self._closing or self._ended is not None:
            raise ConnectionClosed(*(self._ended or (1000, "closed by us")))
        payload = os.urandom(8)
        answered = trio.Event()
        self._pings[payload] = answered
        try:
            self._proto.send_ping(payload)
            self._out.extend(self._proto.data_to_send())
            await self._flush()
            while not answered.is_set():
                if self._reading or self._messages:
                    await self._change.wait()       # another task reads, or a message waits to be taken
                else:
                    await self._read_round()
        finally:
            self._pings.pop(payload, None)
        if self._ended is not None:
            raise ConnectionClosed(*self._ended)

    # ---------------------------------------------------------------- closing
    async def aclose(self, code: int = 1000, reason: str = "") -> None:
        """Close: our close frame, then the server's close and the end of its stream,
        within the close timeout (even if the caller is cancelled), then the socket.
        Idempotent."""
        if self._stream_closed:
            return
        with trio.CancelScope(shield=True), trio.move_on_after(self._close_timeout):
            try:
                if not self._closing and self._ended is None and self._proto.state is State.OPEN:
                    self._proto.send_close(code, reason)
                    self._out.extend(self._proto.data_to_send())
                    self._closing = True
                    self._end(code, reason or "closed by us")
                await self._flush_quietly()
                while not self._eof:            # the server answers with its close, then ends its stream
                    await self._read_round()
            except ConnectionClosed:
                pass
        self._stream_closed = self._closing = self._broken = True
        self._end(CLOSE_ABNORMAL, "closed")
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await self._stream.aclose()         # the socket is closed even if TLS's goodbye is given up


def _why(e: BaseException) -> str:
    cause = e.__cause__ or e.__context__
    if isinstance(e, OSError):
        return e.strerror or str(e) or type(e).__name__
    if cause is not None and not isinstance(cause, trio.Cancelled):
        return _why(cause)
    return str(e) or type(e).__name__


async def connect(url: str, *, ssl_context: ssl.SSLContext | None = None,
                  connect_timeout: float = CONNECT_TIMEOUT, close_timeout: float = CLOSE_TIMEOUT) -> WebSocket:
    """Open a WebSocket to ``url`` (ws:// or wss://). Raises OSError when nothing answers
    at the address (trio's error, saying why), HandshakeError when the TLS or WebSocket
    handshake fails or all of it takes over ``connect_timeout`` seconds, and
    ConnectionRejected when the server answers with plain HTTP."""
    return await _open(_parse(url), None, ssl_context, connect_timeout, close_timeout)


async def wrap_stream(stream: trio.abc.Stream, url: str, *, connect_timeout: float = CONNECT_TIMEOUT,
                      close_timeout: float = CLOSE_TIMEOUT) -> WebSocket:
    """The WebSocket handshake for ``url`` over a stream already connected (tests use a
    socket with a tiny receive buffer); the stream is closed if it fails."""
    return await _open(_parse(url), stream, None, connect_timeout, close_timeout)


async def _open(uri: WebSocketURI, stream: trio.abc.Stream | None, ssl_context: ssl.SSLContext | None,
                connect_timeout: float, close_timeout: float) -> WebSocket:
    try:
        with trio.fail_after(connect_timeout):
            if stream is None:
                stream = await trio.open_tcp_stream(uri.host, uri.port)
                if uri.secure:
                    stream = trio.SSLStream(stream, ssl_context or ssl.create_default_context(),
                                            server_hostname=uri.host, https_compatible=True)
                    try:
                        await stream.do_handshake()
                    except trio.BrokenResourceError as e:
                        raise HandshakeError(f"the TLS handshake failed: {_why(e)}") from None
            return await _handshake(stream, uri, close_timeout)
    except trio.TooSlowError:
        await _abandon(stream)
        raise HandshakeError(f"no answer to the WebSocket handshake within {connect_timeout:g} s") from None
    except BaseException:
        await _abandon(stream)
        raise


def _parse(url: str) -> WebSocketURI:
    try:
        return parse_uri(url)
    except InvalidURI as e:
        raise HandshakeError(f"bad server address {url!r}: {e.msg}") from None


async def _handshake(stream: trio.abc.Stream, uri: WebSocketURI, close_timeout: float) -> WebSocket:
    proto = ClientProtocol(uri, max_size=MAX_MESSAGE, logger=_ws_log)
    events: list = []
    try:
        proto.send_request(proto.connect())
        await stream.send_all(b"".join(proto.data_to_send()))
        while not events and proto.handshake_exc is None:
            data = await stream.receive_some(RECV_SIZE)
            if data:
                proto.receive_data(data)
            else:
                proto.receive_eof()
            events = proto.events_received()
            if not data:
                break
    except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
        raise HandshakeError(f"the connection failed during the WebSocket handshake: {_why(e)}") from None
    if not events or proto.handshake_exc is not None:
        raise _refusal(proto.handshake_exc)
    # the answer (101), then any frames that came in the same read
    return WebSocket(stream, proto, close_timeout, events[1:])


def _refusal(exc: BaseException | None) -> HandshakeError:
    """The error for a handshake that did not open the WebSocket."""
    if isinstance(exc, InvalidStatus):
        r = exc.response
        return ConnectionRejected(r.status_code, tuple(r.headers.raw_items()), bytes(r.body or b""))
    if exc is None or isinstance(exc.__cause__, EOFError):
        return HandshakeError("the server closed the connection without answering the WebSocket handshake")
    why = f"{exc}: {exc.__cause__}" if exc.__cause__ is not None else str(exc)
    return HandshakeError(f"the server's answer is not a WebSocket handshake ({why})")


async def _abandon(stream: trio.abc.Stream | None) -> None:
    if stream is not None:
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await stream.aclose()


@asynccontextmanager
async def open_socket(url: str, stream: trio.abc.Stream | None = None, **options):
    """``connect(url, **options)`` (over ``stream``, if given: ``wrap_stream``), closed at
    exit (``WebSocket.aclose``)."""
    ws = await (connect(url, **options) if stream is None else wrap_stream(stream, url, **options))
    try:
        yield ws
    finally:
        await ws.aclose()
