"""The server's cyclic-GC passes under load: how often, how long (issue #25).

    python bench/gc_pauses.py [--after 8] [--threshold N] -- serve --port 0 --data-dir D ...

Runs ``wildtable serve`` with the arguments after ``--`` in this process, with a
``gc.callbacks`` hook that times every collection (the thread's CPU time and the wall
clock); drive it with bench/loadgen.py (``--url`` from the "serving on" line). When
the server stops (SIGTERM), it prints each pass from ``--after`` seconds on (the
measured window: the tables opened and the players seated before it) and the totals.
``--threshold N`` runs it with ``gc.set_threshold(N, ...)`` instead of the server's own
(server/main.py ``_tune_gc``), to compare settings on the same code.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import runpy
import sys
import time


def main() -> None:
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--after", type=float, default=8.0, help="seconds after start before passes are counted (8)")
    ap.add_argument("--threshold", type=int, default=0, help="the young generation's threshold instead of the server's")
    args = ap.parse_args(argv[:cut])
    t0 = time.monotonic()
    passes: list[tuple[float, int, float, float, int]] = []     # (at, generation, cpu s, wall s, collected)
    began = [0.0, 0.0]

    def hook(phase: str, info: dict) -> None:
        if phase == "start":
            began[0], began[1] = time.thread_time(), time.perf_counter()
        else:
            passes.append((time.monotonic() - t0, info["generation"], time.thread_time() - began[0],
                           time.perf_counter() - began[1], info["collected"]))

    def report() -> None:
        seen = [p for p in passes if p[0] >= args.after]
        for at, gen, cpu, wall, collected in seen:
            sys.stderr.write(f"gc pass at {at:6.1f} s: generation {gen}, {cpu * 1e3:7.1f} ms CPU "
                             f"({wall * 1e3:.1f} ms wall), {collected} collected\n")
        cpu = sum(p[2] for p in seen)
        worst = max((p[2] for p in seen), default=0.0)
        span = (seen[-1][0] - args.after) if seen else 0.0
        sys.stderr.write(f"gc passes from {args.after:g} s on: {len(seen)}, {cpu * 1e3:.0f} ms CPU in all, the longest "
                         f"{worst * 1e3:.0f} ms (last at +{span:.0f} s); thresholds {gc.get_threshold()}\n")

    gc.callbacks.append(hook)
    atexit.register(report)
    if args.threshold:
        chosen = args.threshold
        real = gc.set_threshold
        gc.set_threshold = lambda *_: real(chosen, 20, 100)     # type: ignore[assignment]  # the server's call
    sys.argv = ["wildtable", *argv[cut + 1:]]
    runpy.run_module("wildtable", run_name="__main__")


if __name__ == "__main__":
    main()
