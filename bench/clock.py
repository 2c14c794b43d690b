"""The cost of the server's waits through its world's clock (server/world.py, Clock)
against Trio's functions called directly: the real clock IS Trio's functions, so the
difference is one attribute lookup a wait (docs/ARCHITECTURE.md, "Simulation").

    .venv/bin/python bench/clock.py [--n 200000]

Prints ns per wait for each way, best of 5 rounds (process CPU time). The waits are the
ones on the server's paths: a deadline scope entered and left without waiting (the
table's arbiter around its inbox, per request) and a zero sleep (a checkpoint).
"""

from __future__ import annotations

import argparse
import math
import time

import trio

from wildtable.server.world import RealWorld


class _Holder:
    def __init__(self):
        self.world = RealWorld.__new__(RealWorld)      # (no disk: only its clock is used)


async def _rounds(n: int) -> dict[str, float]:
    holder = _Holder()
    inf = math.inf

    async def direct_scope():
        for _ in range(n):
            with trio.move_on_at(inf):  # noqa: ASYNC100 (the scope's own cost is measured)
                pass

    async def world_scope():
        for _ in range(n):
            with holder.world.clock.move_on_at(inf):
                pass

    async def direct_sleep():
        for _ in range(n):
            await trio.sleep(0)  # noqa: ASYNC115 (the sleep's own cost is measured)

    async def world_sleep():
        for _ in range(n):
            await holder.world.clock.sleep(0)

    best: dict[str, float] = {}
    for _ in range(5):
        for name, fn in (("move_on_at: trio", direct_scope), ("move_on_at: world.clock", world_scope),
                         ("sleep(0): trio", direct_sleep), ("sleep(0): world.clock", world_sleep)):
            t0 = time.process_time()
            await fn()
            ns = (time.process_time() - t0) / n * 1e9
            best[name] = min(best.get(name, math.inf), ns)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    args = ap.parse_args()
    best = trio.run(_rounds, args.n)
    for name, ns in best.items():
        print(f"{name:26s} {ns:8.1f} ns")


if __name__ == "__main__":
    main()
