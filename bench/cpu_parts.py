"""Where the server's CPU goes, part by part, per call and per intent (issue #25).

    python bench/cpu_parts.py [--tables 1000] [--pace 2] [--seconds 20] [--warmup 10] [--ramp 8]
    python bench/cpu_parts.py --tables 50 --pace 0      # flat out

Runs ``wildtable serve`` (durability always, fair order at the game's default, the caps
lifted as bench/load.py lifts them) in a child process of this script, drives it with
bench/loadgen.py and, over the measured window only, adds up the thread CPU time of:

- each task step of a connection's reader and of a table's arbiter (a Trio instrument);
- calls of the server's own parts: ``Arbiter.receive`` (fair order's hold, the rules,
  the records and outputs of a group), ``Sender.send`` (a group's delivery), within it
  ``UpdateFrames.frames`` (an update's patches) and ``Connection.send_frames`` (one
  socket's write), ``Peer._feed`` (parsing a read) and ``Table._facts``.

Prints, for each, the CPU per call, the calls per intent and the CPU per intent (the
intents the load generator counted in the same window). The wrappers cost a little
each (about a microsecond a call): compare runs of this script with each other, e.g. at
50 and at 1,000 tables, where the same part costs more when 1,000 tables' state no
longer stays in the CPU's caches (bench/README.md, "Where #25 stands, the tenth
session").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

# (bench/: the script's own folder is on the path)
from commit_path import child_bench, generator


def serve(out: str, argv: list[str]) -> int:
    """The child: the server with its counters, on from SIGUSR1 to SIGUSR2; the figures
    written to ``out`` at its exit."""
    import atexit
    from collections import Counter

    import trio

    from wildtable.cli import main as cli_main
    from wildtable.server import arbiter, connection, delivery, table, table_send, wire

    cpu: Counter = Counter()
    calls: Counter = Counter()
    on = [False]
    clock = time.thread_time

    def wrap(cls, name: str, label: str) -> None:
        inner = getattr(cls, name)

        def timed(*a, **k):
            if not on[0]:
                return inner(*a, **k)
            t = clock()
            try:
                return inner(*a, **k)
            finally:
                cpu[label] += clock() - t
                calls[label] += 1
        setattr(cls, name, timed)

    wrap(arbiter.Arbiter, "receive", "Arbiter.receive")
    wrap(table_send.Sender, "send", "Sender.send")
    wrap(delivery.UpdateFrames, "frames", "  UpdateFrames.frames")
    wrap(connection.Connection, "send_frames", "  Connection.send_frames")
    wrap(wire.Peer, "_feed", "Peer._feed")
    wrap(table.Table, "_facts", "Table._facts")

    steps = {"wildtable.server.listener._connection": "a reader's step", "wildtable.server.table.Table.run":
             "an arbiter's step"}

    class Steps(trio.abc.Instrument):
        started = 0.0

        def before_task_step(self, task) -> None:
            self.started = clock()

        def after_task_step(self, task) -> None:
            label = steps.get(task.name)
            if label is not None and on[0]:
                cpu[label] += clock() - self.started
                calls[label] += 1

    run = trio.run

    def run_with_steps(*a, **k):
        k.setdefault("instruments", []).append(Steps())
        return run(*a, **k)
    trio.run = run_with_steps

    def toggle(signum, frame) -> None:
        on[0] = signum == signal.SIGUSR1
    signal.signal(signal.SIGUSR1, toggle)
    signal.signal(signal.SIGUSR2, toggle)

    def dump() -> None:
        Path(out).write_text(json.dumps({k: [cpu[k], calls[k]] for k in cpu}))
    atexit.register(dump)
    return cli_main(argv)


def _drive(server: subprocess.Popen, url: str, args) -> str:
    """The load, with the child's clocks on over the measured window only."""
    gen = subprocess.Popen(generator(url, args), stdout=subprocess.PIPE, text=True)
    time.sleep(args.warmup)         # the generator counts intents sent from then on
    server.send_signal(signal.SIGUSR1)
    time.sleep(args.seconds)
    server.send_signal(signal.SIGUSR2)
    stdout, _ = gen.communicate(timeout=args.seconds + 120)
    if gen.returncode:
        raise SystemExit(f"the load generator failed ({gen.returncode})")
    return stdout


def main() -> None:
    args, result, figures = child_bench(__file__, __doc__, serve, _drive)
    intents = result["accepted"] + sum(result["rejected"].values())
    print(f"{args.tables} tables x 4 players, pace {args.pace:g} s: {intents / args.seconds:.0f} intents/s in the "
          f"measured window; load average {os.getloadavg()[0]:.1f}")
    print(f"{'thread CPU':28} {'us a call':>10} {'calls an intent':>16} {'us an intent':>13}")
    for label, (seconds, n) in sorted(figures.items(), key=lambda kv: -kv[1][0]):
        if n:
            print(f"{label:28} {seconds / n * 1e6:10.1f} {n / intents:16.2f} {seconds / intents * 1e6:13.1f}")


if __name__ == "__main__":
    main()
