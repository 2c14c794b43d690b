"""The log writer writes every group in one thread of its own, kept for its whole run
and ended with it (issue #25; server/own_thread.py says why): never in the Trio thread,
never in Trio's thread cache; a job's error reaches its caller; a job handed over is
never abandoned: a caller cancelled meanwhile waits for its end and its result, and is
cancelled at its next checkpoint. Where there is an eventfd, the thread is woken through
it (rung without the GIL: server/own_thread.py says why), and it is closed with the
thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
import trio

from wildtable.server.logwriter import LogFile, LogWriter
from wildtable.server.own_thread import OwnThread, own_thread
from wildtable.server.world import OsDisk

from threadkit import ThreadsSeen


class _Watched(OsDisk):
    """The real disk, noting which thread each write runs in."""

    def __init__(self):
        super().__init__()
        self.seen = ThreadsSeen()

    def write(self, fd, data):
        self.seen.note()
        return super().write(fd, data)


async def test_every_group_is_written_in_the_writers_own_thread(tmp_path):
    disk = _Watched()
    writer = LogWriter(disk=disk)            # the defaults: durability always, its own thread
    logs = [LogFile.create(tmp_path / f"{i}.wlog", b"h\n") for i in range(3)]
    async with trio.open_nursery() as nursery:
        await nursery.start(writer.run)
        for round_ in range(4):
            async with trio.open_nursery() as commits:
                for log in logs:
                    commits.start_soon(writer.commit, log, b"r%d\n" % round_)
        writer.close()
    assert writer.groups >= 4 and len(disk.seen.threads) >= 4
    disk.seen.one_thread_of_its_own("wildtable-logs")      # ended with the writer's run
    for log in logs:
        assert log.path.read_bytes() == b"h\nr0\nr1\nr2\nr3\n"


async def test_a_jobs_error_is_raised_to_its_caller():
    async with own_thread() as run_sync:
        with pytest.raises(ZeroDivisionError):
            await run_sync(lambda: 1 / 0)
        assert await run_sync(lambda a, b: a + b, 2, 3) == 5     # and the thread goes on


async def test_a_job_handed_over_runs_to_its_end_when_its_caller_is_cancelled():
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def job():
        started.set()
        release.wait(30)
        ran.append("done")
        return "result"

    thread = OwnThread("test")
    scope = trio.CancelScope()
    result: list[str] = []

    async def cancel_once_started():
        await trio.to_thread.run_sync(started.wait, 30)
        scope.cancel()                       # the caller is cancelled mid-job ...
        await trio.testing.wait_all_tasks_blocked()
        assert ran == []                     # ... and still waits for it
        release.set()

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(cancel_once_started)
            with scope:
                result.append(await thread.run_sync(job))
                await trio.lowlevel.checkpoint()     # the cancel comes at the next checkpoint
        assert scope.cancelled_caught
        assert result == ["result"] and ran == ["done"]
    finally:
        release.set()
        await thread.stop()


async def test_jobs_run_one_after_another_in_the_order_given():
    seen: list[int] = []
    async with own_thread() as run_sync:
        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(run_sync, seen.append, i)
                await trio.testing.wait_all_tasks_blocked()    # each handed over before the next
    assert seen == list(range(20))


@pytest.mark.skipif(not hasattr(os, "eventfd"), reason="an eventfd: Linux")
async def test_each_job_rings_the_threads_eventfd_which_ends_with_it(monkeypatch):
    rung: list[int] = []
    ring = os.eventfd_write

    def noted(fd: int, value: int) -> None:
        rung.append(fd)
        ring(fd, value)

    monkeypatch.setattr(os, "eventfd_write", noted)
    async with own_thread() as run_sync:
        for i in range(5):
            assert await run_sync(lambda x: 2 * x, i) == 2 * i
    assert len(rung) == 6 and len(set(rung)) == 1      # five jobs and the stop, one eventfd
    if Path("/proc/self/fd").exists():      # closed with the thread (its number not an eventfd now)
        where = Path(f"/proc/self/fd/{rung[0]}")
        assert not where.exists() or os.readlink(where) != "anon_inode:[eventfd]"
