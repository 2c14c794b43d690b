"""The server's receive path alone: N intent-sized masked binary frames from the client's
end of a socket pair, one a read (as at flat out), through `wire.Peer.receive` (the
frame budget's check included, its limit lifted). Prints the CPU per message.

    python bench/ws_receive.py [--messages 80000]

Against another commit: its package first on PYTHONPATH (bench/README.md, issue #22).
"""

from __future__ import annotations

import argparse
import socket
import time

import trio
from websockets.server import ServerProtocol

from wildtable.server import wire

REQUEST = (b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
FRAME = bytes((0x82, 0x80 | 40)) + b"\0\0\0\0" + b"i" * 40      # masked with a zero key


async def run(count: int) -> float:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    theirs.setblocking(False)
    proto = ServerProtocol(max_size=65536)
    proto.receive_data(REQUEST)
    [request] = proto.events_received()
    proto.send_response(proto.accept(request))
    proto.data_to_send()
    peer = wire.Peer(ours, proto, "127.0.0.1", 1)
    if hasattr(peer, "budget"):         # a commit before the frame budget has none
        from wildtable.server.framebudget import FrameRules
        peer.budget(FrameRules(rate=1e12, burst=1e12))

    async def client() -> None:
        for _ in range(count):
            while True:
                try:
                    theirs.send(FRAME)
                    break
                except BlockingIOError:
                    await trio.lowlevel.wait_writable(theirs)
            await trio.lowlevel.checkpoint()

    start = time.process_time()
    async with trio.open_nursery() as n:
        n.start_soon(client)
        for _ in range(count):
            await peer.receive()
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=80_000)
    args = ap.parse_args()
    cpu = trio.run(run, args.messages)
    print(f"{args.messages} messages: {cpu:.3f} s CPU (both ends), {cpu / args.messages * 1e6:.2f} us a message")


if __name__ == "__main__":
    main()
