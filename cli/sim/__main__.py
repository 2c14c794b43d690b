"""``python -m wildtable.sim --seed N``: replay one run of the simulator exactly, and
say what it found; ``--seeds A:B`` runs a range."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Sequence

from .plant import planted
from .run import run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m wildtable.sim", description=__doc__)
    ap.add_argument("--seed", type=int, help="the seed of one run")
    ap.add_argument("--seeds", help="a range of seeds, A:B (B not included)")
    ap.add_argument("--plant", action="append", default=[], help="a test-only bug to plant (see tests/sim)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the trace as it runs")
    args = ap.parse_args(argv)
    ctx: contextlib.AbstractContextManager[None] = planted(*args.plant) if args.plant else contextlib.nullcontext()
    seeds: Sequence[int]
    if args.seed is not None:
        seeds = [args.seed]
    elif args.seeds:
        a, b = args.seeds.split(":")
        seeds = range(int(a), int(b))
    else:
        ap.error("give --seed N or --seeds A:B")
    bad = 0
    t0 = time.perf_counter()
    sim = 0.0
    with ctx:
        for seed in seeds:
            r = run(seed, set(args.plant), args.verbose)
            sim += r.sim_seconds
            if len(seeds) == 1 or not r.ok:
                print(f"seed {seed}: {r.sim_seconds:.1f} simulated s, seq {r.seq}, {r.crashes} crash(es), "
                      f"{r.cuts} cut(s), {r.disk_fulls} disk full(s) ({r.paused_heard} pause notices heard), "
                      f"{r.store_outages} store outage(s), "
                      f"{r.lost_bytes} log bytes lost, {r.events} events, trace {r.trace_hash[:16]}")
            for v in r.violations:
                print("  " + v)
            bad += not r.ok
    print(f"{len(seeds)} seed(s), {bad} failing, {sim / 3600:.2f} simulated hours in {time.perf_counter() - t0:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
