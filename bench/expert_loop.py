"""Does an expert bot hold the event loop while it thinks? The longest Trio task step while
four bots play Wild Shots in this process (issue 31).

    .venv/bin/python bench/expert_loop.py [--levels hard,expert] [--games 1] [--delay 0.05] [--seed 1] [--inline]

A server runs in this process (127.0.0.1, a free port, a temporary data dir), and four
bots (headless/bots.py) at the level measured play a whole game at it, every one a client
over a real WebSocket, all on this one Trio loop, as `wildtable play --bots 3` runs its
bots beside the player's keys. A Trio instrument times every task step: an expert's search
(about 6 ms of CPU a move, 14 ms p90) runs in a worker thread, so no step should last
that long. ``--delay`` is the bots' fixed reaction time (s). Per level it prints: the
moves, the task steps, their p99 and the longest (ms), and the game's wall time. No
figure is a test.
"""

from __future__ import annotations

import argparse
import logging
import random
import tempfile
import time

import trio

from wildtable.headless.bots import Bot
from wildtable.headless.net import connect
from wildtable.headless.tally import percentile
from wildtable.protocol import messages as m
from wildtable.server.app import Server
from wildtable.server.config import ServerConfig


class StepTimer(trio.abc.Instrument):
    """Every task step's duration (ms)."""

    def __init__(self) -> None:
        self.steps: list[float] = []
        self._t0: float | None = None     # None: the step that added the instrument, not timed

    def before_task_step(self, task) -> None:
        self._t0 = time.perf_counter()

    def after_task_step(self, task) -> None:
        if self._t0 is not None:
            self.steps.append((time.perf_counter() - self._t0) * 1000)
        self._t0 = None


async def one_game(url: str, level: str, delay: float, seed: int) -> int:
    async with connect(url, "host") as conn:
        await conn.send(m.CreateTable("wild-shots", 4, {}))
        created = await conn.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
        if isinstance(created, m.Error):
            raise RuntimeError(f"cannot create a table: {created.code}: {created.message}")
        bots = [Bot(url, created.table, f"{level}{i}", level=level, delay=delay, verbose=False,
                    rng=random.Random(seed * 10 + i)) for i in range(4)]
        async with trio.open_nursery() as nursery:
            for bot in bots:
                nursery.start_soon(bot.run)
    return sum(b.actions for b in bots)


async def run(args) -> None:
    logging.getLogger("wildtable.server").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="wildtable-bench-") as data_dir:
        server = Server(ServerConfig(data_dir=data_dir, durability="batch", max_per_address=0))
        async with trio.open_nursery() as nursery:
            port = await nursery.start(server.run, "127.0.0.1", 0)
            url = f"ws://127.0.0.1:{port}"
            print("level    moves  task steps  step p99 ms  longest step ms  game s")
            for level in args.levels.split(","):
                timer = StepTimer()
                trio.lowlevel.add_instrument(timer)
                t0 = time.monotonic()
                moves = 0
                for g in range(args.games):
                    moves += await one_game(url, level, args.delay, args.seed + g)
                trio.lowlevel.remove_instrument(timer)
                print(f"{level:<7}  {moves:<5}  {len(timer.steps):<10}  {percentile(timer.steps, 0.99):<11.2f}  "
                      f"{max(timer.steps):<15.2f}  {time.monotonic() - t0:.1f}")
            nursery.cancel_scope.cancel()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", default="hard,expert")
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--delay", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--inline", action="store_true",
                   help="for contrast: decide on the event loop, as a search without a worker thread would")
    args = p.parse_args()
    if args.inline:
        async def inline(self, plugin, view, refused=frozenset()):
            return self.choose(plugin, view, refused)
        Bot.decide = inline         # type: ignore[method-assign]
    trio.run(run, args)


if __name__ == "__main__":
    main()
