"""How much bench/engine.py's % of the floor moves with how its passes are timed, on the
same logs in one process.

    python bench/engine_noise.py [--game run-wild] [--logs 50] [--rounds 6]

Each round times the same selfplay logs (seed 1) twice, alternately: as bench/engine.py
timed them before 2026-12-06 (the best of 3 frames passes, then 3 decode passes, then 3
replay passes) and as it times them now (5 rounds of a frames, a decode and a replay pass
in turn, the best of each), and prints the % of the floor of each round both ways. The
code measured is the same every time: what moves is the instrument.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from wildtable.protocol.engine import games
from wildtable.protocol.logfmt import encode_record, read_log
from wildtable.protocol.replay import replay
from wildtable.selfplay import play

from engine import passes      # (bench/: the script's own folder is on the path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="run-wild")
    ap.add_argument("--logs", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args(argv)
    g = games()[args.game]
    rng = random.Random(1)
    logs = []
    for _ in range(args.logs):
        p = play(g, rng.randint(g.MIN_PLAYERS, g.MAX_PLAYERS), {}, rng=rng)
        logs.append(encode_record(p.header) + b"".join(encode_record(r) for r in p.records))
    records = sum(len(read_log(d).records) for d in logs)
    steps = 0
    for d in logs:
        res = replay(read_log(d))
        steps += res.actions + res.chances
    clock = time.process_time

    frames, decode, full = passes(g, logs)

    def in_blocks():
        best = []
        for fn in (frames, decode, full):
            b = float("inf")
            for _ in range(3):
                t0 = clock()
                fn()
                b = min(b, clock() - t0)
            best.append(b)
        return (steps / best[2]) / (records / best[0])

    def in_turn():
        best = [float("inf")] * 3
        for _ in range(5):
            for k, fn in enumerate((frames, decode, full)):
                t0 = clock()
                fn()
                best[k] = min(best[k], clock() - t0)
        return (steps / best[2]) / (records / best[0])

    blocks, turns = [], []
    for _ in range(args.rounds):
        blocks.append(in_blocks())
        turns.append(in_turn())
    for label, xs in (("3+3+3 passes in blocks (before)", blocks), ("5 rounds of passes in turn (now)", turns)):
        print(f"{args.game} {label}: {' '.join(f'{x:.1%}' for x in xs)}; median {statistics.median(xs):.1%}, "
              f"spread {max(xs) - min(xs):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
