"""server/wire.py writes frames itself (straight to the socket when it is free, else
through a backlog that its writer flushes). These tests hold it to RFC 6455 framing and
to order and integrity over a real socket, with the protocol's own frames (pongs to our
client's pings, the close) going out on the same connection."""

from __future__ import annotations

import os

import pytest
import trio
import wsproto.frame_protocol as fp

from wildtable.headless.wire import ConnectionClosed, open_socket
from wildtable.server import wire
from wildtable.server.framebudget import FrameRules


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70_000])
def test_frame_header_is_what_wsproto_writes(size):
    payload = os.urandom(size)
    proto = fp.FrameProtocol(client=False, extensions=[])
    expected = proto.send_data(payload, fin=True)
    assert wire.frame_header(size) + payload == expected


def _message(i: int, size: int) -> bytes:
    head = i.to_bytes(4, "big")
    return head + bytes([i % 251]) * (size - 4)


@pytest.mark.parametrize("batch", [1, 3])
async def test_backlog_keeps_order_and_frames_intact_with_pings_in_between(batch):
    """The server writes 400 messages of up to 200 kB without waiting, far more than the
    socket buffers hold, while the client is not reading and keeps pinging: every
    message must arrive whole and in order, and every ping be answered. With ``batch``
    3 they are written three at a time (``write_many``, as a table's delivery pass does),
    so a send the kernel takes only part of cuts somewhere inside a batch."""
    count = 400
    sizes = [10 + (i * 7919) % 200_000 for i in range(count)]
    written = trio.Event()
    backlog_seen = []

    async def handler(peer: wire.Peer):
        # far more than a connection's backlog caps (server/framebudget.py), which a Peer
        # served without a Connection holds too: lifted, this tests the frame order alone
        peer.budget(FrameRules(backlog_frames=10**6, backlog_bytes=1 << 40))
        bell_send, bell_recv = trio.open_memory_channel(1)

        async def writer():
            async for _ in bell_recv:
                await peer.flush()

        async with trio.open_nursery() as n:
            n.start_soon(writer)
            assert await peer.receive() == b"go"
            for i in range(0, count, batch):
                messages = [_message(k, sizes[k]) for k in range(i, min(count, i + batch))]
                if peer.write(messages[0]) if batch == 1 else peer.write_many(messages):
                    backlog_seen.append(peer.backlog)
                    try:
                        bell_send.send_nowait(None)
                    except trio.WouldBlock:
                        pass
                if i % 48 == 0:
                    await trio.sleep(0)          # let the writer and the pong replies run
            written.set()
            await peer.receive()                 # until the client says it is done
            n.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        port = await nursery.start(wire.serve, handler, "127.0.0.1", 0)
        async with open_socket(f"ws://127.0.0.1:{port}") as ws:
            await ws.send_message(b"go")
            with trio.fail_after(20):
                await written.wait()
            # the kernel could not take it all at once: the backlog was used
            assert backlog_seen and max(backlog_seen) > 1

            async def pinger():
                for _ in range(20):
                    await ws.ping()             # the server's pong joins the backlog in order

            async with trio.open_nursery() as n:
                n.start_soon(pinger)
                with trio.fail_after(20):
                    for i, size in enumerate(sizes):
                        got = await ws.get_message()
                        assert len(got) == size, (i, len(got), size)
                        assert got == _message(i, size), i
            await ws.send_message(b"done")
        nursery.cancel_scope.cancel()


async def test_close_after_backlog_sends_everything_then_the_close_frame():
    """A close taken while frames wait goes out after them (the close frame joins the
    backlog behind them)."""
    sizes = [150_000] * 30

    async def handler(peer: wire.Peer):
        assert await peer.receive() == b"go"
        for i, size in enumerate(sizes):
            peer.write(_message(i, size))
        assert peer.backlog > 0
        await peer.close(4000, "bye")

    async with trio.open_nursery() as nursery:
        port = await nursery.start(wire.serve, handler, "127.0.0.1", 0)
        async with open_socket(f"ws://127.0.0.1:{port}") as ws:
            await ws.send_message(b"go")
            with trio.fail_after(20):
                for i, size in enumerate(sizes):
                    assert await ws.get_message() == _message(i, size)
                with pytest.raises(ConnectionClosed) as info:
                    await ws.get_message()
            assert info.value.code == 4000
        nursery.cancel_scope.cancel()
