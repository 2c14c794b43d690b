"""The only server module that touches the WebSocket library, so it can be measured and swapped."""

from __future__ import annotations

from functools import partial
from typing import Awaitable, Callable

import trio
import trio_websocket

# Frames bigger than this are refused by the WebSocket layer itself (close 1009);
# frames between the protocol's cap and this one get a readable error first.
WS_MAX_MESSAGE = 1024 * 1024

ConnectionClosed = trio_websocket.ConnectionClosed


class Peer:
    """One accepted WebSocket: bytes in, bytes out, pings, close."""

    __slots__ = ("_ws", "remote")

    def __init__(self, ws: trio_websocket.WebSocketConnection):
        self._ws = ws
        try:
            r = ws.remote
        except OSError:             # the peer is already gone (reset right after the handshake)
            r = "gone"
        self.remote = f"{r.address}:{r.port}" if hasattr(r, "address") else str(r)

    async def receive(self) -> bytes | str:
        return await self._ws.get_message()

    async def send(self, data: bytes) -> None:
        await self._ws.send_message(data)

    async def ping(self) -> None:
        await self._ws.ping()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        with trio.move_on_after(2) as scope:
            scope.shield = True
            await self._ws.aclose(code, reason[:120])

    @property
    def closed(self) -> bool:
        return self._ws.closed is not None


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
