"""The only server module that touches the WebSocket library, so it can be measured and swapped."""

from __future__ import annotations

import struct
from functools import partial
from typing import Awaitable, Callable

import trio
import trio_websocket

# Frames bigger than this are refused by the WebSocket layer itself (close 1009);
# frames between the protocol's cap and this one get a readable error first.
WS_MAX_MESSAGE = 1024 * 1024

ConnectionClosed = trio_websocket.ConnectionClosed


class Peer:
    """One accepted WebSocket: bytes in, bytes out, pings, close.

    Outgoing messages take the shortest way: ``write`` frames a message and, when nothing
    is being written to this socket and nothing waits, hands it to the kernel at once
    (no task switch, no lock, no scheduler trip). Otherwise, or when the kernel takes only
    part of it, the rest waits in the peer's backlog until ``flush`` (the connection's
    writer task) writes it. Whoever takes trio-websocket's stream lock writes the backlog
    first (see ``_BacklogFirstLock``), so a ping, pong or close frame never lands inside
    one of our frames and frames go out in the order they were written.
    """

    __slots__ = ("_ws", "remote", "_sock", "_backlog", "_head_partial", "_lock")

    def __init__(self, ws: trio_websocket.WebSocketConnection):
        self._ws = ws
        try:
            r = ws.remote
        except OSError:             # the peer is already gone (reset right after the handshake)
            r = "gone"
        self.remote = f"{r.address}:{r.port}" if hasattr(r, "address") else str(r)
        self._backlog: list[bytes] = []         # framed bytes not yet written, in order
        self._head_partial = False              # the backlog starts with the rest of a partly written frame
        # the OS socket under trio's SocketStream (serve() accepts plain TCP only)
        self._sock = ws._stream.socket._sock
        self._lock = ws._stream_lock = _BacklogFirstLock(self, ws._stream_lock)

    async def receive(self) -> bytes | str:
        return await self._ws.get_message()

    async def send(self, data: bytes) -> None:
        await self._ws.send_message(data)

    def write(self, data: bytes) -> int:
        """Frame one binary message and write it now if the socket is free; never waits.
        Returns how many frames wait in the backlog afterwards (0: all written; else the
        caller must see that ``flush`` runs)."""
        return self._write([frame_header(len(data)) + data])

    def write_many(self, messages: list[bytes]) -> int:
        """``write`` for several messages to this peer at once (one delivery pass of a
        table): framed one by one, handed to the kernel in one ``send``. What the kernel
        does not take waits in the backlog frame by frame, so the backlog's bound still
        counts frames. Returns how many frames wait afterwards, as ``write`` does."""
        return self._write([frame_header(len(d)) + d for d in messages])

    def _write(self, framed: list[bytes]) -> int:
        if self._ws._close_reason is not None:
            return 0            # closing or closed: nothing more can go out
        backlog = self._backlog
        if backlog or self._lock.held:
            backlog.extend(framed)
            return len(backlog)
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

    def drop_backlog(self) -> None:
        """Forget what waits (a slow consumer is closed without it), except the rest of a
        frame already partly written: cut short, it would garble the close frame after it."""
        del self._backlog[1 if self._head_partial else 0:]

    async def flush(self) -> None:
        """Write the backlog (taking the stream lock writes it; see _BacklogFirstLock)."""
        ws = self._ws
        if ws._close_reason is not None:
            raise ConnectionClosed(ws._close_reason)
        async with self._lock:
            pass

    async def _write_backlog(self) -> None:
        """With the stream lock held: write the backlog, and what is added meanwhile.

        Cancelled part way (the send timeout, a slow consumer, shutdown), what was not
        written goes back to the head of the backlog, frame bounds kept: a close frame
        written after it must not land inside a frame cut short."""
        ws = self._ws
        backlog = self._backlog
        sock = self._sock
        while backlog:
            frames = backlog[:]
            was_partial = self._head_partial
            data = b"".join(frames) if len(frames) > 1 else frames[0]
            backlog.clear()
            self._head_partial = False
            sent = 0
            try:
                view = memoryview(data)
                size = len(data)
                while sent < size:
                    try:
                        sent += sock.send(view[sent:])
                    except BlockingIOError:
                        await trio.lowlevel.wait_writable(sock)
            except (OSError, trio.ClosedResourceError):     # reset, broken pipe; or closed by Peer.close
                backlog.clear()
                self._head_partial = False
                await ws._abort_web_socket()
                raise ConnectionClosed(ws._close_reason) from None
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
        self._head_partial = sent > 0 or (i == 0 and was_partial)

    async def ping(self) -> None:
        await self._ws.ping()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        ws = self._ws
        with trio.move_on_after(2) as scope:
            scope.shield = True
            await ws.aclose(code, reason[:120])
            # A close the peer began returns at once from aclose, while trio-websocket's
            # reader may still be writing its answer (with no timeout of its own) to a peer
            # that reads nothing: wait for whoever holds the stream lock, within the 2 s.
            async with self._lock._lock:
                pass
        if scope.cancelled_caught:
            # Given up: close the socket, so no task stays stuck writing to it.
            ws._stream.socket.close()

    @property
    def closed(self) -> bool:
        return self._ws.closed is not None


class _BacklogFirstLock:
    """Takes the place of trio-websocket's stream lock (it only ever uses ``async with``
    on it): whoever takes it writes the peer's backlog first, so every frame trio-websocket
    writes itself (pong, ping, close) goes out after ours, never in the middle of one."""

    __slots__ = ("_peer", "_lock", "held")

    def __init__(self, peer: Peer, lock: trio.StrictFIFOLock):
        self._peer, self._lock = peer, lock
        self.held = False           # a plain attribute: Peer.write reads it for every frame

    async def __aenter__(self) -> None:
        await self._lock.acquire()
        self.held = True
        if self._peer._backlog:
            try:
                await self._peer._write_backlog()
            except BaseException:
                self.held = False
                self._lock.release()
                raise

    async def __aexit__(self, *exc) -> None:
        self.held = False
        self._lock.release()


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


# What one peer vanishing can raise, from our handler or from trio-websocket's own
# per-connection reader task.
_PEER_GONE = (trio_websocket.ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError)


async def serve(handler: Callable[[Peer], Awaitable[None]], host: str, port: int, *,
                task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Accept WebSockets forever; ``task_status.started`` gets the bound port."""

    async def on_request(request: trio_websocket.WebSocketRequest) -> None:
        try:
            ws = await request.accept()
        except ConnectionClosed:
            return          # the client left during the handshake: nothing to serve
        await handler(Peer(ws))

    listeners = await trio.open_tcp_listeners(port, host=host)
    server = trio_websocket.WebSocketServer(
        on_request, listeners, max_message_size=WS_MAX_MESSAGE, connect_timeout=10, disconnect_timeout=5)

    async def on_stream(stream: trio.abc.Stream) -> None:
        # One peer's failure ends that peer only. trio-websocket's reader task raises
        # ConnectionClosed when a peer sends bytes that are not WebSocket and resets before
        # the close frame goes out; unguarded, that stopped the whole server.
        try:
            await server._handle_connection(stream)
        except* _PEER_GONE:
            pass

    async with trio.open_nursery() as nursery:
        await nursery.start(partial(trio.serve_listeners, on_stream, listeners, handler_nursery=nursery))
        task_status.started(listeners[0].socket.getsockname()[1])
