"""The server's pauses under load: cyclic-GC passes and Trio loop stalls (issue #25).

    python bench/gc_pauses.py [--after 8] [--threshold N] [--stalls MS [--dump FILE]] -- serve --port 0 ...

Runs ``wildtable serve`` with the arguments after ``--`` in this process, with a
``gc.callbacks`` hook that times every collection (the thread's CPU time and the wall
clock); drive it with bench/loadgen.py (``--url`` from the "serving on" line). When
the server stops (SIGTERM), it prints each pass from ``--after`` seconds on (the
measured window: the tables opened and the players seated before it) and the totals.
``--threshold N`` runs it with ``gc.set_threshold(N, ...)`` instead of the server's own
(server/main.py ``_tune_gc``), to compare settings on the same code.

``--stalls MS`` also times the Trio loop (an instrument handed to ``trio.run``): every
batch of task steps between two waits on epoll that took MS or more of wall time is
printed with its CPU time, the GC passes inside it, its task steps over MS/4 and its
steps by task (the four tasks that took most of its CPU: how many steps, how much):
what held the one thread while every player's update waited; and every task step that took
MS/4 of CPU or more (a stall of the code's own, whatever the machine's load). With
``--dump FILE``, ``faulthandler`` (its own C thread, which needs no GIL, so it sees through a GC pass)
writes every thread's stack to FILE whenever a batch passes MS, and a line naming each
such batch follows when it ends (a batch barely over MS may have its line before its
dump): what the main thread was doing when the stall happened. (The arming costs a
thread start per batch: leave --dump off when timing the CPU.)
"""

from __future__ import annotations

import argparse
import atexit
import faulthandler
import gc
import os
import runpy
import sys
import time

import trio


class Stalls(trio.abc.Instrument):
    """Batches of task steps of ``ms`` or more; the GC passes and long steps inside them."""

    def __init__(self, ms: float, t0: float, dump: int | None):
        self.limit, self.t0, self.dump = ms / 1e3, t0, dump
        self.batch_t0 = self.batch_cpu = self.step_t0 = self.step_cpu = 0.0
        self.steps: list[tuple[str, float, float]] = []      # (task, wall s, CPU s)
        self.heavy: list[tuple[float, str, float]] = []      # every step of limit/4 or more of CPU: (at, task, CPU s)
        self.gc_in_batch: list[tuple[int, float]] = []
        self.seen: list[tuple[float, float, float, int, list, list]] = []   # at, wall, cpu, steps, gcs, long steps
        self.nsteps = 0
        self.batches = 0
        self.kinds: dict[str, list] = {}     # this batch's steps by task: name -> [steps, CPU s]

    def after_io_wait(self, timeout: float) -> None:
        self.batch_t0, self.batch_cpu = time.perf_counter(), time.thread_time()
        self.steps, self.gc_in_batch, self.nsteps, self.kinds = [], [], 0, {}
        if self.dump is not None:
            faulthandler.dump_traceback_later(self.limit, file=self.dump)

    def before_io_wait(self, timeout: float) -> None:
        if self.dump is not None:
            faulthandler.cancel_dump_traceback_later()
        self.batches += 1
        wall = time.perf_counter() - self.batch_t0
        if wall >= self.limit and self.batch_t0:
            at = self.batch_t0 - self.t0
            self.seen.append((at, wall, time.thread_time() - self.batch_cpu, self.nsteps, self.gc_in_batch,
                              self.steps, self.kinds))
            if self.dump is not None:
                os.write(self.dump, f"^^^ batch at {at:.3f} s: {wall * 1e3:.1f} ms\n".encode())

    def before_task_step(self, task) -> None:
        self.step_t0, self.step_cpu = time.perf_counter(), time.thread_time()

    def after_task_step(self, task) -> None:
        self.nsteps += 1
        took = time.perf_counter() - self.step_t0
        cpu = time.thread_time() - self.step_cpu
        kind = self.kinds.get(task.name)
        if kind is None:
            kind = self.kinds[task.name] = [0, 0.0]
        kind[0] += 1
        kind[1] += cpu
        if took >= self.limit / 4:
            self.steps.append((task.name, took, cpu))
            if cpu >= self.limit / 4:
                self.heavy.append((self.step_t0 - self.t0, task.name, cpu))


def main() -> None:
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--after", type=float, default=8.0, help="seconds after start before passes are counted (8)")
    ap.add_argument("--threshold", type=int, default=0, help="the young generation's threshold instead of the server's")
    ap.add_argument("--stalls", type=float, default=0.0, metavar="MS",
                    help="also print every batch of the Trio loop of MS or more (0: off)")
    ap.add_argument("--dump", default=None, metavar="FILE",
                    help="with --stalls: the main thread's stack, MS into each such batch, to FILE")
    args = ap.parse_args(argv[:cut])
    t0 = time.monotonic()
    passes: list[tuple[float, int, float, float, int, int]] = []   # (at, generation, cpu s, wall s, collected, young)
    began = [0.0, 0.0, 0]
    stalls: Stalls | None = None

    def hook(phase: str, info: dict) -> None:
        if phase == "start":
            began[0], began[1], began[2] = time.thread_time(), time.perf_counter(), gc.get_count()[0]
        else:
            cpu = time.thread_time() - began[0]
            passes.append((time.monotonic() - t0, info["generation"], cpu, time.perf_counter() - began[1],
                           info["collected"], began[2]))
            if stalls is not None:
                stalls.gc_in_batch.append((info["generation"], cpu))

    def report() -> None:
        seen = [p for p in passes if p[0] >= args.after]
        for at, gen, cpu, wall, collected, count in seen:
            sys.stderr.write(f"gc pass at {at:6.1f} s: generation {gen}, {cpu * 1e3:7.1f} ms CPU "
                             f"({wall * 1e3:.1f} ms wall), {collected} collected, young count {count}\n")
        cpu = sum(p[2] for p in seen)
        worst = max((p[2] for p in seen), default=0.0)
        span = (seen[-1][0] - args.after) if seen else 0.0
        sys.stderr.write(f"gc passes from {args.after:g} s on: {len(seen)}, {cpu * 1e3:.0f} ms CPU in all, the longest "
                         f"{worst * 1e3:.0f} ms (last at +{span:.0f} s); thresholds {gc.get_threshold()}\n")
        if stalls is None:
            return
        long = [s for s in stalls.seen if s[0] >= args.after]
        for at, wall, cpu, nsteps, gcs, steps, kinds in long:
            gc_text = ", ".join(f"gen {g} {c * 1e3:.1f} ms" for g, c in gcs) or "no GC"
            step_text = ", ".join(f"{name} {took * 1e3:.1f} ms ({cpu * 1e3:.1f} CPU)"
                                  for name, took, cpu in steps[:6]) or "none"
            by_task = ", ".join(f"{name.rsplit('.', 2)[-2:][0]}.{name.rsplit('.', 1)[-1]} {n} ({c * 1e3:.1f} ms)"
                                for name, (n, c) in sorted(kinds.items(), key=lambda kv: -kv[1][1])[:4])
            sys.stderr.write(f"stall at {at:6.1f} s: {wall * 1e3:6.1f} ms wall, {cpu * 1e3:6.1f} ms CPU, {nsteps} steps; "
                             f"{gc_text}; long steps: {step_text}; by task: {by_task}\n")
        sys.stderr.write(f"stalls of {args.stalls:g} ms or more from {args.after:g} s on: {len(long)} of "
                         f"{stalls.batches} batches\n")
        heavy = [h for h in stalls.heavy if h[0] >= args.after]
        for at, name, cpu in heavy:
            sys.stderr.write(f"heavy step at {at:6.1f} s: {name} {cpu * 1e3:.1f} ms CPU\n")
        sys.stderr.write(f"task steps of {args.stalls / 4:g} ms CPU or more from {args.after:g} s on: {len(heavy)}\n")

    gc.callbacks.append(hook)
    atexit.register(report)
    if args.threshold:
        chosen = args.threshold
        real = gc.set_threshold
        gc.set_threshold = lambda *_: real(chosen, 20, 100)     # type: ignore[assignment]  # the server's call
    if args.stalls:
        dump = os.open(args.dump, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if args.dump else None
        stalls = Stalls(args.stalls, time.perf_counter() - (time.monotonic() - t0), dump)
        real_run = trio.run

        def run(*a, **kw):
            kw["instruments"] = [*kw.get("instruments", ()), stalls]
            return real_run(*a, **kw)
        trio.run = run                                          # type: ignore[assignment]  # the server's call
    sys.argv = ["wildtable", *argv[cut + 1:]]
    runpy.run_module("wildtable", run_name="__main__")


if __name__ == "__main__":
    main()
