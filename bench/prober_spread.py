"""How spread fair order's pings stay (issue #25): the server's own Prober
(server/prober.py) pinging N connections every PROBE_EVERY seconds, on a simulated clock
whose every wake is late by a random 0 to --late seconds (a busy loop), for --seconds.
Prints, for the last 10 s of each span, how many wakes sent pings and the most pings one
wake sent: the burst a busy server sends (and then reads the pongs of) in one go.

    python bench/prober_spread.py [--conns 4000] [--late 0.04] [--spans 40,120,300] [--seed 1]

Run with another checkout's Python (its venv) for the code before a change: it uses only
``Prober``'s public methods."""

from __future__ import annotations

import argparse
import random
import sys

from wildtable.server.connection import PROBE_EVERY
from wildtable.server.prober import Prober


class Conn:
    __slots__ = ("pings",)

    def __init__(self):
        self.pings: list[float] = []

    def probe_due(self, now: float) -> float:
        self.pings.append(now)
        return now + PROBE_EVERY


def run(conns: int, late: float, seconds: float, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    t = [0.0]
    p = Prober(clock=lambda: t[0])
    cs = [Conn() for _ in range(conns)]
    for c in cs:
        p.watch(c, rng.uniform(0.0, 8.0))       # seated over an 8 s ramp, as bench/load.py's
    wakes: dict[float, int] = {}
    while t[0] < seconds:
        # (the Prober before this bench had no next_due: its heap's first entry)
        due = p.next_due() if hasattr(p, "next_due") else p._heap[0][0]
        t[0] = due + rng.uniform(0.0, late)
        n = sum(len(c.pings) for c in cs) if t[0] > seconds - 10 else 0
        while p.run_due(t[0]):
            pass
        if t[0] > seconds - 10:
            wakes[t[0]] = sum(len(c.pings) for c in cs) - n
    return len(wakes), max(wakes.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conns", type=int, default=4000)
    ap.add_argument("--late", type=float, default=0.04, help="each wake late by up to this (s)")
    ap.add_argument("--spans", default="40,120,300", help="seconds of simulated time, comma-separated")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"{args.conns} connections pinged every {PROBE_EVERY:g} s, each wake late by 0-{args.late * 1000:.0f} ms:")
    for span in (float(s) for s in args.spans.split(",")):
        wakes, most = run(args.conns, args.late, span, args.seed)
        print(f"  after {span:5.0f} s: the last 10 s had {wakes:4d} wakes sending pings, at most {most:5d} pings in one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
