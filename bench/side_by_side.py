"""Two servers' CPU an intent, side by side at once: the server of tree A and that of tree
B (two checkouts, each with its own venv in TREE/.venv), each driven by its own
bench/loadgen.py at the same load, the CPU of each over the same measured window over
the intents it answered. On a machine whose speed drifts by a fifth from minute to
minute (bench/README.md, "Where #25 stands"), runs one after another cannot show a
change of a few percent; two servers measured over the same seconds can.

    python bench/side_by_side.py /path/to/old-tree /path/to/new-tree --runs 4
    python bench/side_by_side.py A B --tables 250 --pace 2 --seconds 15 --warmup 6

Prints each run's figures and the median difference (B against A). Each server gets a
temporary data dir, removed after its run; both are stopped (SIGTERM) after each run.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

from load import LOAD_CAPS, start, stop    # (bench/: the script's own folder is on the path)
from procs import cpu_seconds

LOADGEN = Path(__file__).resolve().parent / "loadgen.py"


def serve_command(tree: str, data: Path) -> list[str]:
    """`wildtable serve` of ``tree`` (its venv) at serve's defaults but for the limits a load
    generator on one address needs."""
    return [f"{tree}/.venv/bin/python", "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data),
            *LOAD_CAPS]


def one_run(args, run: int) -> dict[str, int]:
    """CPU an intent (us) of each server over one window."""
    with tempfile.TemporaryDirectory(prefix="side-by-side-") as tmp:
        servers: dict[str, tuple[subprocess.Popen, str]] = {}
        try:
            for k, tree in (("a", args.a), ("b", args.b)):
                # (its log in a file: a pipe nobody reads would stall a server that logs much)
                servers[k] = start(serve_command(tree, Path(tmp) / k), Path(tmp) / f"{k}.log")
            gens = {k: subprocess.Popen(
                [sys.executable, str(LOADGEN), "--url", url, "--tables", str(args.tables),
                 "--pace", str(args.pace), "--seconds", str(args.seconds), "--warmup", str(args.warmup),
                 "--ramp", str(args.ramp), "--seed", str(7 + run)], stdout=subprocess.PIPE, text=True)
                for k, (_, url) in servers.items()}
            time.sleep(args.warmup + 0.5)
            c0 = {k: cpu_seconds(p.pid) for k, (p, _) in servers.items()}
            t0 = time.monotonic()
            time.sleep(args.seconds - 1.0)
            c1 = {k: cpu_seconds(p.pid) for k, (p, _) in servers.items()}
            t1 = time.monotonic()
            out = {}
            for k, g in gens.items():
                got = json.loads(g.communicate()[0])
                rate = (got["accepted"] + sum(got["rejected"].values())) / got["elapsed"]
                out[k] = round((c1[k] - c0[k]) / (t1 - t0) / rate * 1e6)
            return out
        finally:
            for p, _ in servers.values():
                stop(p)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="tree A (a checkout with its venv in A/.venv)")
    ap.add_argument("b", help="tree B")
    ap.add_argument("--tables", type=int, default=250, help="Run Wild tables of 4 bots each server gets (250)")
    ap.add_argument("--pace", type=float, default=2, help="seconds between one player's actions (2)")
    ap.add_argument("--seconds", type=float, default=15, help="measured seconds a run (15)")
    ap.add_argument("--warmup", type=float, default=6, help="seconds before measuring (6)")
    ap.add_argument("--ramp", type=float, default=3, help="seconds over which tables open (3)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    res: dict[str, list[int]] = {"a": [], "b": []}
    for run in range(args.runs):
        got = one_run(args, run)
        for k in res:
            res[k].append(got[k])
        print(f"run {run + 1}: A {got['a']} us an intent, B {got['b']} us ({(got['b'] / got['a'] - 1) * 100:+.1f}%), "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
    diffs = [b / a - 1 for a, b in zip(res["a"], res["b"])]
    print(f"A {res['a']}  B {res['b']}  median B against A {statistics.median(diffs) * 100:+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
