"""Where an intent waits inside the server, from its read to its delivery (issue #25).

    python bench/commit_path.py [--tables 1000] [--pace 2] [--seconds 20] [--warmup 10] [--ramp 8]

Runs ``wildtable serve`` (durability always, fair order at the game's default, the caps
lifted as bench/load.py lifts them) in a child process of this script with clocks on
the commit path, drives it with bench/loadgen.py, stops it with SIGTERM and prints, in
ms (mean, p50, p90, p99, max), for every intent or group of the whole run:

- ``take``: from its read (its connection's reader) to its arbiter taking it;
- ``commit``: an arbiter's wait for a durable group (from handing its records over to
  running again), made of
  - ``queued``: until the log writer takes it into a group,
  - ``writer_step`` (a group): from handing the group to the worker thread to the
    writer running again with it written (``thread``: the thread's own part),
  - ``ack_to_resume``: from the acknowledgment to the arbiter running again;
- ``batch``: the Trio loop's batches of task steps between two waits on epoll.

The clocks wrap the server's own methods (Table._batch, LogWriter._done, _ack,
_write_once, _write_group) and add an instrument to ``trio.run``: the figures are a
little higher than without them; compare commits with this script, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from load import LOAD_CAPS, start, stop    # (bench/: the script's own folder is on the path)

HERE = Path(__file__).resolve().parent
PARTS = ("take", "commit", "queued", "writer_step", "thread", "ack_to_resume", "batch")


def serve(out: str, argv: list[str]) -> int:
    """The child: the server with its clocks; the figures written to ``out`` at its exit."""
    import atexit

    import trio

    from wildtable.cli import main as cli_main
    from wildtable.server import arbiter_io, logwriter, table

    seen: dict[str, list[float]] = {k: [] for k in PARTS}
    handed: dict[int, float] = {}
    acked: dict[int, float] = {}
    now = trio.current_time

    batch = table.Table._batch

    def _batch(self, item):
        b = batch(self, item)
        t = now()
        seen["take"].extend(t - r.at for r in b if type(r) is arbiter_io.IntentReq)
        return b

    done, ack = logwriter.LogWriter._done, logwriter.LogWriter._ack

    async def _done(self, c):
        t0 = handed[id(c)] = now()
        await done(self, c)
        t1 = now()
        seen["commit"].append(t1 - t0)
        a = acked.pop(id(c), None)
        if a is not None:
            seen["ack_to_resume"].append(t1 - a)

    def _ack(self, c, written=True):
        acked[id(c)] = now()
        return ack(self, c, written)

    write_once, write_group = logwriter.LogWriter._write_once, logwriter.LogWriter._write_group

    async def _write_once(self, group, *a):
        t0 = now()
        for c in group:
            h = handed.pop(id(c), None)
            if h is not None:
                seen["queued"].append(t0 - h)
        await write_once(self, group, *a)
        seen["writer_step"].append(now() - t0)

    def _write_group(self, *a):
        t0 = time.perf_counter()
        try:
            return write_group(self, *a)
        finally:
            seen["thread"].append(time.perf_counter() - t0)

    table.Table._batch = _batch
    logwriter.LogWriter._done, logwriter.LogWriter._ack = _done, _ack
    logwriter.LogWriter._write_once, logwriter.LogWriter._write_group = _write_once, _write_group

    class Batches(trio.abc.Instrument):
        began: float | None = None

        def after_io_wait(self, timeout: float) -> None:
            self.began = time.perf_counter()

        def before_io_wait(self, timeout: float) -> None:
            if self.began is not None:
                seen["batch"].append(time.perf_counter() - self.began)

    run = trio.run

    def with_clock(*a, **k):
        k.setdefault("instruments", []).append(Batches())
        return run(*a, **k)
    trio.run = with_clock

    def dump() -> None:
        figures = {}
        for k, v in seen.items():
            v.sort()
            n = len(v)
            if n:
                figures[k] = {"n": n, "mean": sum(v) / n * 1e3, "p50": v[n // 2] * 1e3, "p90": v[int(n * 0.9)] * 1e3,
                              "p99": v[int(n * 0.99)] * 1e3, "max": v[-1] * 1e3}
        Path(out).write_text(json.dumps(figures))
    atexit.register(dump)
    return cli_main(argv)


def start_child(script: str, out: Path, tmp: Path) -> tuple[subprocess.Popen, str]:
    """``script``'s child (``script --serve-into out serve ...``): ``wildtable serve`` with
    durability always and the caps lifted as bench/load.py lifts them, its data dir and
    log in ``tmp``; (process, URL) once it serves (bench/cpu_parts.py too). Stop it with
    load.stop: SIGTERM, so that it writes its figures as it exits."""
    return start([sys.executable, script, "--serve-into", str(out), "serve", "--port", "0", "--data-dir",
                  str(tmp / "data"), "--durability", "always", *LOAD_CAPS], tmp / "serve.log")


def load_options(ap: argparse.ArgumentParser) -> None:
    """The load's options (bench/cpu_parts.py too): 4,000 players by default."""
    ap.add_argument("--tables", type=int, default=1000, help="Run Wild tables of 4 bots (1000: 4,000 players)")
    ap.add_argument("--pace", type=float, default=2.0, help="seconds between one player's actions (2; 0: flat out)")
    ap.add_argument("--seconds", type=float, default=20.0, help="the measured window (20)")
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds before it (10)")
    ap.add_argument("--ramp", type=float, default=8.0, help="seconds over which tables open (8)")


def generator(url: str, args: argparse.Namespace) -> list[str]:
    """bench/loadgen.py's command for that load on the server at ``url``."""
    return [sys.executable, str(HERE / "loadgen.py"), "--url", url, "--tables", str(args.tables), "--pace",
            str(args.pace), "--seconds", str(args.seconds), "--warmup", str(args.warmup), "--ramp", str(args.ramp),
            "--seed", "7"]


def child_bench(script: str, doc: str | None, serve_into, drive) -> tuple[argparse.Namespace, dict, dict]:
    """A benchmark whose server is its own child (bench/cpu_parts.py too): run as
    ``script --serve-into OUT serve ...``, the child (``serve_into(OUT, argv)``); else the
    load's options parsed, the child started, ``drive(server, url, args)`` (the load
    generator's output: its JSON) and the child stopped; (args, the generator's result,
    the figures the child wrote as it exited)."""
    if len(sys.argv) > 2 and sys.argv[1] == "--serve-into":
        sys.exit(serve_into(sys.argv[2], sys.argv[3:]))
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    load_options(ap)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"{Path(script).stem}-") as tmp:
        out = Path(tmp) / "figures.json"
        server, url = start_child(script, out, Path(tmp))
        try:
            stdout = drive(server, url, args)
        finally:
            stop(server)
        return args, json.loads(stdout), json.loads(out.read_text())


def main() -> None:
    args, result, figures = child_bench(__file__, __doc__, serve, lambda server, url, args: subprocess.run(
        generator(url, args), capture_output=True, text=True, check=True).stdout)
    print(f"{args.tables} tables x 4 players, pace {args.pace:g} s: {result['accepted'] / result['elapsed']:.0f} "
          f"intents/s in the measured window; load average {os.getloadavg()[0]:.1f}")
    print(f"{'ms':14} {'n':>7} {'mean':>7} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    for k in PARTS:
        f = figures.get(k)
        if f:
            print(f"{k:14} {f['n']:7d} {f['mean']:7.2f} {f['p50']:7.2f} {f['p90']:7.2f} {f['p99']:7.2f} {f['max']:7.1f}")


if __name__ == "__main__":
    main()
