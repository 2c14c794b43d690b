"""What Linux's /proc says of a benchmark's processes (CPU, run-queue wait, memory,
moves between CPUs), and on which CPUs they may run (bench/load.py ``--pin``).

Why pinning matters here: on this 2-core machine the scheduler moves the server's one
busy thread between the cores, beside the load generator, and every move leaves the
thread's cache behind; at 1,000 tables the tables' state no longer fits in a core's
cache as it is (bench/README.md, "Where #25 stands, the tenth session"). A server
kept on a core of its own is how an operator runs it (systemd's ``CPUAffinity=``,
docs/OPERATING.md); bench/README.md, "A core of its own", has the figures."""

from __future__ import annotations

import os

CLK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / CLK


def cpu_wait_seconds(pid: int) -> float:
    """How long the process's main thread (the server's Trio loop, the generator's epoll
    loop) was runnable but waiting for a CPU: the run-queue delay of /proc/PID/schedstat
    (0 where the kernel does not keep it). A latency it explains is the machine's, not
    the code's."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def migrations(pid: int) -> int:
    """How many times the process's main thread was moved from one CPU to another
    (``se.nr_migrations`` of /proc/PID/sched; 0 where the kernel does not say)."""
    try:
        with open(f"/proc/{pid}/sched") as f:
            for line in f:
                if line.startswith("se.nr_migrations"):
                    return int(line.split(":")[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE


def split_cpus() -> tuple[set[int], set[int]]:
    """(the server's CPU, the others) among the CPUs this process may use: the server
    gets the last one, the load generators every other. SystemExit with one CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs two CPUs or more: one for the server, the rest for the load generators")
    return {cpus[-1]}, set(cpus[:-1])


def pin(pid: int, cpus: set[int]) -> None:
    """Keep every thread of ``pid`` on ``cpus`` (threads it starts later inherit it from
    their parent thread)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except ProcessLookupError:
            pass            # a thread that ended meanwhile
