"""The only client module that touches the WebSocket library."""

from __future__ import annotations

from contextlib import asynccontextmanager

import trio_websocket

ConnectionClosed = trio_websocket.ConnectionClosed
HandshakeError = trio_websocket.HandshakeError
ConnectionRejected = trio_websocket.ConnectionRejected     # the peer answered the handshake with HTTP, not 101
MAX_MESSAGE = 8 * 1024 * 1024


@asynccontextmanager
async def open_socket(url: str):
    async with trio_websocket.open_websocket_url(url, max_message_size=MAX_MESSAGE, connect_timeout=10,
                                                 disconnect_timeout=3) as ws:
        yield ws
