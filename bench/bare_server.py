"""The stack's own limit: a bare trio-websocket server doing only the fan-out that
wildtable's server does for one action (one reply to the sender, one update frame of the
same size to every seat of the table), with the same per-connection outbox and writer
task, and none of the game: no decoding beyond a msgpack header, no engine, no log.

    python bench/bare_server.py --port 0 --update-bytes 900
prints "serving on ws://127.0.0.1:PORT" on stderr.
"""

from __future__ import annotations

import argparse
import sys

import msgpack
import trio
import trio_websocket

OUTBOX = 512


class Group:
    def __init__(self):
        self.members: dict[int, trio.MemorySendChannel] = {}
        self.seq = 0


async def main_async(args) -> None:
    groups: dict[int, Group] = {}
    pad = b"u" * max(0, args.update_bytes - 20)

    async def handler(request):
        ws = await request.accept()
        send, recv = trio.open_memory_channel(OUTBOX)

        async def writer():
            async for data in recv:
                await ws.send_message(data)

        async with trio.open_nursery() as n:
            n.start_soon(writer)
            try:
                hello = msgpack.unpackb(await ws.get_message())
                g = groups.setdefault(hello["group"], Group())
                g.members[hello["seat"]] = send
                send.send_nowait(msgpack.packb({"ok": True}))
                while True:
                    msg = msgpack.unpackb(await ws.get_message())
                    g.seq += 1
                    send.send_nowait(msgpack.packb({"id": msg["id"], "ack": g.seq}))
                    frame = msgpack.packb({"seq": g.seq, "pad": pad})
                    for ch in g.members.values():
                        ch.send_nowait(frame)
            except trio_websocket.ConnectionClosed:
                pass
            n.cancel_scope.cancel()

    async with trio.open_nursery() as n:
        server = await n.start(lambda task_status: trio_websocket.serve_websocket(
            handler, args.host, args.port, ssl_context=None, task_status=task_status))
        print(f"serving on ws://{args.host}:{server.port}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--update-bytes", type=int, default=900)
    args = ap.parse_args(argv)
    try:
        trio.run(main_async, args)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
