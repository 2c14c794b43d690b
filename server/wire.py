"""The only server module that touches the WebSocket library, so it can be measured and swapped."""

from __future__ import annotations

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
        r = ws.remote
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


async def serve(handler: Callable[[Peer], Awaitable[None]], host: str, port: int, *,
                task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Accept WebSockets forever; ``task_status.started`` gets the bound port."""

    async def on_request(request: trio_websocket.WebSocketRequest) -> None:
        ws = await request.accept()
        await handler(Peer(ws))

    async def _serve(task_status=trio.TASK_STATUS_IGNORED):
        await trio_websocket.serve_websocket(
            on_request, host, port, ssl_context=None, max_message_size=WS_MAX_MESSAGE,
            connect_timeout=10, disconnect_timeout=5, task_status=task_status,
        )

    async with trio.open_nursery() as nursery:
        server = await nursery.start(_serve)
        task_status.started(server.port)
