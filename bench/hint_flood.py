"""Does asking hint after hint slow everyone else's table? (server/hints.py)

    python bench/hint_flood.py [--flooders 2] [--tables 250] [--pace 2] [--seconds 20] [--repeat 2]

Runs ``wildtable serve`` (this checkout's) under bench/loadgen.py's load (Run Wild tables
of 4 bots, an action every ``--pace`` s each), twice a repeat: alone, then with
``--flooders`` clients beside it, each seated at a Wild Shots table of its own (four
connections, so the game deals) and asking ``hint`` at the seat whose turn it is again
and again, one at a time, as fast as the answers come (what the protocol allows: one
hint per connection under way). Prints the load's last-update p50 / p99 / max and
accepted intents/s for each, and the hints answered. Each run gets its own server and
temporary data dir.
"""

from __future__ import annotations

import argparse
import sys
import time

import trio

from beside_load import beside_load, load_args, row    # (bench/: the script's own folder is on the path)

from wildtable.headless.net import connect
from wildtable.protocol import messages as m


async def hint_flooder(url: str, k: int, seconds: float, times: list[float]) -> None:
    conns = []
    try:
        for i in range(4):
            cm = connect(url, f"hints{k}-{i}")
            conns.append((cm, await cm.__aenter__()))
        first = conns[0][1]
        await first.send(m.CreateTable("wild-shots", 4, {"first_player": 0}))
        table = (await first.receive_until(lambda x: isinstance(x, m.TableCreated))).table
        for i, (_, c) in enumerate(conns):
            await c.send(m.Join(table, i))
            await c.receive_until(lambda x: isinstance(x, m.Joined))
        turn = None
        while turn is None:             # the deal: the update that names whose turn it is
            turn = (await first.receive_until(lambda x: isinstance(x, m.Update))).view.get("turn")
        me = conns[turn][1]
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            t0 = time.perf_counter()
            await me.send(m.Hint())
            got = await me.receive_until(lambda x: isinstance(x, (m.HintGiven, m.Error)))
            if isinstance(got, m.HintGiven):
                times.append(time.perf_counter() - t0)
    finally:
        for cm, _ in reversed(conns):
            await cm.__aexit__(None, None, None)


def _flood(url: str, flooders: int, seconds: float) -> list[float]:
    times: list[float] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for k in range(flooders):
                nursery.start_soon(hint_flooder, url, k, seconds, times)
    trio.run(main)
    return times


def run(args, flooders: int) -> dict:
    load, times, _ = beside_load(args, lambda url: _flood(url, flooders, args.warmup + args.seconds) if flooders else [])
    return {"flooders": flooders, **load, "hints": len(times), "hint_mean_ms": 1000 * sum(times) / max(1, len(times))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flooders", type=int, default=2, help="clients asking hint after hint (2)")
    load_args(ap)
    args = ap.parse_args(argv)
    print(f"{args.tables} tables x 4 players at pace {args.pace:g} s, {args.seconds:g} s measured; "
          "last-update p50 / p99 / max ms, accepted intents/s, hints answered (mean ms)")
    for _ in range(args.repeat):
        for k in (0, args.flooders):
            r = run(args, k)
            print(row(f"{k} flooders", r, f"  {r['hints']} hints ({r['hint_mean_ms']:.1f} ms)" if k else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
