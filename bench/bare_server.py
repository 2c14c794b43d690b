"""The stack's own limit: a bare trio-websocket server doing only the fan-out that
wildtable's server does for one action (one reply to the sender, one update frame of the
same size to every seat of the table), with the same bounded outbox and writer task per
connection, and none of the game: no decoding beyond a msgpack header, no engine, no
log, no views. It accepts connections through server/wire.py, as wildtable does.

Two ways of writing, chosen by ``--writes``:
  per-frame  trio-websocket as its API offers it: one ``send_message`` per frame (the
             bare stack the benchmark's target is measured against);
  batched    what wildtable's writer does: every frame queued for a connection goes out
             in one socket write (``wire.Peer.send_many``). The same trick in the bare
             stack shows how much of what remains is the game's own cost.

    python bench/bare_server.py --port 0 --update-bytes 900 [--writes batched]
prints "serving on ws://127.0.0.1:PORT" on stderr.
"""

from __future__ import annotations

import argparse
import gc
import sys

import msgpack
import trio

from wildtable.server import wire

OUTBOX = 512


class Group:
    def __init__(self):
        self.members: dict[int, trio.MemorySendChannel] = {}
        self.seq = 0


async def main_async(args) -> None:
    groups: dict[int, Group] = {}
    pad = b"u" * max(0, args.update_bytes - 20)
    batched = args.writes == "batched"

    async def handler(peer: wire.Peer) -> None:
        send, recv = trio.open_memory_channel(OUTBOX)

        async def writer():
            if not batched:
                async for data in recv:
                    await peer.send(data)
                return
            # as server/connection.py's writer: what is queued goes out in one write
            async for data in recv:
                batch = [data]
                while len(batch) < 64:
                    try:
                        batch.append(recv.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                await peer.send_many(batch)

        async with trio.open_nursery() as n:
            n.start_soon(writer)
            try:
                hello = msgpack.unpackb(await peer.receive())
                g = groups.setdefault(hello["group"], Group())
                g.members[hello["seat"]] = send
                send.send_nowait(msgpack.packb({"ok": True}))
                while True:
                    msg = msgpack.unpackb(await peer.receive())
                    g.seq += 1
                    send.send_nowait(msgpack.packb({"id": msg["id"], "ack": g.seq}))
                    frame = msgpack.packb({"seq": g.seq, "pad": pad})
                    for ch in g.members.values():
                        ch.send_nowait(frame)
            except wire.ConnectionClosed:
                pass
            n.cancel_scope.cancel()

    async with trio.open_nursery() as n:
        port = await n.start(wire.serve, handler, args.host, args.port)
        print(f"serving on ws://{args.host}:{port}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--update-bytes", type=int, default=900)
    ap.add_argument("--writes", choices=("per-frame", "batched"), default="per-frame",
                    help="per-frame: one send_message per frame (default); batched: one write per drained outbox")
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
