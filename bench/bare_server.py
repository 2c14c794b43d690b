"""The stack's own limit: a bare trio-websocket server doing only the fan-out that
wildtable's server does for one action (one reply to the sender, one update frame of the
same size to every seat of the table), and none of the game: no decoding beyond a
msgpack header, no engine, no log, no views. ``per-frame`` and ``direct`` serve through
trio-websocket's own server (its public API: ``serve_websocket``); ``wire`` through
server/wire.py, as wildtable does.

Three ways of writing, chosen by ``--writes``:
  per-frame  trio-websocket as its API offers it: a bounded outbox per connection that
             its writer task drains with one ``send_message`` per frame;
  direct     the plainest fan-out: the receiving task itself awaits ``send_message``
             for the reply and for every seat's frame (no outbox, no writer task);
  wire       exactly as wildtable's server writes (server/wire.py): a frame goes to the
             socket at once when it is free, else waits in the peer's backlog, which the
             writer task flushes in one write when woken. With the same way of writing,
             the gap between this and wildtable is the game's own cost.

    python bench/bare_server.py --port 0 --update-bytes 900 [--writes wire]
prints "serving on ws://127.0.0.1:PORT" on stderr.
"""

from __future__ import annotations

import argparse
import gc
import sys
from functools import partial

import msgpack
import trio
import trio_websocket

from wildtable.server import wire
from wildtable.server.framebudget import FrameRules

OUTBOX = 512


class Group:
    def __init__(self):
        self.members: dict[int, object] = {}     # seat -> deliver(frame)
        self.seq = 0


async def main_async(args) -> None:
    groups: dict[int, Group] = {}
    pad = b"u" * max(0, args.update_bytes - 20)
    on_wire = args.writes == "wire"
    direct = args.writes == "direct"

    async def handler(peer: wire.Peer) -> None:
        if on_wire:
            # its players go flat out with no message rate limit to match: the frame
            # budget is checked (the cost stays in the figure) but never runs out
            peer.budget(FrameRules(rate=1e12, burst=1e12))
        # per-frame: the outbox holds messages; wire: a bell rung when frames wait
        send, recv = trio.open_memory_channel(1 if on_wire else OUTBOX)

        def deliver(data: bytes) -> None:
            if on_wire:
                if peer.write(data):
                    try:
                        send.send_nowait(None)
                    except trio.WouldBlock:
                        pass
            else:
                send.send_nowait(data)

        async def writer():
            async for data in recv:
                if on_wire:
                    await peer.flush()
                else:
                    await peer.send(data)

        async with trio.open_nursery() as n:
            n.start_soon(writer)
            try:
                hello = msgpack.unpackb(await peer.receive())
                g = groups.setdefault(hello["group"], Group())
                g.members[hello["seat"]] = peer if direct else deliver
                deliver(msgpack.packb({"ok": True}))
                while True:
                    msg = msgpack.unpackb(await peer.receive())
                    g.seq += 1
                    ack = msgpack.packb({"id": msg["id"], "ack": g.seq})
                    frame = msgpack.packb({"seq": g.seq, "pad": pad})
                    if direct:
                        # the plainest fan-out: the receiving task awaits each send itself
                        await peer.send(ack)
                        for member in list(g.members.values()):
                            try:
                                await member.send(frame)
                            except (wire.ConnectionClosed, trio_websocket.ConnectionClosed):
                                pass
                        continue
                    deliver(ack)
                    for member in g.members.values():
                        member(frame)
            except (wire.ConnectionClosed, trio_websocket.ConnectionClosed):
                pass
            n.cancel_scope.cancel()

    async def on_request(request: trio_websocket.WebSocketRequest) -> None:
        try:
            ws = await request.accept()
        except trio_websocket.ConnectionClosed:
            return
        try:
            await handler(_TrioWebSocketPeer(ws))
        except trio_websocket.ConnectionClosed:
            pass

    async with trio.open_nursery() as n:
        if on_wire:
            port = await n.start(partial(wire.serve, limits=wire.Limits(max_per_address=0, max_handshakes=100_000)),
                                 handler, args.host, args.port)
        else:
            server = await n.start(partial(trio_websocket.serve_websocket, on_request, args.host, args.port, None,
                                           max_message_size=1 << 20))
            port = server.port
        print(f"serving on ws://{args.host}:{port}", file=sys.stderr, flush=True)


class _TrioWebSocketPeer:
    """trio-websocket's connection with the two calls the handler uses."""

    def __init__(self, ws: trio_websocket.WebSocketConnection):
        self.receive, self.send = ws.get_message, ws.send_message


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--update-bytes", type=int, default=900)
    ap.add_argument("--writes", choices=("per-frame", "wire", "direct"), default="per-frame",
                    help="per-frame: one send_message per frame from a writer task (default); direct: the receiving "
                         "task awaits send_message itself; wire: as wildtable's server writes (server/wire.py)")
    args = ap.parse_args(argv)
    # the same collector settings as `wildtable serve` (server/main.py)
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        trio.run(main_async, args)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
