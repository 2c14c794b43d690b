"""The well-behaved player of steadykit.steady_player, in a process of its own, so that
an attack driven from the test process does not share its event loop: what it measures
is the server. Prints "seated" once at its table, then "calm [latencies]" once it has
played steadykit.CALM intents before any attack (steadykit.p99_bound); on "stop" (or the end of stdin) prints
what it measured as one JSON line and exits.

    python tests/steady_main.py URL [PACE] [MIN_INTENTS]
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from steadykit import CALM, PACE, Steady, _run_wild_pair  # noqa: E402


async def main(url: str, pace: float, min_intents: int) -> None:
    stats = Steady()
    stdin = trio.lowlevel.FdStream(0)
    failures: list[str] = []
    gc.collect()
    gc.freeze()
    async with _run_wild_pair(url, "steady", pace, stats, 5.0) as (table, stop, failed):
        print("seated", flush=True)
        with trio.move_on_after(5.0 + CALM * pace * 4):
            while len(stats.latencies) < CALM and not stop.is_set():
                await trio.sleep(pace)
        print("calm", json.dumps(stats.latencies), flush=True)
        stats.sent -= len(stats.latencies)
        del stats.latencies[:]
        buf = b""
        while b"\n" not in buf:
            chunk = await stdin.receive_some(100)
            if not chunk:
                break
            buf += chunk
        with trio.move_on_after(5.0 + min_intents * pace * 4):
            while len(stats.latencies) < min_intents and not stop.is_set():
                await trio.sleep(pace)
        failures = [repr(e) for e in failed]
    print(json.dumps({"latencies": stats.latencies, "unanswered": stats.unanswered, "sent": stats.sent,
                      "failed": failures}), flush=True)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else PACE,
             int(sys.argv[3]) if len(sys.argv) > 3 else 10)
