"""The two Sans-I/O WebSocket protocols the server could stand on, measured on the work
the server's reader does for every client message: feed the bytes of one masked client
frame, take the parsed event. Also one opening handshake each. Both libraries are
installed with wildtable (websockets for the server; wsproto under trio-websocket, which
the client uses), so this compares them in one run on one machine.

    python bench/ws_parse.py [--frames 20000] [--batch 1]

Prints microseconds per frame (lower is better) for a typical intent (~50 bytes) and a
4 kB message, and per handshake.
"""

from __future__ import annotations

import argparse
import base64
import os
import struct
import sys
import time

import msgpack
from websockets.server import ServerProtocol
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request


def masked(payload: bytes) -> bytes:
    key = os.urandom(4)
    n = len(payload)
    head = bytes([0x82]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack("!H", n))
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


REQUEST = (f"GET / HTTP/1.1\r\nHost: 127.0.0.1:8765\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


def open_websockets():
    p = ServerProtocol(max_size=65536)
    p.receive_data(REQUEST)
    p.send_response(p.accept(p.events_received()[0]))
    p.data_to_send()
    return p, p.events_received


def open_wsproto():
    c = WSConnection(ConnectionType.SERVER)
    c.receive_data(REQUEST)
    assert isinstance(next(c.events()), Request)
    c.send(AcceptConnection())
    return c, c.events


def per_frame(opener, frames: list[bytes], batch: int) -> float:
    conn, events = opener()
    t = time.perf_counter()
    got = 0
    for i in range(0, len(frames), batch):
        conn.receive_data(b"".join(frames[i:i + batch]) if batch > 1 else frames[i])
        for _ in events():
            got += 1
    dt = time.perf_counter() - t
    assert got == len(frames), (got, len(frames))
    return dt / len(frames) * 1e6


def per_handshake(opener, n: int = 2000) -> float:
    t = time.perf_counter()
    for _ in range(n):
        opener()
    return (time.perf_counter() - t) / n * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=1, help="frames per receive_data call (default 1, as one recv)")
    args = ap.parse_args(argv)
    intent = msgpack.packb({"type": "intent", "id": 17, "action": {"kind": "take", "meld": 3, "card": 41}})
    cases = {"intent (%d B)" % len(intent): [masked(intent) for _ in range(args.frames)],
             "4 kB": [masked(os.urandom(4096)) for _ in range(args.frames // 4)]}
    libs = {"websockets ServerProtocol": open_websockets, "wsproto WSConnection": open_wsproto}
    print(f"{'':<28}" + "".join(f"{c:>16}" for c in cases) + f"{'handshake':>12}   (us; lower is better)")
    for name, opener in libs.items():
        row = [per_frame(opener, frames, args.batch) for frames in cases.values()]
        print(f"{name:<28}" + "".join(f"{x:>16.2f}" for x in row) + f"{per_handshake(opener):>12.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
