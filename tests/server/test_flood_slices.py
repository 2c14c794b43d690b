"""The reader parses a read in bounded slices (docs/PROTOCOL.md, "Connection lifetime" 5;
docs/ARCHITECTURE.md, "The WebSocket layer"): other tasks run between two slices of one
64 KiB read, and a receive cancelled between slices loses none of what was read. Against
wire.Peer itself, on a socket pair, so what is measured is the parsing and nothing else."""

from __future__ import annotations

import socket

import trio
from websockets.server import ServerProtocol

from wildtable.server import wire
from wildtable.server.framebudget import FEED_SLICE, FrameRules

from hostilekit import OP_PING, client_frame

REQUEST = (b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


def opened_peer() -> tuple[wire.Peer, socket.socket]:
    """A Peer past its handshake on one end of a socket pair (its frame budget lifted:
    these tests are about slicing), and the other end, the client's."""
    ours, theirs = socket.socketpair()
    for s in (ours, theirs):
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    proto = ServerProtocol(max_size=65536)
    proto.receive_data(REQUEST)
    [request] = proto.events_received()
    proto.send_response(proto.accept(request))
    proto.data_to_send()
    peer = wire.Peer(ours, proto, "127.0.0.1", 1)
    peer.budget(FrameRules(rate=1e9, burst=1e9))
    return peer, theirs


def binary(payload: bytes) -> bytes:
    return bytes((0x82, 0x80 | 126)) + len(payload).to_bytes(2, "big") + b"\0\0\0\0" + payload


async def test_other_tasks_run_between_the_slices_of_one_read():
    """64 KiB of empty pings (10,922 frames) then a message, in one read: while the peer
    parses it, a task that counts its turns gets one at each slice (32), not one in all."""
    peer, client = opened_peer()
    ping = client_frame(OP_PING, b"", mask=b"\0\0\0\0")
    flood = ping * (65536 // len(ping))
    client.sendall(flood[:65536 - 1000] + binary(b"m" * 994)[:1000])
    turns = 0

    async def ticker() -> None:
        nonlocal turns
        while True:
            turns += 1
            await trio.lowlevel.checkpoint()

    with trio.fail_after(10):
        async with trio.open_nursery() as n:
            n.start_soon(ticker)
            await trio.lowlevel.checkpoint()
            start = turns
            client.sendall(binary(b"m" * 994)[1000:])
            assert await peer.receive() == b"m" * 994
            n.cancel_scope.cancel()
    assert turns - start >= 65536 // FEED_SLICE - 2, f"{turns - start} turns for the other task in a 64 KiB read"
    client.close()


async def test_a_receive_cancelled_between_slices_loses_nothing():
    """Ten 1,000-byte messages in one read (five slices): a receive cancelled at its first
    checkpoint keeps the rest of the read; the next receives return all ten, in order."""
    peer, client = opened_peer()
    messages = [bytes([i]) * 1000 for i in range(10)]
    client.sendall(b"".join(binary(x) for x in messages))
    with trio.CancelScope() as scope:
        scope.cancel()
        await peer.receive()
    got = []
    with trio.fail_after(5):
        while len(got) < 10:
            got.append(await peer.receive())
    assert got == messages
    client.close()
