"""A delaying TCP proxy on 127.0.0.1: each direction's bytes are forwarded a fixed time
after they were read, in order. What the server's WebSocket ping sees is the whole way,
delays included, as over a real network. What the kernel's own TCP round trip sees is
only the proxy's loopback hop (this machine's kernel has no netem to put the delay on
the wire), so the proxy stands for a network the way netem would: it connects to the
server from an address that says its delay (127.1.x.y, x * 256 + y tenths of a
millisecond), and ``kernel_delay`` (the server's ``kernel_delay``) adds that delay to the
kernel's measure, as the kernel would see it were the delay on the wire. The proxy
can also hold the client's pongs (``pong_hold``): a lying client, seen from the server.
Used by tests/server/test_fair_arbitration.py, test_fair_order_liars.py and bench/fairness.py.
"""

from __future__ import annotations

import math
from contextlib import asynccontextmanager

import trio

CHUNK = 65536
NEVER = float("inf")        # pong_hold: pongs never sent


def proxy_address(delay: float) -> str:
    """The loopback address a proxy of one-way ``delay`` (s) connects to the server from."""
    units = round(delay * 10_000)
    if not 0 <= units < 65536:
        raise ValueError(f"a proxy's delay is 0 to 6.5 s, not {delay!r}")
    return f"127.1.{units // 256}.{units % 256}"


def wire_delay(host: str) -> float:
    """The one-way delay a connection from ``host`` crossed: a proxy's, else 0."""
    parts = host.split(".")
    if len(parts) == 4 and parts[:2] == ["127", "1"]:
        return (int(parts[2]) * 256 + int(parts[3])) / 10_000
    return 0.0


def kernel_delay(peer) -> float | None:
    """The server's kernel bound as the kernel would measure it over the network the
    proxy stands for: its own measure of the loopback hop plus the proxy's delay."""
    from wildtable.server.connection import peer_kernel_delay
    k = peer_kernel_delay(peer)
    return None if k is None else k + wire_delay(peer.host)


class PongHolder:
    """Client-to-server bytes, parsed as WebSocket frames after the HTTP upgrade: each
    pong frame (opcode 0xA) is forwarded ``hold`` seconds later than the rest (NEVER:
    dropped), as a client that answers pings late would; everything else keeps its time."""

    def __init__(self, hold: float):
        self.hold = hold
        self.buf = b""
        self.upgraded = False

    def split(self, data: bytes) -> list[tuple[float, bytes]]:
        """(extra delay, bytes) pieces of what is whole so far."""
        self.buf += data
        out: list[tuple[float, bytes]] = []
        if not self.upgraded:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return out
            out.append((0.0, self.buf[:end + 4]))
            self.buf = self.buf[end + 4:]
            self.upgraded = True
        while len(self.buf) >= 2:
            b = self.buf
            n = b[1] & 0x7F
            head = 2 + (4 if b[1] & 0x80 else 0)
            if n == 126:
                if len(b) < 4:
                    break
                n, head = int.from_bytes(b[2:4], "big"), head + 2
            elif n == 127:
                if len(b) < 10:
                    break
                n, head = int.from_bytes(b[2:10], "big"), head + 8
            if len(b) < head + n:
                break
            frame, self.buf = b[:head + n], b[head + n:]
            if b[0] & 0x0F == 0xA:
                if self.hold != NEVER:
                    out.append((self.hold, frame))
            else:
                out.append((0.0, frame))
        return out


async def _pump(src: trio.SocketStream, dst: trio.SocketStream, delay: float, pongs: PongHolder | None = None) -> None:
    """Forward what ``src`` sends to ``dst``, each chunk ``delay`` seconds after it was
    read (a pong ``pongs.hold`` later still). Reading never waits for the delay, so a
    long delay does not slow the rate."""
    send, recv = trio.open_memory_channel(10_000)
    held: list = []            # (due, bytes) of pongs held, in order

    async def reader():
        async with send:
            while True:
                try:
                    data = await src.receive_some(CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if not data:
                    return
                now = trio.current_time()
                if pongs is None:
                    await send.send((now + delay, data))
                    continue
                for extra, piece in pongs.split(data):
                    if extra:
                        held.append((now + delay + extra, piece))
                    else:
                        await send.send((now + delay, piece))

    async def writer():
        # the next chunk goes out at its time; a held pong at its own, between chunks
        nxt = None
        async with recv:
            while True:
                if nxt is None:
                    with trio.move_on_at(held[0][0] if held else math.inf):
                        try:
                            nxt = await recv.receive()
                        except trio.EndOfChannel:
                            break
                now = trio.current_time()
                if held and held[0][0] <= now and (nxt is None or held[0][0] <= nxt[0]):
                    data = held.pop(0)[1]
                elif nxt is None:
                    continue
                elif nxt[0] > now:
                    await trio.sleep_until(min(nxt[0], held[0][0]) if held else nxt[0])
                    continue
                else:
                    data, nxt = nxt[1], None
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
    with ``delay`` seconds added each way (one-way delay; the round trip gains twice it),
    from the address that says the delay (``proxy_address``); the client's pongs are held
    ``pong_hold`` seconds more (NEVER: dropped)."""

    def __init__(self, target_port: int, delay: float, pong_hold: float = 0.0):
        self.target_port = target_port
        self.delay = delay
        self.pong_hold = pong_hold
        self.port = 0

    async def _handle(self, client: trio.SocketStream) -> None:
        try:
            upstream = await trio.open_tcp_stream("127.0.0.1", self.target_port,
                                                  local_address=proxy_address(self.delay))
        except OSError:
            await client.aclose()
            return
        pongs = PongHolder(self.pong_hold) if self.pong_hold else None
        async with client, upstream:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_pump, client, upstream, self.delay, pongs)
                nursery.start_soon(_pump, upstream, client, self.delay)

    async def run(self, port: int = 0, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Listen on ``port`` (0: a free one) until cancelled; started() with the port."""
        listeners = await trio.open_tcp_listeners(port, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            task_status.started(self.port)
            await trio.serve_listeners(self._handle, listeners, handler_nursery=nursery)


@asynccontextmanager
async def delayed(url: str, delay: float, pong_hold: float = 0.0):
    """A proxy in front of the server at ``url`` (ws://127.0.0.1:PORT) adding ``delay``
    seconds each way (and holding pongs ``pong_hold`` more); yields the proxy's URL. Its
    tasks end when the block does."""
    port = int(url.rsplit(":", 1)[1])
    proxy = DelayProxy(port, delay, pong_hold)
    async with trio.open_nursery() as nursery:
        proxy_port = await nursery.start(proxy.run)
        try:
            yield f"ws://127.0.0.1:{proxy_port}"
        finally:
            nursery.cancel_scope.cancel()
