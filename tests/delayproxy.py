"""A delaying TCP proxy on 127.0.0.1: each direction's bytes are forwarded a fixed time
after they were read, in order. What the kernel's own TCP round trip sees is the
proxy's loopback hop; what the server's WebSocket ping sees is the whole way, delays
included, as over a real network (this machine's kernel has no netem to make the
kernel see a delay). Used by tests/server/test_fair_arbitration.py and bench/fairness.py.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import trio

CHUNK = 65536


async def _pump(src: trio.SocketStream, dst: trio.SocketStream, delay: float) -> None:
    """Forward what ``src`` sends to ``dst``, each chunk ``delay`` seconds after it was
    read. Reading never waits for the delay, so a long delay does not slow the rate."""
    send, recv = trio.open_memory_channel(10_000)

    async def reader():
        async with send:
            while True:
                try:
                    data = await src.receive_some(CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if not data:
                    return
                await send.send((trio.current_time() + delay, data))

    async def writer():
        async with recv:
            async for due, data in recv:
                await trio.sleep_until(due)
                try:
                    await dst.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
        try:
            await dst.send_eof()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        nursery.start_soon(writer)


class DelayProxy:
    """Listens on 127.0.0.1 (``port``); every connection is forwarded to ``target_port``
    with ``delay`` seconds added each way (one-way delay; the round trip gains twice it)."""

    def __init__(self, target_port: int, delay: float):
        self.target_port = target_port
        self.delay = delay
        self.port = 0

    async def _handle(self, client: trio.SocketStream) -> None:
        try:
            upstream = await trio.open_tcp_stream("127.0.0.1", self.target_port)
        except OSError:
            await client.aclose()
            return
        async with client, upstream:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_pump, client, upstream, self.delay)
                nursery.start_soon(_pump, upstream, client, self.delay)

    async def run(self, port: int = 0, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Listen on ``port`` (0: a free one) until cancelled; started() with the port."""
        listeners = await trio.open_tcp_listeners(port, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            task_status.started(self.port)
            await trio.serve_listeners(self._handle, listeners, handler_nursery=nursery)


@asynccontextmanager
async def delayed(url: str, delay: float):
    """A proxy in front of the server at ``url`` (ws://127.0.0.1:PORT) adding ``delay``
    seconds each way; yields the proxy's URL. Its tasks end when the block does."""
    port = int(url.rsplit(":", 1)[1])
    proxy = DelayProxy(port, delay)
    async with trio.open_nursery() as nursery:
        proxy_port = await nursery.start(proxy.run)
        try:
            yield f"ws://127.0.0.1:{proxy_port}"
        finally:
            nursery.cancel_scope.cancel()
