"""A worker thread's job runs on the CPU the Trio thread was on when it handed it over
(issue #25; server/affinity.py says why; bench/README.md, "Worker threads beside the Trio
thread", has the figures), through the world's seam the log writer uses, and the Trio
thread itself is left free to move.

The Trio thread is moved from CPU to CPU here by hand (its affinity set to one CPU, then
given back): each job must follow it, in a worker thread made before the move (a thread
made after it would inherit the Trio thread's affinity anyway)."""

from __future__ import annotations

import os

import pytest
import trio

from wildtable.server import affinity
from wildtable.server.logwriter import LogFile, LogWriter
from wildtable.server.world import OsDisk, RealWorld

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
pytestmark = pytest.mark.skipif(len(CPUS) < 2 or affinity.current_cpu() < 0,
                                reason="needs sched_getcpu and two CPUs to move between")


def _where() -> tuple[set[int], int]:
    """(this thread's affinity, the CPU it runs on)."""
    return os.sched_getaffinity(0), affinity.current_cpu()


async def test_each_job_runs_on_the_cpu_the_trio_thread_was_on():
    world = RealWorld()
    mine = os.sched_getaffinity(0)
    await world.run_sync(_where)              # a worker thread made while nothing is pinned
    try:
        for cpu in CPUS[:4] + CPUS[:1]:
            os.sched_setaffinity(0, {cpu})    # the Trio thread moves to ``cpu``
            allowed, on = await world.run_sync(_where)
            assert allowed == {cpu}
            assert on == cpu
            assert os.sched_getaffinity(0) == {cpu}     # the Trio thread's own, as it was set
    finally:
        os.sched_setaffinity(0, mine)
    assert os.sched_getaffinity(0) == mine


async def test_the_trio_thread_is_left_free_to_move():
    mine = os.sched_getaffinity(0)
    for _ in range(3):
        await RealWorld().run_sync(_where)
    assert os.sched_getaffinity(0) == mine


async def test_the_log_writers_groups_follow_the_trio_thread(tmp_path):
    """A log group's write and fsync (server/logwriter.py), in the writer's own thread
    (server/own_thread.py), is such a job."""
    mine = os.sched_getaffinity(0)
    seen: list[tuple[set[int], int]] = []

    class Watched(OsDisk):
        def write(self, fd, data):
            seen.append(_where())
            return super().write(fd, data)

    writer = LogWriter("always", disk=Watched())
    log = LogFile.create(tmp_path / "t.wlog", b"header\n")
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        await writer.commit(log, b"one\n")        # the writer's thread made while nothing is pinned
        try:
            cpu = CPUS[-1]
            os.sched_setaffinity(0, {cpu})
            seen.clear()
            await writer.commit(log, b"two\n")
        finally:
            os.sched_setaffinity(0, mine)
        writer.close()
    assert seen and seen[0] == ({cpu}, cpu)
    assert (tmp_path / "t.wlog").read_bytes() == b"header\none\ntwo\n"
