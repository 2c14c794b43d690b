"""`wildtable serve`: run the server headless until Ctrl-C or SIGTERM."""

from __future__ import annotations

import gc
import logging
import signal
import sys

import trio

from .app import Server
from .logwriter import StorageFailed


async def serve_until_signalled(server: Server, host: str, port: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(server.run, host, port)
            task_status.started(port)
            async for sig in signals:
                name = signal.Signals(sig).name
                logging.getLogger("wildtable.server").info("%s received", name)
                with trio.move_on_after(5):
                    await server.shutdown(f"server stopping ({name})")
                break


def _tune_gc() -> None:
    """Fewer, later cyclic collections: the server's steady state makes few cycles (states
    are tuples), and each gen-2 pass over a thousand connections' objects is a pause every
    player at the table waits through."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def main(args) -> int:
    logging.basicConfig(level=logging.INFO if not args.quiet else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(message)s")
    if not args.keep_finished >= 0:          # NaN too
        print("wildtable serve: --keep-finished wants seconds, 0 or more", file=sys.stderr)
        return 2
    if args.max_per_address < 0:
        print("wildtable serve: --max-per-address wants a count, 0 (no cap) or more", file=sys.stderr)
        return 2
    if args.max_handshakes < 1:
        print("wildtable serve: --max-handshakes wants a count, 1 or more", file=sys.stderr)
        return 2
    server = Server(args.data_dir, durability=args.durability, max_tables=args.max_tables,
                    keep_finished=args.keep_finished,
                    max_connections=args.max_connections, rate_limit=args.rate_limit,
                    rate_burst=max(args.rate_limit * 2, 10), max_per_address=args.max_per_address,
                    max_handshakes=args.max_handshakes, allow_origins=args.allow_origin)
    _tune_gc()
    failed: list[OSError] = []
    storage: list[StorageFailed] = []
    try:
        trio.run(serve_until_signalled, server, args.host, args.port)
    except* StorageFailed as group:
        storage.extend(_leaves(group))
    except* OSError as group:
        failed.extend(_leaves(group))
    if storage:
        print(f"wildtable serve: {storage[0]}; stopped. Every action it acknowledged is in the logs: make room "
              f"(or mend {args.data_dir}) and start it again to carry on", file=sys.stderr)
        return 1
    if failed:
        e = failed[0]
        print(f"wildtable serve: cannot listen on {args.host}:{args.port}: {e.strerror or e}"
              " (is another server running there? pick another --port)", file=sys.stderr)
        return 1
    return 0


def _leaves(group: BaseExceptionGroup) -> list:
    out = []
    for e in group.exceptions:
        out.extend(_leaves(e) if isinstance(e, BaseExceptionGroup) else [e])
    return out
